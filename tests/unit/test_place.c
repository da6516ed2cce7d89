/* test_place.c - where the job runs (rt_place_*, source/place.c and place_query.c): SLURM's,
 * Kubernetes' and GitHub Actions' variables in every form they take, malformed values (one
 * warning naming the variable and the value, the figure not said), an empty environment, and
 * the time limit asked of stand-in scontrol and squeue scripts on the PATH: answers as SLURM's
 * man pages show them, a hung one killed at the timeout, one that exits 1, one that talks
 * nonsense. */
#include "unit.h"
#include "unit_wait.h"

#include <errno.h>

#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "cli.h"
#include "source/place.h"

/* ---- a logger that keeps what it was told ---------------------------------------------------- */

static int nwarn;
static char lastwarn[1024];

static void logfn(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    if (level >= RT_LOG_WARN) {
        nwarn++;
        snprintf(lastwarn, sizeof lastwarn, "%s", msg);
    }
}

static rt_place *detect(const char *const *envp, int no_query, double timeout)
{
    nwarn = 0;
    lastwarn[0] = '\0';
    rt_place_options o = RT_PLACE_OPTIONS_INIT;
    o.envp = envp;
    o.no_query = no_query;
    o.query_timeout_secs = timeout;
    o.log = logfn;
    rt_place *p = NULL;
    assert_int_equal(rt_place_detect(&o, &p), RT_OK);
    assert_non_null(p);
    return p;
}

/* The tag key=... of the place's job, or NULL. */
static const char *tag_of(const rt_place *p, const char *key)
{
    const rt_job *j = rt_place_job(p);
    size_t n = strlen(key);
    for (size_t i = 0; i < j->tag_count; i++)
        if (strncmp(j->tags[i], key, n) == 0 && j->tags[i][n] == '=')
            return j->tags[i] + n + 1;
    return NULL;
}

static int setup_tz(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    return 0;
}

/* ---- nothing ------------------------------------------------------------------------------ */

static void nothing_found(void **state)
{
    (void)state;
    const char *const env[] = {"HOME=/root", "PATH=/nonexistent", NULL};
    rt_place *p = detect(env, 0, 0);
    const rt_request *r = rt_place_request(p);
    assert_null(r->place);
    assert_null(r->cpu_from);
    assert_null(r->memory_from);
    assert_null(r->gpus_from);
    assert_null(r->time_limit_from);
    const rt_job *j = rt_place_job(p);
    assert_non_null(j);
    assert_null(j->job_name);
    assert_null(j->orchestrator);
    assert_int_equal(j->tag_count, 0);
    assert_int_equal(nwarn, 0);
    rt_place_free(p);
    const char *const empty[] = {NULL};
    p = detect(empty, 0, 0);
    assert_null(rt_place_request(p)->place);
    rt_place_free(p);
    /* a GitHub variable that is not "true", an empty SLURM_JOB_ID: no place */
    const char *const not_quite[] = {"GITHUB_ACTIONS=false", "SLURM_JOB_ID=", NULL};
    p = detect(not_quite, 0, 0);
    assert_null(rt_place_request(p)->place);
    rt_place_free(p);
    assert_int_equal(rt_place_detect(NULL, NULL), RT_ERR_INVALID);
    rt_place_options small = {.struct_size = 4};
    assert_int_equal(rt_place_detect(&small, &p), RT_ERR_INVALID);
    assert_null(rt_place_request(NULL));
    assert_null(rt_place_job(NULL));
    rt_place_free(NULL);
}

/* ---- SLURM -------------------------------------------------------------------------------- */

static void slurm_full(void **state)
{
    (void)state;
    const char *const env[] = {"SLURM_JOB_ID=4242",
                               "SLURM_JOB_NAME=train",
                               "SLURM_CPUS_PER_TASK=4",
                               "SLURM_CPUS_ON_NODE=8",
                               "SLURM_MEM_PER_NODE=16000",
                               "SLURM_GPUS_ON_NODE=2",
                               "CUDA_VISIBLE_DEVICES=0,1,2",
                               "SLURM_JOB_USER=alice",
                               "SLURM_JOB_ACCOUNT=physics",
                               "SLURM_JOB_PARTITION=gpu",
                               "SLURM_CLUSTER_NAME=hal",
                               "SLURMD_NODENAME=node07",
                               "SLURM_STEP_ID=0",
                               "PATH=/nonexistent",
                               NULL};
    rt_place *p = detect(env, 0, 0);
    const rt_request *r = rt_place_request(p);
    assert_string_equal(r->place, "slurm");
    assert_float_equal(r->cpu_cores, 4, 0);
    assert_string_equal(r->cpu_from, "SLURM_CPUS_PER_TASK");
    assert_float_equal(r->memory_mib, 16000, 0);
    assert_string_equal(r->memory_from, "SLURM_MEM_PER_NODE");
    assert_float_equal(r->gpus, 2, 0);
    assert_string_equal(r->gpus_from, "SLURM_GPUS_ON_NODE");
    assert_null(r->time_limit_from); /* neither scontrol nor squeue on the PATH: nothing said */
    const rt_job *j = rt_place_job(p);
    assert_string_equal(j->job_name, "train");
    assert_string_equal(j->orchestrator, "slurm");
    assert_string_equal(j->external_run_id, "4242");
    assert_string_equal(tag_of(p, "user"), "alice");
    assert_string_equal(tag_of(p, "account"), "physics");
    assert_string_equal(tag_of(p, "partition"), "gpu");
    assert_string_equal(tag_of(p, "cluster"), "hal");
    assert_string_equal(tag_of(p, "node"), "node07");
    assert_string_equal(tag_of(p, "step"), "0");
    assert_null(tag_of(p, "array_task"));
    assert_int_equal(nwarn, 0);
    rt_place_free(p);
}

