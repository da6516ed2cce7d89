/* test_phase.c - the phases' core: the rule for a name (UTF-8, no control characters, 1..255
 * bytes), phases matched by name (nesting, overlap, the most recent instance of a name closed
 * first), every refusal counted (unknown stop, bad name, too many names, too deep, a full
 * queue), and the pipeline's carriage of marks: the marks go with the next sample and record to
 * every sink and are let go after, the open phases ride on every sample, a run without marks
 * carries none, a record read back keeps its own, a short caller's record has none, and the
 * phases still open at the end count as unterminated. */
#include "unit.h"

#include <math.h>

#include "../tools/synthetic.h"
#include "phase/phase.h"

static bool ok(const char *s)
{
    return rt_phase_name_ok(s, strlen(s));
}

static void names(void **state)
{
    (void)state;
    assert_true(ok("train"));
    assert_true(ok("load data (part 2)")); /* spaces are allowed */
    assert_true(ok("été"));
    assert_true(ok("\xf0\x9f\x9a\x80")); /* a four-byte character */
    assert_false(ok(""));
    assert_false(ok("a\tb"));
    assert_false(ok("a\nb"));
    assert_false(ok("a\x7f"));
    assert_false(ok("\xc2\x85"));         /* C1 control (NEL) */
    assert_false(ok("\xc0\xaf"));         /* overlong */
    assert_false(ok("\xed\xa0\x80"));     /* a surrogate */
    assert_false(ok("\xe2\x82"));         /* cut short */
    assert_false(ok("\xff"));
    assert_false(ok("\xf4\x90\x80\x80")); /* past U+10FFFF */
    char big[300];
    memset(big, 'x', sizeof big);
    assert_true(rt_phase_name_ok(big, 255));
    assert_false(rt_phase_name_ok(big, 256));
    assert_false(rt_phase_name_ok(NULL, 0));
}

static rt_phase_mark mark(int kind, const char *name, double t)
{
    rt_phase_mark m = RT_PHASE_MARK_INIT;
    m.kind = kind;
    m.name = name;
    m.timestamp_secs = t;
    m.pid = 42;
    return m;
}

static rt_error put(rt_phase_state *st, int kind, const char *name)
{
    rt_phase_mark m = mark(kind, name, 1.0);
    return rt_phase_state_mark(st, &m);
}

static void matched_by_name(void **state)
{
    (void)state;
    rt_phase_state *st = rt_phase_state_new();
    assert_null(rt_phase_state_view(st)); /* no mark: nothing to carry */
    assert_int_equal(put(st, RT_PHASE_START, "outer"), RT_OK);
    assert_int_equal(put(st, RT_PHASE_START, "inner"), RT_OK);
    assert_int_equal(put(st, RT_PHASE_START, "outer"), RT_OK); /* the same name within itself */
    const rt_phases *ph = rt_phase_state_view(st);
    assert_non_null(ph);
    assert_int_equal(ph->open_count, 3);
    assert_string_equal(ph->open[0], "outer");
    assert_string_equal(ph->open[1], "inner");
    assert_string_equal(ph->open[2], "outer");
    assert_ptr_equal(ph->open[0], ph->open[2]); /* interned */
    assert_int_equal(ph->mark_count, 3);
    assert_int_equal(ph->marks[1]->kind, RT_PHASE_START);
    assert_string_equal(ph->marks[1]->name, "inner");
    assert_int_equal(ph->marks[1]->pid, 42);
    assert_true(isnan(ph->marks[1]->cpu_secs_total));

    /* inner closes; then the most recent outer; the first outer stays open */
    assert_int_equal(put(st, RT_PHASE_STOP, "inner"), RT_OK);
    assert_int_equal(put(st, RT_PHASE_STOP, "outer"), RT_OK);
    ph = rt_phase_state_view(st);
    assert_int_equal(ph->open_count, 1);
    assert_string_equal(ph->open[0], "outer");
    assert_int_equal(ph->mark_count, 5);

    /* a stop of nothing open, a bad name, a bad kind: refused and counted, nothing changes */
    assert_int_equal(put(st, RT_PHASE_STOP, "inner"), RT_ERR_INVALID);
    assert_int_equal(put(st, RT_PHASE_STOP, "never"), RT_ERR_INVALID);
    assert_int_equal(put(st, RT_PHASE_START, "bad\nname"), RT_ERR_INVALID);
    assert_int_equal(put(st, 7, "x"), RT_ERR_INVALID);
    rt_phase_mark tiny = mark(RT_PHASE_START, "x", 1);
    tiny.struct_size = 2;
    assert_int_equal(rt_phase_state_mark(st, &tiny), RT_ERR_INVALID);
    const rt_phase_counts *c = rt_phase_state_counts(st);
    assert_int_equal(c->accepted, 5);
    assert_int_equal(c->unknown_stop, 2);
    assert_int_equal(c->malformed, 3);
    assert_int_equal(rt_phase_state_view(st)->mark_count, 5);

    rt_phase_state_carried(st); /* the sample went: the marks with it, the open phase stays */
    ph = rt_phase_state_view(st);
    assert_int_equal(ph->mark_count, 0);
    assert_int_equal(ph->open_count, 1);
    rt_phase_state_end(st);
    assert_int_equal(c->unterminated, 1);

    rt_phase_state_refused(st, RT_PHASE_REFUSED_FLOOD, 40);
    rt_phase_state_refused(st, RT_PHASE_REFUSED_TOO_LONG, 2);
    rt_phase_state_refused(st, RT_PHASE_REFUSED_CONNECTION, 1);
    assert_int_equal(c->flood, 40);
    assert_int_equal(c->too_long, 2);
    assert_int_equal(c->refused, 1);
    rt_phase_state_free(st);

    /* a refusal alone makes the run carry its counts (no phase, but the counts to report) */
    st = rt_phase_state_new();
    rt_phase_state_refused(st, RT_PHASE_REFUSED_MALFORMED, 1);
    ph = rt_phase_state_view(st);
    assert_non_null(ph);
    assert_int_equal(ph->counts->malformed, 1);
    rt_phase_state_free(st);
}

