/* test_record_fields.c - the table of rt_record's figures (analysis/record_fields.c): every double
 * of the record is one row, in the struct's order; a row's store column is its own and carries
 * its name, and the columns the table lacks are the store's own (a sample member, an energy
 * method); the statistics' folds are as many as their state holds, each into its own member; a
 * folding row's summary key and history column are the ones summary.c and the runs table use. */
#include "unit.h"

#include "analysis/record_fields.h"
#include "sink/sink.h"
#include "store/store.h"
#include "resource_tracker.h"

static void rows_are_the_doubles_in_order(void **state)
{
    (void)state;
    /* with record_fields.c's static assertion (the rows and the pointers fill the struct):
     * offsets rising and apart by a double at least mean each double is a row once */
    for (size_t i = 0; i < rt_record_field_count; i++) {
        const rt_record_field *f = &rt_record_fields[i];
        assert_true(f->off + sizeof(double) <= sizeof(rt_record));
        assert_int_equal(f->off % sizeof(double), 0);
        if (i > 0 && f->off < rt_record_fields[i - 1].off + sizeof(double))
            fail_msg("row %s is not after %s", f->name, rt_record_fields[i - 1].name);
        if (f->from == RT_RF_MADE)
            assert_true(f->div == 0 && f->src_off == 0);
    }
    assert_int_equal(rt_record_fields[0].off, offsetof(rt_record, timestamp_secs));
}

static void columns_are_the_rows_and_the_stores_own(void **state)
{
    (void)state;
    bool seen[RT_NCOLS] = {false};
    size_t with_col = 0;
    for (size_t i = 0; i < rt_record_field_count; i++) {
        const rt_record_field *f = &rt_record_fields[i];
        if (f->col < 0)
            continue;
        assert_true(f->col < RT_NCOLS);
        if (seen[f->col])
            fail_msg("column %d is two rows' (%s)", f->col, f->name);
        seen[f->col] = true;
        with_col++;
        assert_string_equal(rt_column_name(f->col), f->name);
        assert_null(rt_column_field(f->col));
    }
    int own = 0;
    for (int c = 0; c < RT_NCOLS; c++)
        if (!seen[c]) {
            own++;
            if (!rt_column_field(c) && c != RT_COL_ENERGY_METHOD && c != RT_COL_PROC_ENERGY_METHOD)
                fail_msg("column %s has no source", rt_column_name(c));
        }
    assert_int_equal(with_col + (size_t)own, RT_NCOLS);
}

static void folds_fit_the_statistics(void **state)
{
    (void)state;
    int dist = 0, total = 0;
    for (size_t i = 0; i < rt_record_field_count; i++) {
        const rt_record_field *f = &rt_record_fields[i];
        if (f->fold == RT_FOLD_NONE) {
            assert_int_equal(f->sum_off, 0);
            continue;
        }
        bool is_dist = f->fold == RT_FOLD_LEVEL || f->fold == RT_FOLD_RATE;
        dist += is_dist;
        total += f->fold == RT_FOLD_TOTAL;
        assert_true(f->sum_off + (is_dist ? sizeof(rt_dist) : sizeof(double)) <= sizeof(rt_summary));
        for (size_t j = 0; j < i; j++)
            if (rt_record_fields[j].fold != RT_FOLD_NONE && rt_record_fields[j].sum_off == f->sum_off)
                fail_msg("%s and %s fold into one member", rt_record_fields[j].name, f->name);
    }
    /* record_fields.h counts them for the statistics' state: the compiler's count is the walk's */
    assert_int_equal(dist, RT_RECORD_NDIST);
    assert_int_equal(total, RT_RECORD_NTOTAL);
}

/* The history's column of rt_summary's member at off (a distribution's _mean at its mean), or NULL. */
static const char *history_column_at(size_t off)
{
    const rt_history_column *cols = rt_history_columns();
    for (size_t i = 0; i < RT_HISTORY_NCOLS; i++)
        if (cols[i].src == RT_HISTORY_FROM_SUMMARY && cols[i].off == off)
            return cols[i].name;
    return NULL;
}

/* Each folding row names its summary key and history column: summary.c's member tables write its
 * rt_summary member under that key, the history's runs table keeps it in that column (a
 * distribution's four, _mean first); a row naming none is in neither. */
static void rows_name_their_summary_key_and_history_column(void **state)
{
    (void)state;
    size_t named = 0;
    for (size_t i = 0; i < rt_record_field_count; i++) {
        const rt_record_field *f = &rt_record_fields[i];
        if (f->fold == RT_FOLD_NONE) {
            if (f->json || f->history)
                fail_msg("%s folds into nothing but names a summary key or a history column", f->name);
            continue;
        }
        char key[96];
        size_t n = rt_summary_json_key(f->sum_off, key, sizeof key);
        if (f->json && (n == 0 || strcmp(key, f->json) != 0))
            fail_msg("%s names the summary key %s, summary.c writes its member as %s", f->name, f->json,
                     n ? key : "nothing");
        if (!f->json && n)
            fail_msg("%s names no summary key, summary.c writes its member as %s", f->name, key);
        bool is_dist = f->fold == RT_FOLD_LEVEL || f->fold == RT_FOLD_RATE;
        const char *col = history_column_at(f->sum_off + (is_dist ? offsetof(rt_dist, mean) : 0));
        char want[96];
        if (f->history)
            snprintf(want, sizeof want, is_dist ? "%s_mean" : "%s", f->history);
        if (f->history ? !col || strcmp(col, want) != 0 : col != NULL)
            fail_msg("%s names the history column %s, the runs table has %s", f->name,
                     f->history ? want : "none", col ? col : "none");
        named += f->json != NULL;
    }
    assert_true(named > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_are_the_doubles_in_order),
        cmocka_unit_test(columns_are_the_rows_and_the_stores_own),
        cmocka_unit_test(folds_fit_the_statistics),
        cmocka_unit_test(rows_name_their_summary_key_and_history_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