static void slurm_fallbacks(void **state)
{
    (void)state;
    /* cores on the node, memory per CPU times the cores, an array task's id */
    const char *const env[] = {"SLURM_JOB_ID=5001",         "SLURM_CPUS_ON_NODE=8",   "SLURM_MEM_PER_CPU=2000",
                               "SLURM_ARRAY_JOB_ID=5000",   "SLURM_ARRAY_TASK_ID=1",  "CUDA_VISIBLE_DEVICES=",
                               NULL};
    rt_place *p = detect(env, 1, 0);
    const rt_request *r = rt_place_request(p);
    assert_float_equal(r->cpu_cores, 8, 0);
    assert_string_equal(r->cpu_from, "SLURM_CPUS_ON_NODE");
    assert_float_equal(r->memory_mib, 16000, 0);
    assert_string_equal(r->memory_from, "SLURM_MEM_PER_CPU");
    assert_float_equal(r->gpus, 0, 0); /* CUDA_VISIBLE_DEVICES empty: no GPU */
    assert_string_equal(r->gpus_from, "CUDA_VISIBLE_DEVICES");
    assert_string_equal(rt_place_job(p)->external_run_id, "5000_1");
    assert_string_equal(tag_of(p, "array_task"), "1");
    assert_null(rt_place_job(p)->job_name);
    rt_place_free(p);
    /* memory per CPU without a count of cores: not said; SLURM_MEM_PER_NODE=0 (the whole node) neither */
    const char *const env2[] = {"SLURM_JOB_ID=1", "SLURM_MEM_PER_CPU=2000", NULL};
    p = detect(env2, 1, 0);
    assert_null(rt_place_request(p)->memory_from);
    assert_null(rt_place_request(p)->cpu_from);
    rt_place_free(p);
    const char *const env3[] = {"SLURM_JOB_ID=1", "SLURM_MEM_PER_NODE=0", "SLURM_MEM_PER_CPU=100",
                                "SLURM_CPUS_ON_NODE=2", NULL};
    p = detect(env3, 1, 0);
    assert_null(rt_place_request(p)->memory_from);
    assert_int_equal(nwarn, 0);
    rt_place_free(p);
    const char *const env4[] = {"SLURM_JOB_ID=1", "SLURM_MEM_PER_NODE=2G", NULL};
    p = detect(env4, 1, 0);
    assert_float_equal(rt_place_request(p)->memory_mib, 2048, 0);
    rt_place_free(p);
}