static void caps(void **state)
{
    (void)state;
    rt_phase_state *st = rt_phase_state_new();
    char name[32];
    for (int i = 0; i < RT_PHASE_MAX_NAMES; i++) { /* every name once: open and close it */
        snprintf(name, sizeof name, "n%d", i);
        assert_int_equal(put(st, RT_PHASE_START, name), RT_OK);
        assert_int_equal(put(st, RT_PHASE_STOP, name), RT_OK);
        if (i % 1000 == 999)
            rt_phase_state_carried(st);
    }
    assert_int_equal(put(st, RT_PHASE_START, "one too many"), RT_ERR_NOMEM);
    assert_int_equal(put(st, RT_PHASE_START, "n7"), RT_OK); /* a known name still opens */
    assert_int_equal(put(st, RT_PHASE_STOP, "n7"), RT_OK);
    assert_int_equal(rt_phase_state_counts(st)->too_many_names, 1);
    rt_phase_state_carried(st);

    for (int i = 0; i < RT_PHASE_MAX_OPEN; i++)
        assert_int_equal(put(st, RT_PHASE_START, "n1"), RT_OK);
    assert_int_equal(put(st, RT_PHASE_START, "n2"), RT_ERR_NOMEM);
    assert_int_equal(rt_phase_state_counts(st)->too_deep, 1);
    assert_int_equal(rt_phase_state_view(st)->open_count, RT_PHASE_MAX_OPEN);
    for (int i = 0; i < RT_PHASE_MAX_OPEN; i++)
        assert_int_equal(put(st, RT_PHASE_STOP, "n1"), RT_OK);
    rt_phase_state_carried(st);

    /* at most RT_PHASE_MAX_PENDING marks wait for one sample; the rest are dropped */
    for (int i = 0; i < RT_PHASE_MAX_PENDING / 2; i++) {
        assert_int_equal(put(st, RT_PHASE_START, "n3"), RT_OK);
        assert_int_equal(put(st, RT_PHASE_STOP, "n3"), RT_OK);
    }
    assert_int_equal(put(st, RT_PHASE_START, "n3"), RT_ERR_NOMEM);
    assert_int_equal(rt_phase_state_counts(st)->dropped, 1);
    const rt_phases *ph = rt_phase_state_view(st);
    assert_int_equal(ph->mark_count, RT_PHASE_MAX_PENDING);
    assert_int_equal(ph->open_count, 0);
    rt_phase_state_free(st);
}

/* ---- the pipeline's carriage ---- */

typedef struct seen {
    int adds;
    size_t marks[8], open[8]; /* per add: the marks and open phases the sample carried */
    bool rec_same[8];         /* the record carried the same */
    bool none[8];             /* the sample carried no phases */
    char last_open[64];
} seen;

