/* test_job.c - the job's metadata fields by number (rt_job_field_count, _name, rt_job_field,
 * the report's words) and the one deep copy of a job (rt_job_dup): every string and tag in one
 * block, NULL tags left out, an old caller's shorter struct, no memory leaked. */
#include "unit.h"

#include <malloc.h>

#include "core/core.h"
#include "core/job.h"

static const char *const names[] = {"job_name", "project_name", "stage_name", "task_name", "team", "env",
                                    "language", "orchestrator", "executor", "external_run_id", "container_image"};

static rt_job full_job(const char *const *tags, size_t ntags)
{
    rt_job j = RT_JOB_INIT;
    j.job_name = "train";
    j.project_name = "proj";
    j.stage_name = "fit";
    j.task_name = "7";
    j.team = "ml";
    j.env = "prod";
    j.language = "c";
    j.orchestrator = "slurm";
    j.executor = "node-1";
    j.external_run_id = "run/42";
    j.container_image = "img:1";
    j.tags = tags;
    j.tag_count = ntags;
    return j;
}

static void fields_in_struct_order(void **state)
{
    (void)state;
    assert_int_equal(rt_job_field_count(), RT_ARRAY_LEN(names));
    assert_int_equal(rt_job_field_count(), RT_JOB_NFIELDS);
    rt_job j = full_job(NULL, 0);
    const char *const want[] = {j.job_name, j.project_name, j.stage_name, j.task_name, j.team, j.env,
                                j.language, j.orchestrator, j.executor, j.external_run_id, j.container_image};
    for (size_t i = 0; i < RT_ARRAY_LEN(names); i++) {
        assert_string_equal(rt_job_field_name(i), names[i]);
        assert_ptr_equal(rt_job_field(&j, i), want[i]);
        assert_non_null(rt_job_field_word(i));
    }
    assert_string_equal(rt_job_field_word(0), "job");
    assert_string_equal(rt_job_field_word(5), "environment");
    assert_null(rt_job_field_name(RT_JOB_NFIELDS));
    assert_null(rt_job_field_word(RT_JOB_NFIELDS));
    assert_null(rt_job_field(&j, RT_JOB_NFIELDS));
    assert_null(rt_job_field(NULL, 0));
    /* a caller whose struct ends after team: the fields beyond it are not read */
    j.struct_size = offsetof(rt_job, team) + sizeof j.team;
    assert_string_equal(rt_job_field(&j, 4), "ml");
    assert_null(rt_job_field(&j, 5));
}

static void dup_copies_into_one_block(void **state)
{
    (void)state;
    char tag0[] = "a=1", name[] = "train";
    const char *tags[] = {tag0, NULL, "b=2"};
    rt_job src = full_job(tags, 3);
    src.job_name = name;
    src.team = NULL;
    rt_job out;
    void *block = NULL;
    assert_int_equal(rt_job_dup(&src, &out, &block), RT_OK);
    assert_non_null(block);
    assert_int_equal(out.struct_size, sizeof(rt_job));
    /* the copy outlives what it was made of */
    memset(name, 'x', sizeof name - 1);
    memset(tag0, 'x', sizeof tag0 - 1);
    assert_string_equal(out.job_name, "train");
    assert_null(out.team);
    assert_string_equal(out.container_image, "img:1");
    assert_ptr_not_equal(out.container_image, src.container_image);
    assert_int_equal(out.tag_count, 2); /* the NULL tag left out */
    assert_string_equal(out.tags[0], "a=1");
    assert_string_equal(out.tags[1], "b=2");
    assert_null(out.tags[2]);
    /* everything lies in the block */
    const char *lo = block, *hi = lo + malloc_usable_size(block);
    for (size_t i = 0; i < RT_JOB_NFIELDS; i++) {
        const char *v = rt_job_field(&out, i);
        if (v)
            assert_true(v > lo && v + strlen(v) < hi);
    }
    assert_true((const char *)out.tags == lo && out.tags[1] > lo && out.tags[1] + 3 < hi);
    free(block);
}

static void dup_empty_and_bad(void **state)
{
    (void)state;
    rt_job out;
    void *block = NULL;
    assert_int_equal(rt_job_dup(NULL, &out, &block), RT_OK); /* no job: an empty one */
    for (size_t i = 0; i < RT_JOB_NFIELDS; i++)
        assert_null(rt_job_field(&out, i));
    assert_null(out.tags);
    assert_int_equal(out.tag_count, 0);
    free(block);
    /* an old caller's struct that ends after stage_name: the rest are empty in the copy */
    rt_job old = full_job(NULL, 0);
    old.struct_size = offsetof(rt_job, stage_name) + sizeof old.stage_name;
    assert_int_equal(rt_job_dup(&old, &out, &block), RT_OK);
    assert_string_equal(out.stage_name, "fit");
    assert_null(out.task_name);
    assert_null(out.container_image);
    free(block);
    /* a struct_size too small to be a job: refused, nothing made */
    old.struct_size = 1;
    block = (void *)&old;
    assert_int_equal(rt_job_dup(&old, &out, &block), RT_ERR_INVALID);
    assert_ptr_equal(block, (void *)&old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fields_in_struct_order),
        cmocka_unit_test(dup_copies_into_one_block),
        cmocka_unit_test(dup_empty_and_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