static void slurm_gpu_forms(void **state)
{
    (void)state;
    static const struct {
        const char *var, *value;
        double gpus;
    } cases[] = {
        {"SLURM_GPUS_PER_NODE", "2", 2},
        {"SLURM_GPUS_PER_NODE", "a100:2", 2},
        {"SLURM_GPUS_PER_NODE", "gpu:a100:4", 4},
        {"SLURM_GPUS", "a100:2,v100:1", 3},
        {"SLURM_GPUS_PER_TASK", "1", 1},
        {"SLURM_JOB_GPUS", "0,1", 2},
        {"SLURM_STEP_GPUS", "3", 1},
        {"SLURM_JOB_GPUS", "0-3,6", 5},
        {"CUDA_VISIBLE_DEVICES", "0,1,2", 3},
        {"CUDA_VISIBLE_DEVICES", "GPU-8e3a,GPU-11f2", 2},
        {"CUDA_VISIBLE_DEVICES", "NoDevFiles", 0},
        {"CUDA_VISIBLE_DEVICES", "-1", 0},
        {"CUDA_VISIBLE_DEVICES", "0,-1,2", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char var[128];
        snprintf(var, sizeof var, "%s=%s", cases[i].var, cases[i].value);
        const char *const env[] = {"SLURM_JOB_ID=7", var, NULL};
        rt_place *p = detect(env, 1, 0);
        const rt_request *r = rt_place_request(p);
        if (!r->gpus_from || strcmp(r->gpus_from, cases[i].var) != 0 || r->gpus != cases[i].gpus)
            fail_msg("%s: gpus %g from %s, want %g", var, r->gpus, r->gpus_from ? r->gpus_from : "(null)",
                     cases[i].gpus);
        assert_int_equal(nwarn, 0);
        rt_place_free(p);
    }
    /* the order: SLURM_GPUS_ON_NODE before the others, SLURM's before CUDA's */
    const char *const env[] = {"SLURM_JOB_ID=7", "SLURM_JOB_GPUS=0,1,2", "SLURM_GPUS_PER_NODE=a100:1",
                               "CUDA_VISIBLE_DEVICES=0", NULL};
    rt_place *p = detect(env, 1, 0);
    assert_string_equal(rt_place_request(p)->gpus_from, "SLURM_GPUS_PER_NODE");
    assert_float_equal(rt_place_request(p)->gpus, 1, 0);
    rt_place_free(p);
}

/* One malformed value: exactly one warning naming it and its value, its figure not said. */
static void one_bad(const char *var, const char *value, int which)
{
    char kv[256];
    snprintf(kv, sizeof kv, "%s=%s", var, value);
    const char *const env[] = {"SLURM_JOB_ID=9", "SLURM_CPUS_ON_NODE=4", kv, NULL};
    rt_place *p = detect(env, 1, 0);
    const rt_request *r = rt_place_request(p);
    if (nwarn != 1)
        fail_msg("%s: %d warnings", kv, nwarn);
    if (!strstr(lastwarn, var) || !strstr(lastwarn, value))
        fail_msg("%s: the warning does not name it: %s", kv, lastwarn);
    const char *from = which == 0 ? r->cpu_from : which == 1 ? r->memory_from : r->gpus_from;
    if (from)
        fail_msg("%s: a figure from %s", kv, from);
    assert_string_equal(r->place, "slurm");
    rt_place_free(p);
}

static void slurm_malformed(void **state)
{
    (void)state;
    one_bad("SLURM_MEM_PER_NODE", "abc", 1);
    one_bad("SLURM_MEM_PER_NODE", "-5", 1);
    one_bad("SLURM_MEM_PER_NODE", "12x", 1);
    one_bad("SLURM_MEM_PER_CPU", "lots", 1);
    one_bad("SLURM_CPUS_PER_TASK", "-3", 0);
    one_bad("SLURM_CPUS_PER_TASK", "0", 0);
    one_bad("SLURM_CPUS_PER_TASK", "4.5", 0);
    one_bad("SLURM_GPUS_ON_NODE", "two", 2);
    one_bad("SLURM_GPUS_PER_NODE", "a100:", 2);
    one_bad("SLURM_GPUS", "a100:x", 2);
    one_bad("SLURM_JOB_GPUS", "0,,1", 2);
    one_bad("SLURM_STEP_GPUS", "gpu0", 2);
    /* a long value is cut in the message, and the place still says who the job is */
    char longv[400];
    memset(longv, 'z', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    char kv[420];
    snprintf(kv, sizeof kv, "SLURM_MEM_PER_NODE=%s", longv);
    const char *const env[] = {"SLURM_JOB_ID=9", "SLURM_JOB_NAME=x", kv, NULL};
    rt_place *p = detect(env, 1, 0);
    assert_int_equal(nwarn, 1);
    assert_true(strlen(lastwarn) < 200);
    assert_string_equal(rt_place_job(p)->job_name, "x");
    rt_place_free(p);
}

static void slurm_durations(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int r;
        double secs;
    } cases[] = {
        {"30", 1, 1800},           {"30:15", 1, 1815},         {"01:00:00", 1, 3600},     {"2-0", 1, 172800},
        {"1-12", 1, 129600},       {"1-12:30", 1, 131400},     {"1-00:00:05", 1, 86405},  {"00:10:00\n", 1, 600},
        {"UNLIMITED", 0, 0},       {"NOT_SET", 0, 0},          {"INFINITE", 0, 0},        {"Partition_Limit", 0, 0},
        {"", -1, 0},               {"abc", -1, 0},             {"1:2:3:4", -1, 0},        {"-5", -1, 0},
        {"1-", -1, 0},             {"1-2-3", -1, 0},           {"10:", -1, 0},            {"1.5", -1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double secs = -1;
        int r = rt_slurm_parse_duration(cases[i].s, &secs);
        if (r != cases[i].r || (r == 1 && secs != cases[i].secs))
            fail_msg("'%s': %d %g, want %d %g", cases[i].s, r, secs, cases[i].r, cases[i].secs);
    }
    double t;
    assert_int_equal(rt_slurm_parse_time("2026-11-25T05:00:00", &t), 1);
    assert_float_equal(t, 1795582800.0, 0); /* TZ=UTC (setup) */
    assert_int_equal(rt_slurm_parse_time("2026-11-25", &t), 1);
    assert_float_equal(t, 1795564800.0, 0);
    assert_int_equal(rt_slurm_parse_time("N/A", &t), 0);
    assert_int_equal(rt_slurm_parse_time("Unknown", &t), 0);
    assert_int_equal(rt_slurm_parse_time("2026-13-25T05:00:00", &t), -1);
    assert_int_equal(rt_slurm_parse_time("yesterday", &t), -1);
    assert_int_equal(rt_slurm_parse_time("2026-11-25T05:00:00Z", &t), -1);
}

static void slurm_answers(void **state)
{
    (void)state;
    rt_slurm_times t;
    const char *sc = "JobId=4242 JobName=train UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A Priority=1 "
                     "Nice=0 Account=physics QOS=normal JobState=RUNNING Reason=None Dependency=(null) Requeue=1 "
                     "Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:05:00 TimeLimit=1-02:00:00 "
                     "TimeMin=N/A SubmitTime=2026-11-25T04:59:00 EligibleTime=2026-11-25T04:59:00 "
                     "AccrueTime=2026-11-25T04:59:00 StartTime=2026-11-25T05:00:00 EndTime=2026-11-26T07:00:00 "
                     "Deadline=N/A Partition=gpu NodeList=node07 NumNodes=1 NumCPUs=4 TRES=cpu=4,mem=16000M,node=1 "
                     "Command=/home/alice/job.sh WorkDir=/home/alice\n";
    assert_int_equal(rt_slurm_parse_scontrol(sc, &t), 0);
    assert_int_equal(t.limit, 1);
    assert_float_equal(t.limit_secs, 93600, 0);
    assert_int_equal(t.start, 1);
    assert_float_equal(t.start_secs, 1795582800.0, 0);
    assert_int_equal(rt_slurm_parse_scontrol("JobId=1 TimeLimit=UNLIMITED StartTime=Unknown\n", &t), 0);
    assert_int_equal(t.limit, 0);
    assert_int_equal(t.start, 0);
    assert_int_equal(rt_slurm_parse_scontrol("slurm_load_jobs error: Invalid job id specified\n", &t), -1);
    assert_int_equal(rt_slurm_parse_scontrol("JobId=1 TimeLimit=soon\n", &t), -1);
    assert_int_equal(rt_slurm_parse_scontrol("", &t), -1);
    assert_int_equal(rt_slurm_parse_squeue("1:00:00 2026-11-25T05:00:00\n", &t), 0);
    assert_float_equal(t.limit_secs, 3600, 0);
    assert_float_equal(t.start_secs, 1795582800.0, 0);
    assert_int_equal(rt_slurm_parse_squeue("2-00:00:00 N/A\n", &t), 0);
    assert_float_equal(t.limit_secs, 172800, 0);
    assert_int_equal(t.start, 0);
    assert_int_equal(rt_slurm_parse_squeue("UNLIMITED 2026-11-25T05:00:00\n", &t), 0);
    assert_int_equal(t.limit, 0);
    assert_int_equal(rt_slurm_parse_squeue("TIME_LIMIT START_TIME\n", &t), -1);
    assert_int_equal(rt_slurm_parse_squeue("1:00:00 a b\n", &t), -1);
    assert_int_equal(rt_slurm_parse_squeue("\n", &t), -1);
}

static void slurm_end_time_variables(void **state)
{
    (void)state;
    const char *const env[] = {"SLURM_JOB_ID=3", "SLURM_JOB_START_TIME=1795582800", "SLURM_JOB_END_TIME=1795590000",
                               "PATH=/nonexistent", NULL};
    rt_place *p = detect(env, 0, 0);
    const rt_request *r = rt_place_request(p);
    assert_string_equal(r->time_limit_from, "SLURM_JOB_END_TIME");
    assert_float_equal(r->time_limit_secs, 7200, 0);
    assert_float_equal(r->job_start_secs, 1795582800.0, 0);
    rt_place_free(p);
    const char *const bad[] = {"SLURM_JOB_ID=3", "SLURM_JOB_START_TIME=1795582800", "SLURM_JOB_END_TIME=later",
                               "PATH=/nonexistent", NULL};
    p = detect(bad, 0, 0);
    assert_null(rt_place_request(p)->time_limit_from);
    assert_int_equal(nwarn, 1);
    assert_non_null(strstr(lastwarn, "SLURM_JOB_END_TIME"));
    rt_place_free(p);
}

/* ---- the query, with stand-in commands ------------------------------------------------------ */

static char bindir[64];
static char pathvar[256];

static void put_script(const char *name, const char *body)
{
    char text[4096];
    snprintf(text, sizeof text, "#!/bin/sh\n%s", body);
    unit_put(bindir, name, text);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", bindir, name);
    chmod(path, 0755);
}

static void drop_script(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", bindir, name);
    unlink(path);
}

static int setup_bin(void **state)
{
    (void)state;
    snprintf(bindir, sizeof bindir, "/tmp/rt-place-XXXXXX");
    unit_tmpdir(bindir);
    /* the scripts' directory alone on the PATH (with the sleep they run): a SLURM installed on
     * the machine (the e2e tests' cluster) must not answer in their place; the tools they run
     * linked in */
    snprintf(pathvar, sizeof pathvar, "PATH=%s", bindir);
    const char *tools[] = {"sleep", "yes"};
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        char link[300], target[64];
        snprintf(link, sizeof link, "%s/%s", bindir, tools[i]);
        snprintf(target, sizeof target, "/bin/%s", tools[i]);
        if (symlink(target, link) != 0)
            return -1;
    }
    return 0;
}

static int teardown_bin(void **state)
{
    (void)state;
    unit_rmtree(bindir);
    return 0;
}

static int setup(void **state)
{
    return setup_tz(state) | setup_bin(state);
}

static rt_place *slurm_query(double timeout)
{
    const char *const env[] = {"SLURM_JOB_ID=4242", pathvar, NULL};
    return detect(env, 0, timeout);
}

static void query_scontrol(void **state)
{
    (void)state;
    /* answers only the job it is asked about, as `scontrol show job -o ID` does */
    put_script("scontrol", "[ \"$1 $2 $3 $4\" = \"show job -o 4242\" ] || { echo \"slurm_load_jobs error: Invalid "
                           "job id specified\" >&2; exit 1; }\n"
                           "echo \"JobId=4242 JobName=train UserId=alice(1000) JobState=RUNNING Reason=None "
                           "RunTime=00:57:00 TimeLimit=01:00:00 TimeMin=N/A SubmitTime=2026-11-25T04:59:00 "
                           "StartTime=2026-11-25T05:00:00 EndTime=2026-11-25T06:00:00 Partition=gpu\"\n");
    put_script("squeue", "echo '9:00:00 2026-11-25T01:00:00'\n");
    rt_place *p = slurm_query(5);
    const rt_request *r = rt_place_request(p);
    assert_int_equal(nwarn, 0);
    assert_string_equal(r->time_limit_from, "scontrol");
    assert_float_equal(r->time_limit_secs, 3600, 0);
    assert_float_equal(r->job_start_secs, 1795582800.0, 0);
    rt_place_free(p);
    /* no_query: nothing is run */
    const char *const env[] = {"SLURM_JOB_ID=4242", pathvar, NULL};
    p = detect(env, 1, 5);
    assert_null(rt_place_request(p)->time_limit_from);
    rt_place_free(p);
    drop_script("scontrol");
    drop_script("squeue");
}

static void query_squeue(void **state)
{
    (void)state;
    put_script("squeue", "[ \"$1 $2 $3 $4\" = \"-h -j 4242 -o\" ] && [ \"$5\" = '%l %S' ] || exit 1\n"
                         "echo '2-00:00:00 2026-11-25T05:00:00'\n");
    rt_place *p = slurm_query(5);
    const rt_request *r = rt_place_request(p);
    if (nwarn)
        fail_msg("%s", lastwarn);
    assert_string_equal(r->time_limit_from, "squeue");
    assert_float_equal(r->time_limit_secs, 172800, 0);
    assert_float_equal(r->job_start_secs, 1795582800.0, 0);
    rt_place_free(p);
    /* a pending job's start: N/A; the limit stands, the start is the run's */
    put_script("squeue", "echo 'UNLIMITED N/A'\n");
    p = slurm_query(5);
    assert_null(rt_place_request(p)->time_limit_from);
    assert_float_equal(rt_place_request(p)->job_start_secs, 0, 0);
    assert_int_equal(nwarn, 0);
    rt_place_free(p);
    drop_script("squeue");
}

static void query_failures(void **state)
{
    (void)state;
    /* exits 1: one warning, no limit */
    put_script("scontrol", "echo 'slurm_load_jobs error: Socket timed out on send/recv operation' >&2\nexit 1\n");
    rt_place *p = slurm_query(5);
    assert_null(rt_place_request(p)->time_limit_from);
    assert_int_equal(nwarn, 1);
    assert_non_null(strstr(lastwarn, "scontrol"));
    assert_non_null(strstr(lastwarn, "status 1"));
    rt_place_free(p);
    /* nonsense: one warning quoting it */
    put_script("scontrol", "echo 'JobId=4242 TimeLimit=whenever StartTime=2026-11-25T05:00:00'\n");
    p = slurm_query(5);
    assert_null(rt_place_request(p)->time_limit_from);
    assert_int_equal(nwarn, 1);
    assert_non_null(strstr(lastwarn, "whenever"));
    rt_place_free(p);
    /* hangs (and its child too): killed at the timeout, one warning; a child of the caller's
     * own, ended before and waiting to be reaped all the while, is not reaped meanwhile */
    put_script("scontrol", "sleep 30\necho 'JobId=4242 TimeLimit=1:00:00'\n");
    pid_t mine = fork();
    assert_true(mine >= 0);
    if (mine == 0)
        _exit(7);
    siginfo_t ended = {0};
    assert_int_equal(waitid(P_PID, (id_t)mine, &ended, WEXITED | WNOWAIT), 0); /* exited, not reaped */
    p = slurm_query(0.3);
    assert_null(rt_place_request(p)->time_limit_from);
    assert_int_equal(nwarn, 1);
    assert_non_null(strstr(lastwarn, "killed"));
    rt_place_free(p);
    int st = 0;
    assert_int_equal(waitpid(mine, &st, 0), mine);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 7);
    /* answers and exits, but a child it left holds the pipe: a timeout all the same, the child
     * killed with the group (not left running), no figure from a half-read answer */
    char bgfile[300], put[600];
    snprintf(bgfile, sizeof bgfile, "%s/bgpid", bindir);
    snprintf(put, sizeof put, "sleep 30 &\necho $! > %s\necho 'JobId=4242 TimeLimit=1:00:00'\nexit 0\n", bgfile);
    put_script("scontrol", put);
    p = slurm_query(0.3);
    assert_null(rt_place_request(p)->time_limit_from);
    assert_int_equal(nwarn, 1);
    assert_non_null(strstr(lastwarn, "killed"));
    rt_place_free(p);
    char bgtext[32] = "";
    FILE *bf = fopen(bgfile, "r");
    assert_non_null(bf);
    assert_non_null(fgets(bgtext, sizeof bgtext, bf));
    fclose(bf);
    pid_t bg = (pid_t)strtol(bgtext, NULL, 10);
    assert_true(bg > 0);
    bool gone = false; /* killed, then reaped by init */
    UNIT_WAIT_UNTIL((gone = kill(bg, 0) < 0 && errno == ESRCH), UNIT_WAIT_SECS);
    if (!gone)
        kill(bg, SIGKILL);
    assert_true(gone);
    /* a job id that is not one: not asked, one warning */
    put_script("scontrol", "echo 'JobId=1 TimeLimit=1:00:00'\n");
    const char *const env[] = {"SLURM_JOB_ID=12;rm", pathvar, NULL};
    p = detect(env, 0, 5);
    assert_null(rt_place_request(p)->time_limit_from);
    assert_int_equal(nwarn, 1);
    rt_place_free(p);
    drop_script("scontrol");
}

