/* test_record_fields.c - the table of rt_record's figures (analysis/record_fields.c): every double
 * of the record is one row, in the struct's order; a row's store column is its own and carries
 * its name, and the columns the table lacks are the store's own (a sample member, an energy
 * method); the statistics' folds are as many as their state holds, each into its own member. */
#include "unit.h"

#include "analysis/record_fields.h"
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
    assert_int_equal(dist, RT_RECORD_NDIST);
    assert_int_equal(total, RT_RECORD_NTOTAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_are_the_doubles_in_order),
        cmocka_unit_test(columns_are_the_rows_and_the_stores_own),
        cmocka_unit_test(folds_fit_the_statistics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