static rt_error seen_add(void *self, const rt_sample *s, const rt_record *rec)
{
    seen *z = self;
    int i = z->adds++;
    const rt_phases *ph = s ? s->phases : rec->phases;
    z->none[i] = ph == NULL;
    z->rec_same[i] = rec && rec->phases == ph;
    if (ph) {
        z->marks[i] = ph->mark_count;
        z->open[i] = ph->open_count;
        snprintf(z->last_open, sizeof z->last_open, "%s", ph->open_count ? ph->open[ph->open_count - 1] : "");
    }
    return RT_OK;
}

static void carriage(void **state)
{
    (void)state;
    make_full();
    seen z = {0};
    rt_sink_ops ops = RT_SINK_OPS_INIT;
    ops.add = seen_add;
    ops.reads_record = 1;
    rt_sink *sink = NULL;
    assert_int_equal(rt_sink_new(&ops, &z, &sink), RT_OK);
    rt_pipeline *p = NULL;
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, sink), RT_OK);

    assert_int_equal(rt_pipeline_add(p, &full), RT_OK); /* no mark yet: no phases */
    assert_true(z.none[0]);
    assert_null(full.phases); /* the caller's sample is never changed */

    rt_phase_mark m = mark(RT_PHASE_START, "load", 10);
    assert_int_equal(rt_pipeline_mark(p, &m), RT_OK);
    m = mark(RT_PHASE_STOP, "load", 11);
    assert_int_equal(rt_pipeline_mark(p, &m), RT_OK);
    m = mark(RT_PHASE_START, "train", 11.5);
    assert_int_equal(rt_pipeline_mark(p, &m), RT_OK);
    assert_int_equal(rt_pipeline_add(p, &full), RT_OK);
    assert_false(z.none[1]);
    assert_int_equal(z.marks[1], 3);
    assert_int_equal(z.open[1], 1);
    assert_true(z.rec_same[1]);
    assert_string_equal(z.last_open, "train");

    assert_int_equal(rt_pipeline_add(p, &full), RT_OK); /* the marks went; train is still open */
    assert_int_equal(z.marks[2], 0);
    assert_int_equal(z.open[2], 1);

    /* a record read back keeps its own phases; a caller's record too short for them has none */
    rt_record rec;
    rt_record_from_sample(&full, &rec);
    rt_phases mine = {0};
    rec.phases = &mine;
    assert_int_equal(rt_pipeline_add_record(p, &rec, sizeof rec), RT_OK);
    assert_true(z.rec_same[3] || z.marks[3] == 0);
    assert_false(z.none[3]);
    assert_int_equal(rt_pipeline_add_record(p, &rec, offsetof(rt_record, phases)), RT_OK);
    assert_true(z.none[4]);

    m = mark(RT_PHASE_STOP, "nothing", 12);
    assert_int_equal(rt_pipeline_mark(p, &m), RT_ERR_INVALID);
    rt_pipeline_mark_refused(p, RT_PHASE_REFUSED_FLOOD, 3);
    rt_run_end end = RT_RUN_END_INIT;
    rt_pipeline_finish(p, &end);
    assert_int_equal(rt_pipeline_mark(p, &m), RT_ERR_INVALID); /* ended */
    rt_phase_counts c;
    assert_int_equal(rt_pipeline_phase_counts(p, &c, sizeof c), RT_OK);
    assert_int_equal(c.accepted, 3);
    assert_int_equal(c.unknown_stop, 1);
    assert_int_equal(c.flood, 3);
    assert_int_equal(c.unterminated, 1); /* train */
    uint64_t first = 99;
    assert_int_equal(rt_pipeline_phase_counts(p, (rt_phase_counts *)&first, sizeof first), RT_OK);
    assert_int_equal(first, 3); /* a caller's shorter struct: only what fits */
    rt_pipeline_free(p);

    /* a pipeline without marks counts nothing */
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    assert_int_equal(rt_pipeline_phase_counts(p, &c, sizeof c), RT_OK);
    assert_int_equal(c.accepted + c.malformed, 0);
    assert_int_equal(rt_pipeline_phase_counts(NULL, &c, sizeof c), RT_ERR_INVALID);
    assert_int_equal(rt_pipeline_mark(NULL, &m), RT_ERR_INVALID);
    rt_pipeline_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names),
        cmocka_unit_test(matched_by_name),
        cmocka_unit_test(caps),
        cmocka_unit_test(carriage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