/* 0.18: the run's place in a job of several nodes, from each launcher's variables */
static void member_of_each_launcher(void **state)
{
    (void)state;
    const char *const slurm[] = {"SLURM_JOB_ID=77",      "SLURM_ARRAY_JOB_ID=70", "SLURM_ARRAY_TASK_ID=3",
                                 "SLURM_STEP_ID=1",      "SLURMD_NODENAME=gpu07", "SLURM_PROCID=5",
                                 "SLURM_LOCALID=1",      "SLURM_NTASKS=8",        "SLURM_JOB_NUM_NODES=4",
                                 "SLURM_NODEID=2",       "PATH=/nonexistent",     NULL};
    rt_place *p = detect(slurm, 1, 5);
    const rt_member *m = rt_place_member(p);
    assert_string_equal(m->job_id, "70_3"); /* an array task: the array's job and its task */
    assert_string_equal(m->step_id, "1");
    assert_string_equal(m->node, "gpu07");
    assert_string_equal(m->from, "slurm");
    assert_int_equal(m->rank, 5);
    assert_int_equal(m->local_rank, 1);
    assert_int_equal(m->ranks, 8);
    assert_int_equal(m->nodes, 4);
    assert_int_equal(m->node_index, 2);
    rt_place_free(p);
    /* SLURM_NNODES and SLURM_NPROCS where the newer names are not set */
    const char *const older[] = {"SLURM_JOB_ID=9", "SLURM_NNODES=3", "SLURM_NPROCS=6", "PATH=/nonexistent", NULL};
    p = detect(older, 1, 5);
    m = rt_place_member(p);
    assert_string_equal(m->job_id, "9");
    assert_int_equal(m->nodes, 3);
    assert_int_equal(m->ranks, 6);
    assert_int_equal(m->rank, -1);
    assert_non_null(m->node); /* the host name */
    rt_place_free(p);
    const char *const torch[] = {"TORCHELASTIC_RUN_ID=rdzv-1", "RANK=3",  "LOCAL_RANK=1",
                                 "WORLD_SIZE=4",               "GROUP_RANK=1", "GROUP_WORLD_SIZE=2", NULL};
    p = detect(torch, 1, 5);
    m = rt_place_member(p);
    assert_string_equal(m->job_id, "rdzv-1");
    assert_string_equal(m->from, "torchrun");
    assert_int_equal(m->rank, 3);
    assert_int_equal(m->local_rank, 1);
    assert_int_equal(m->ranks, 4);
    assert_int_equal(m->nodes, 2);
    assert_int_equal(m->node_index, 1);
    rt_place_free(p);
    const char *const ompi[] = {"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=3", "OMPI_COMM_WORLD_LOCAL_RANK=0",
                                "PMIX_NAMESPACE=prterun-host-1234@1", NULL};
    p = detect(ompi, 1, 5);
    m = rt_place_member(p);
    assert_string_equal(m->job_id, "prterun-host-1234@1");
    assert_string_equal(m->from, "mpi");
    assert_int_equal(m->rank, 2);
    assert_int_equal(m->ranks, 3);
    assert_int_equal(m->local_rank, 0);
    rt_place_free(p);
    /* MPICH's hydra says no job id: no member, but what it says is kept for --job-id */
    const char *const mpich[] = {"PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", NULL};
    p = detect(mpich, 1, 5);
    m = rt_place_member(p);
    assert_null(m->job_id);
    assert_string_equal(m->from, "mpi");
    assert_int_equal(m->rank, 1);
    assert_int_equal(m->ranks, 2);
    rt_place_free(p);
    const char *const k8s[] = {"KUBERNETES_SERVICE_HOST=10.0.0.1", "JOB_COMPLETION_INDEX=4", "POD_JOB_NAME=train",
                               "POD_NAME=train-4-abcde", NULL};
    p = detect(k8s, 1, 5);
    m = rt_place_member(p);
    assert_string_equal(m->job_id, "train");
    assert_string_equal(m->node, "train-4-abcde");
    assert_string_equal(m->from, "kubernetes");
    assert_int_equal(m->rank, 4);
    assert_int_equal(m->node_index, 4);
    rt_place_free(p);
    /* nothing: no member */
    const char *const none[] = {"HOME=/root", NULL};
    p = detect(none, 1, 5);
    m = rt_place_member(p);
    assert_null(m->job_id);
    assert_null(m->from);
    assert_null(m->node);
    rt_place_free(p);
}

/* a number that is not one: one warning naming the variable and the value, not said */
static void member_malformed(void **state)
{
    (void)state;
    const char *const env[] = {"SLURM_JOB_ID=5", "SLURM_PROCID=two", "SLURM_NODEID=-1", "SLURM_NTASKS=3",
                               "PATH=/nonexistent", NULL};
    rt_place *p = detect(env, 1, 5);
    const rt_member *m = rt_place_member(p);
    assert_int_equal(m->rank, -1);
    assert_int_equal(m->node_index, -1);
    assert_int_equal(m->ranks, 3);
    assert_int_equal(nwarn, 2);
    assert_non_null(strstr(lastwarn, "SLURM_NODEID"));
    assert_non_null(strstr(lastwarn, "'-1'"));
    rt_place_free(p);
}

static void run_output_bounded(void **state)
{
    (void)state;
    /* more than the buffer: what fits is kept, the command is not waited on for the rest */
    put_script("chatty", "yes JobId=1\n");
    char out[64], why[128];
    const char *const argv[] = {"chatty", NULL};
    const char *const env[] = {pathvar, NULL};
    int rc = rt_place_run(argv, env, 5, out, sizeof out, why, sizeof why);
    assert_int_equal(rc, 0);
    assert_int_equal(strlen(out), sizeof out - 1);
    const char *const missing[] = {"no-such-command-here", NULL};
    assert_int_equal(rt_place_run(missing, env, 5, out, sizeof out, why, sizeof why), 1);
    drop_script("chatty");
}

/* srun -n N without --cpus-per-task: each task's share of the node's figures; a task other than
 * a step's first asks no command */
static void slurm_task_share(void **state)
{
    (void)state;
    const char *const env[] = {"SLURM_JOB_ID=1",       "SLURM_CPUS_ON_NODE=8",          "SLURM_MEM_PER_NODE=16384",
                               "SLURM_JOB_GPUS=0,1,2,3", "SLURM_STEP_TASKS_PER_NODE=2(x3),4", "SLURM_NODEID=3",
                               "SLURM_LOCALID=1",      NULL};
    rt_place *p = detect(env, 1, 0);
    const rt_request *r = rt_place_request(p);
    assert_float_equal(r->cpu_cores, 2, 0); /* node 3: the 4 tasks of the entry after 2(x3) */
    assert_string_equal(r->cpu_from, "SLURM_CPUS_ON_NODE / 4 tasks");
    assert_float_equal(r->memory_mib, 4096, 0);
    assert_string_equal(r->memory_from, "SLURM_MEM_PER_NODE / 4 tasks");
    assert_float_equal(r->gpus, 1, 0);
    assert_string_equal(r->gpus_from, "SLURM_JOB_GPUS / 4 tasks");
    rt_place_free(p);
    /* a per-task figure stays; memory per CPU follows the cores it multiplies */
    const char *const env2[] = {"SLURM_JOB_ID=1", "SLURM_CPUS_PER_TASK=2", "SLURM_CPUS_ON_NODE=8",
                                "SLURM_MEM_PER_CPU=1000", "SLURM_STEP_TASKS_PER_NODE=4", "SLURM_LOCALID=0", NULL};
    p = detect(env2, 1, 0);
    r = rt_place_request(p);
    assert_float_equal(r->cpu_cores, 2, 0);
    assert_string_equal(r->cpu_from, "SLURM_CPUS_PER_TASK");
    assert_float_equal(r->memory_mib, 2000, 0);
    assert_string_equal(r->memory_from, "SLURM_MEM_PER_CPU");
    rt_place_free(p);
    const char *const env3[] = {"SLURM_JOB_ID=1", "SLURM_CPUS_ON_NODE=8", "SLURM_MEM_PER_CPU=1000",
                                "SLURM_STEP_TASKS_PER_NODE=2", "SLURM_LOCALID=0", NULL};
    p = detect(env3, 1, 0);
    r = rt_place_request(p);
    assert_float_equal(r->cpu_cores, 4, 0);
    assert_float_equal(r->memory_mib, 4000, 0);
    assert_string_equal(r->memory_from, "SLURM_MEM_PER_CPU / 2 tasks");
    rt_place_free(p);
    /* a batch script (no SLURM_LOCALID), or a form that cannot be read: the node's figures */
    const char *const env4[] = {"SLURM_JOB_ID=1", "SLURM_CPUS_ON_NODE=8", "SLURM_STEP_TASKS_PER_NODE=4", NULL};
    const char *const env5[] = {"SLURM_JOB_ID=1", "SLURM_CPUS_ON_NODE=8", "SLURM_STEP_TASKS_PER_NODE=4(y2)",
                                "SLURM_LOCALID=0", NULL};
    const char *const *plain[] = {env4, env5};
    for (size_t i = 0; i < 2; i++) {
        p = detect(plain[i], 1, 0);
        assert_float_equal(rt_place_request(p)->cpu_cores, 8, 0);
        assert_string_equal(rt_place_request(p)->cpu_from, "SLURM_CPUS_ON_NODE");
        rt_place_free(p);
    }
    /* the second task of a step asks nothing (one query a step, not a thousand) */
    put_script("scontrol", "echo 'JobId=1 TimeLimit=1:00:00'\n");
    const char *const env6[] = {"SLURM_JOB_ID=1", "SLURM_PROCID=1", pathvar, NULL};
    p = detect(env6, 0, 5);
    assert_null(rt_place_request(p)->time_limit_from);
    rt_place_free(p);
    const char *const env7[] = {"SLURM_JOB_ID=1", "SLURM_PROCID=0", pathvar, NULL};
    p = detect(env7, 0, 5);
    assert_string_equal(rt_place_request(p)->time_limit_from, "scontrol");
    rt_place_free(p);
    drop_script("scontrol");
}

/* ---- Kubernetes --------------------------------------------------------------------------- */

static void k8s_quantities(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int r;
        double v;
    } cases[] = {
        {"500m", 0, 0.5},      {"2", 0, 2},           {"1.5", 0, 1.5},          {".5", 0, 0.5},
        {"512Mi", 0, 536870912}, {"2Gi", 0, 2147483648.0}, {"1G", 0, 1e9},       {"128974848", 0, 128974848},
        {"129e6", 0, 129e6},   {"129E6", 0, 129e6},   {"1E", 0, 1e18},          {"64Ki", 0, 65536},
        {"1k", 0, 1000},       {"-3", -1, 0},         {"", -1, 0},              {"abc", -1, 0},
        {"5 cores", -1, 0},    {"2Gb", -1, 0},        {"1e999", -1, 0},         {"m", -1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double v = -1;
        int r = rt_k8s_parse_quantity(cases[i].s, &v);
        if (r != cases[i].r || (r == 0 && fabs(v - cases[i].v) > 1e-9 * cases[i].v))
            fail_msg("'%s': %d %g, want %d %g", cases[i].s, r, v, cases[i].r, cases[i].v);
    }
}

static void k8s_env(void **state)
{
    (void)state;
    /* the downward API with the default divisors: whole cores, bytes */
    const char *const env[] = {"KUBERNETES_SERVICE_HOST=10.0.0.1", "POD_NAME=train-7x2kq", "POD_NAMESPACE=ml",
                               "NODE_NAME=worker-3", "POD_JOB_NAME=train", "POD_UID=6f1c-11",
                               "CPU_REQUEST=2", "CPU_LIMIT=4", "MEMORY_REQUEST=4294967296",
                               "MEMORY_LIMIT=8589934592", "NVIDIA_VISIBLE_DEVICES=GPU-aa,GPU-bb", NULL};
    rt_place *p = detect(env, 0, 0);
    const rt_request *r = rt_place_request(p);
    assert_string_equal(r->place, "kubernetes");
    assert_float_equal(r->cpu_cores, 2, 0);
    assert_string_equal(r->cpu_from, "CPU_REQUEST");
    assert_float_equal(r->memory_mib, 4096, 0);
    assert_string_equal(r->memory_from, "MEMORY_REQUEST");
    assert_float_equal(r->gpus, 2, 0);
    assert_string_equal(r->gpus_from, "NVIDIA_VISIBLE_DEVICES");
    const rt_job *j = rt_place_job(p);
    assert_string_equal(j->job_name, "train");
    assert_string_equal(j->orchestrator, "kubernetes");
    assert_string_equal(j->external_run_id, "6f1c-11");
    assert_string_equal(tag_of(p, "namespace"), "ml");
    assert_string_equal(tag_of(p, "pod"), "train-7x2kq");
    assert_string_equal(tag_of(p, "node"), "worker-3");
    assert_int_equal(nwarn, 0);
    rt_place_free(p);
    /* quantities, limits when no request, the pod's name from HOSTNAME, GPUs all/none */
    const char *const env2[] = {"KUBERNETES_SERVICE_HOST=10.0.0.1", "HOSTNAME=web-1", "CPU_LIMIT=500m",
                                "MEMORY_LIMIT=512Mi", "NVIDIA_VISIBLE_DEVICES=all", NULL};
    p = detect(env2, 0, 0);
    r = rt_place_request(p);
    assert_float_equal(r->cpu_cores, 0.5, 0);
    assert_string_equal(r->cpu_from, "CPU_LIMIT");
    assert_float_equal(r->memory_mib, 512, 0);
    assert_string_equal(r->memory_from, "MEMORY_LIMIT");
    assert_null(r->gpus_from);
    assert_string_equal(rt_place_job(p)->job_name, "web-1");
    assert_string_equal(tag_of(p, "pod"), "web-1");
    rt_place_free(p);
    const char *const env3[] = {"KUBERNETES_SERVICE_HOST=10.0.0.1", "NVIDIA_VISIBLE_DEVICES=void", NULL};
    p = detect(env3, 0, 0);
    assert_float_equal(rt_place_request(p)->gpus, 0, 0);
    assert_string_equal(rt_place_request(p)->gpus_from, "NVIDIA_VISIBLE_DEVICES");
    assert_null(rt_place_request(p)->cpu_from);
    rt_place_free(p);
    /* malformed: one warning each, the figure not said (the limit is not taken instead) */
    const char *const bad[] = {"KUBERNETES_SERVICE_HOST=10.0.0.1", "CPU_REQUEST=-3", "CPU_LIMIT=4", NULL};
    p = detect(bad, 0, 0);
    assert_null(rt_place_request(p)->cpu_from);
    assert_int_equal(nwarn, 1);
    assert_non_null(strstr(lastwarn, "CPU_REQUEST"));
    assert_non_null(strstr(lastwarn, "-3"));
    rt_place_free(p);
    const char *const bad2[] = {"KUBERNETES_SERVICE_HOST=10.0.0.1", "MEMORY_REQUEST=lots", NULL};
    p = detect(bad2, 0, 0);
    assert_null(rt_place_request(p)->memory_from);
    assert_int_equal(nwarn, 1);
    assert_non_null(strstr(lastwarn, "MEMORY_REQUEST"));
    rt_place_free(p);
}

/* ---- GitHub Actions ------------------------------------------------------------------------- */

static void github_env(void **state)
{
    (void)state;
    const char *const env[] = {"GITHUB_ACTIONS=true",       "GITHUB_JOB=build",           "GITHUB_RUN_ID=987654",
                               "GITHUB_WORKFLOW=CI",        "GITHUB_REPOSITORY=o/r",      "GITHUB_RUN_NUMBER=12",
                               "GITHUB_RUN_ATTEMPT=2",      "GITHUB_SHA=abc123",          "GITHUB_REF=refs/heads/main",
                               "RUNNER_NAME=GitHub Actions 3", NULL};
    rt_place *p = detect(env, 0, 0);
    const rt_request *r = rt_place_request(p);
    assert_string_equal(r->place, "github-actions");
    assert_null(r->cpu_from);
    assert_null(r->memory_from);
    const rt_job *j = rt_place_job(p);
    assert_string_equal(j->job_name, "build");
    assert_string_equal(j->orchestrator, "github-actions");
    assert_string_equal(j->external_run_id, "987654");
    assert_string_equal(tag_of(p, "workflow"), "CI");
    assert_string_equal(tag_of(p, "repository"), "o/r");
    assert_string_equal(tag_of(p, "run_number"), "12");
    assert_string_equal(tag_of(p, "run_attempt"), "2");
    assert_string_equal(tag_of(p, "sha"), "abc123");
    assert_string_equal(tag_of(p, "ref"), "refs/heads/main");
    assert_string_equal(tag_of(p, "runner"), "GitHub Actions 3");
    rt_place_free(p);
}

/* ---- the tool's merge (src/cli/place.c) ------------------------------------------------------ */

static void cli_merges_under_the_user(void **state)
{
    (void)state;
    char *old_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", "/nonexistent", 1);
    /* a run on a real SLURM node: its own variables out of the way */
    static const char *const theirs[] = {"SLURM_JOB_ACCOUNT", "SLURM_CLUSTER_NAME", "SLURMD_NODENAME", "SLURM_STEP_ID",
                                         "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_JOB_END_TIME",
                                         "SLURM_CPUS_PER_TASK"};
    for (size_t i = 0; i < sizeof theirs / sizeof theirs[0]; i++)
        unsetenv(theirs[i]);
    setenv("SLURM_JOB_ID", "31", 1);
    setenv("SLURM_JOB_NAME", "train", 1);
    setenv("SLURM_JOB_USER", "alice", 1);
    setenv("SLURM_JOB_PARTITION", "gpu", 1);
    setenv("SLURM_CPUS_ON_NODE", "6", 1);
    const char *tags[] = {"user=bob", "kind=test"};
    cli_options o = {0};
    o.job = (rt_job)RT_JOB_INIT;
    o.job.project_name = "proj";
    o.job.tags = tags;
    o.job.tag_count = 2;
    cli_place_apply(&o);
    assert_non_null(o.request);
    assert_string_equal(o.request->place, "slurm");
    assert_float_equal(o.request->cpu_cores, 6, 0);
    assert_string_equal(o.job.job_name, "train");
    assert_string_equal(o.job.project_name, "proj");
    assert_string_equal(o.job.orchestrator, "slurm");
    assert_string_equal(o.job.external_run_id, "31");
    /* the user's two, the place's partition, and (0.18) the run's job and node in it (no
     * SLURM_PROCID: no rank) */
    assert_int_equal(o.job.tag_count, 5);
    assert_string_equal(o.job.tags[0], "user=bob");
    assert_string_equal(o.job.tags[1], "kind=test");
    assert_string_equal(o.job.tags[2], "partition=gpu");
    assert_string_equal(o.job.tags[3], "job_id=31");
    char host[256] = "", node_tag[300];
    gethostname(host, sizeof host - 1);
    snprintf(node_tag, sizeof node_tag, "node=%s", host);
    assert_string_equal(o.job.tags[4], node_tag);
    assert_string_equal(o.member.job_id, "31");
    assert_string_equal(o.member.from, "slurm");
    cli_place_free(&o);
    assert_null(o.request);
    /* --place off: nothing */
    cli_options off = {0};
    off.job = (rt_job)RT_JOB_INIT;
    off.place_off = true;
    cli_place_apply(&off);
    assert_null(off.request);
    assert_null(off.job.job_name);
    assert_null(off.member.job_id);
    assert_int_equal(off.job.tag_count, 0);
    cli_place_free(&off);
    /* --place off with --job-id and --node: the user's member, its tags after the user's own
     * (a tag of the user's with the key wins) */
    const char *mine[] = {"node=mine"};
    cli_options given = {0};
    given.job = (rt_job)RT_JOB_INIT;
    given.job.tags = mine;
    given.job.tag_count = 1;
    given.place_off = true;
    given.job_id = "J1";
    given.node = "w4";
    cli_place_apply(&given);
    assert_string_equal(given.member.job_id, "J1");
    assert_string_equal(given.member.node, "w4");
    assert_string_equal(given.member.from, "given");
    assert_int_equal(given.member.rank, -1);
    assert_int_equal(given.job.tag_count, 2);
    assert_string_equal(given.job.tags[0], "node=mine");
    assert_string_equal(given.job.tags[1], "job_id=J1");
    cli_place_free(&given);
    unsetenv("SLURM_JOB_ID");
    unsetenv("SLURM_JOB_NAME");
    unsetenv("SLURM_JOB_USER");
    unsetenv("SLURM_JOB_PARTITION");
    unsetenv("SLURM_CPUS_ON_NODE");
    if (old_path)
        setenv("PATH", old_path, 1);
    free(old_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothing_found),
        cmocka_unit_test(slurm_full),
        cmocka_unit_test(slurm_fallbacks),
        cmocka_unit_test(slurm_gpu_forms),
        cmocka_unit_test(slurm_task_share),
        cmocka_unit_test(slurm_malformed),
        cmocka_unit_test(slurm_durations),
        cmocka_unit_test(slurm_answers),
        cmocka_unit_test(slurm_end_time_variables),
        cmocka_unit_test(query_scontrol),
        cmocka_unit_test(query_squeue),
        cmocka_unit_test(query_failures),
        cmocka_unit_test(run_output_bounded),
        cmocka_unit_test(member_of_each_launcher),
        cmocka_unit_test(member_malformed),
        cmocka_unit_test(k8s_quantities),
        cmocka_unit_test(k8s_env),
        cmocka_unit_test(github_env),
        cmocka_unit_test(cli_merges_under_the_user),
    };
    return cmocka_run_group_tests(tests, setup, teardown_bin);
}
