/* test_sentinel.c - the Sentinel API's pure parts (stream/sentinel.h): the register and finish
 * bodies parsed back with jansson (every field, its type, every absence), the replies of /runs
 * and refresh-credentials (real shapes, hostile ones: wrong types, huge strings, missing fields,
 * header injection), and ISO 8601 times. */
#include "unit.h"

#include <jansson.h>
#include <math.h>
#include <time.h>

#include "stream/sentinel.h"

#define body unit_body

/* The body in b parsed back (fails the test when it is not a JSON object); b is freed. */
static json_t *parse_back(rt_buf *b)
{
    assert_non_null(b->data);
    assert_int_equal(strlen(b->data), b->len);
    json_error_t e;
    json_t *o = json_loadb(b->data, b->len, JSON_REJECT_DUPLICATES, &e);
    if (!json_is_object(o))
        fail_msg("not a JSON object: %s (%s)", b->data, e.text);
    rt_buf_free(b);
    return o;
}

static const char *str_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        fail_msg("%s is not a string", key);
    return json_string_value(v);
}

static void no_nulls(json_t *o)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        if (json_is_null(v))
            fail_msg("%s is null", k);
    }
}

static const char *const ARGV[] = {"python", "train.py", "--name=\"a b\"", "back\\slash", "caf\xc3\xa9", NULL};
static const char *const TAGS[] = {"team=ml", "gpu=a100", "novalue", "=x", NULL, "k="};

static rt_job full_job(void)
{
    rt_job j = RT_JOB_INIT;
    j.job_name = "train";
    j.project_name = "proj";
    j.stage_name = "stage";
    j.task_name = "task";
    j.team = "team-a";
    j.env = "prod";
    j.language = "python";
    j.orchestrator = "airflow";
    j.executor = "k8s";
    j.external_run_id = "ext-42";
    j.container_image = "img:1";
    j.tags = TAGS;
    j.tag_count = RT_ARRAY_LEN(TAGS);
    return j;
}

static rt_host full_host(void)
{
    rt_host h;
    memset(&h, 0, sizeof h);
    h.hostname = "box";
    h.host_id = "abc123";
    h.ip = "10.0.0.5";
    h.vcpus = 8;
    h.cpu_model = "AMD EPYC 7R13";
    h.memory_mib = 15788.2109375;
    h.gpu_model = "Tesla T4";
    h.gpu_count = 1;
    h.gpu_memory_mib = 15360.0;
    h.storage_gb = 1000.204886016;
    h.kernel = "6.1.0";
    h.os = "Debian";
    h.allocation = "shared";
    return h;
}

/* Every field, with its type; nothing else (no pid, no kernel/os, no null). */
static void register_full(void **state)
{
    (void)state;
    rt_job j = full_job();
    rt_host h = full_host();
    rt_cloud c = {.vendor_id = "aws", .account_id = "123456789012", .region_id = "us-east-1",
                  .zone_id = "use1-az1", .instance_type = "g4dn.xlarge", .discovery_secs = 0.5};
    rt_sentinel_run run = {.job = &j, .command = ARGV, .host = &h, .cloud = &c, .allocation = "dedicated"};
    rt_buf b;
    assert_int_equal(rt_sentinel_register_body(&run, &b), RT_OK);
    assert_null(strchr(b.data, '\n'));
    json_t *o = parse_back(&b);
    no_nulls(o);
    const struct {
        const char *k, *v;
    } strs[] = {{"job_name", "train"},           {"project_name", "proj"},
                {"stage_name", "stage"},         {"task_name", "task"},
                {"team", "team-a"},              {"env", "prod"},
                {"language", "python"},          {"orchestrator", "airflow"},
                {"executor", "k8s"},             {"external_run_id", "ext-42"},
                {"container_image", "img:1"},    {"host_id", "abc123"},
                {"host_hostname", "box"},        {"host_ip", "10.0.0.5"},
                {"host_cpu_model", "AMD EPYC 7R13"}, {"host_gpu_model", "Tesla T4"},
                {"host_server_allocation", "dedicated"}, {"cloud_vendor_id", "aws"},
                {"cloud_account_id", "123456789012"}, {"cloud_region_id", "us-east-1"},
                {"cloud_zone_id", "use1-az1"},   {"cloud_instance_type", "g4dn.xlarge"}};
    for (size_t i = 0; i < RT_ARRAY_LEN(strs); i++)
        assert_string_equal(str_of(o, strs[i].k), strs[i].v);
    /* integers where the figure is whole, 3 decimals otherwise */
    assert_true(json_is_integer(json_object_get(o, "host_vcpus")));
    assert_int_equal(json_integer_value(json_object_get(o, "host_vcpus")), 8);
    assert_true(json_is_integer(json_object_get(o, "host_gpu_count")));
    assert_int_equal(json_integer_value(json_object_get(o, "host_gpu_count")), 1);
    assert_true(json_is_integer(json_object_get(o, "host_gpu_memory_mib")));
    assert_int_equal(json_integer_value(json_object_get(o, "host_gpu_memory_mib")), 15360);
    assert_true(json_is_real(json_object_get(o, "host_memory_mib")));
    assert_true(json_real_value(json_object_get(o, "host_memory_mib")) == 15788.211);
    assert_true(json_real_value(json_object_get(o, "host_storage_gb")) == 1000.205);
    /* the command: a string holding the compact JSON array of the argv */
    const char *cmd = str_of(o, "command");
    assert_int_equal(cmd[0], '[');
    assert_null(strstr(cmd, "\", \"")); /* compact */
    json_t *argv = json_loads(cmd, 0, NULL);
    assert_true(json_is_array(argv));
    assert_int_equal(json_array_size(argv), 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(json_string_value(json_array_get(argv, i)), ARGV[i]);
    json_decref(argv);
    /* tags: only the k=v ones, in order */
    json_t *tags = json_object_get(o, "tags");
    assert_true(json_is_array(tags));
    assert_int_equal(json_array_size(tags), 3);
    assert_string_equal(json_string_value(json_array_get(tags, 0)), "team=ml");
    assert_string_equal(json_string_value(json_array_get(tags, 1)), "gpu=a100");
    assert_string_equal(json_string_value(json_array_get(tags, 2)), "k=");
    assert_int_equal(json_object_size(o), RT_ARRAY_LEN(strs) + 5 + 2);
    assert_null(json_object_get(o, "pid"));
    assert_null(json_object_get(o, "run_id"));
    json_decref(o);
    /* the exact text of the command, as docs/contracts.md §5 shows it */
    const char *const two[] = {"python", "train.py", NULL};
    rt_sentinel_run r2 = {.command = two};
    assert_int_equal(rt_sentinel_register_body(&r2, &b), RT_OK);
    assert_string_equal(b.data, "{\"command\":\"[\\\"python\\\",\\\"train.py\\\"]\"}");
    rt_buf_free(&b);
}

/* Absent values are left out: NULL and empty strings, NaN, RT_NULL_I64, no tags, no argv. */
static void register_absent(void **state)
{
    (void)state;
    rt_buf b;
    rt_sentinel_run none = {0};
    assert_int_equal(rt_sentinel_register_body(&none, &b), RT_OK);
    assert_string_equal(b.data, "{}");
    rt_buf_free(&b);

    rt_job j = RT_JOB_INIT;
    j.job_name = "";
    j.team = "t";
    const char *const empty_tags[] = {"plain", NULL};
    j.tags = empty_tags;
    j.tag_count = 2;
    rt_host h;
    memset(&h, 0, sizeof h);
    h.vcpus = RT_NULL_I64;
    h.gpu_count = RT_NULL_I64;
    h.memory_mib = h.gpu_memory_mib = NAN;
    h.storage_gb = INFINITY;
    h.hostname = "";
    rt_cloud c;
    memset(&c, 0, sizeof c);
    const char *const no_args[] = {NULL};
    rt_sentinel_run run = {.job = &j, .command = no_args, .host = &h, .cloud = &c};
    assert_int_equal(rt_sentinel_register_body(&run, &b), RT_OK);
    json_t *o = parse_back(&b);
    assert_string_equal(str_of(o, "team"), "t");
    json_t *tags = json_object_get(o, "tags");
    assert_true(json_is_array(tags));
    assert_int_equal(json_array_size(tags), 0); /* tags given, none of them k=v */
    assert_int_equal(json_object_size(o), 2);
    json_decref(o);

    /* zero is a figure, not an absence; the host's allocation when the run has none */
    h.gpu_count = 0;
    h.gpu_memory_mib = 0;
    h.allocation = "shared";
    rt_sentinel_run r2 = {.host = &h};
    assert_int_equal(rt_sentinel_register_body(&r2, &b), RT_OK);
    o = parse_back(&b);
    assert_int_equal(json_integer_value(json_object_get(o, "host_gpu_count")), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "host_gpu_memory_mib")), 0);
    assert_string_equal(str_of(o, "host_server_allocation"), "shared");
    assert_int_equal(json_object_size(o), 3);
    json_decref(o);

    /* a huge figure that cannot be rounded is left out, not an error */
    h.memory_mib = 1e308;
    assert_int_equal(rt_sentinel_register_body(&r2, &b), RT_OK);
    o = parse_back(&b);
    assert_null(json_object_get(o, "host_memory_mib"));
    json_decref(o);

    assert_int_equal(rt_sentinel_register_body(NULL, &b), RT_ERR_INVALID);
    assert_int_equal(rt_sentinel_register_body(&none, NULL), RT_ERR_INVALID);
}

/* Bytes that are not UTF-8 become U+FFFD; well-formed sequences stay as they are. */
static void register_utf8(void **state)
{
    (void)state;
    const struct {
        const char *in, *out;
    } cases[] = {
        {"ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"a\xff" "b", "a\xef\xbf\xbd" "b"},
        {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},             /* overlong '/' */
        {"\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* overlong, 3 bytes */
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* a surrogate */
        {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* past U+10FFFF */
        {"end\xe2\x82", "end\xef\xbf\xbd\xef\xbf\xbd"},       /* cut short */
        {"\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},             /* U+10FFFF itself */
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++) {
        const char *const argv[] = {cases[i].in, NULL};
        rt_host h;
        memset(&h, 0, sizeof h);
        h.vcpus = h.gpu_count = RT_NULL_I64;
        h.memory_mib = h.gpu_memory_mib = h.storage_gb = NAN;
        h.cpu_model = cases[i].in;
        rt_sentinel_run run = {.command = argv, .host = &h};
        rt_buf b;
        assert_int_equal(rt_sentinel_register_body(&run, &b), RT_OK);
        json_t *o = parse_back(&b);
        assert_string_equal(str_of(o, "host_cpu_model"), cases[i].out);
        json_t *a = json_loads(str_of(o, "command"), 0, NULL);
        assert_string_equal(json_string_value(json_array_get(a, 0)), cases[i].out);
        json_decref(a);
        json_decref(o);
    }
}

/* finish: the s3 shape, the inline shape, the status, the time; never a run_id. */
static void finish_bodies(void **state)
{
    (void)state;
    rt_buf b;
    const char *uris[] = {"s3://bkt/pre/run1/000000.csv.gz", "s3://bkt/pre/run1/000001.csv.gz"};
    assert_int_equal(rt_sentinel_finish_body(0, false, 1795341600.999, uris, 2, "ignored", 7, &b), RT_OK);
    json_t *o = parse_back(&b);
    no_nulls(o);
    assert_int_equal(json_object_size(o), 5);
    assert_true(json_is_integer(json_object_get(o, "exit_code")));
    assert_int_equal(json_integer_value(json_object_get(o, "exit_code")), 0);
    assert_string_equal(str_of(o, "run_status"), "finished");
    assert_string_equal(str_of(o, "finished_at"), "2026-11-22T10:00:00Z");
    assert_string_equal(str_of(o, "data_source"), "s3");
    json_t *list = json_object_get(o, "data_uris");
    assert_int_equal(json_array_size(list), 2);
    assert_string_equal(json_string_value(json_array_get(list, 1)), uris[1]);
    assert_null(json_object_get(o, "data_csv"));
    assert_null(json_object_get(o, "run_id"));
    json_decref(o);

    /* inline: the raw CSV text (newlines, quotes, a NUL-free tail past csv_len not taken) */
    const char *csv = "timestamp,system_processes\n1.000,\"3\"\n2.000,4\nNOT THIS";
    size_t csv_len = strlen(csv) - strlen("NOT THIS");
    assert_int_equal(rt_sentinel_finish_body(137, true, 0, NULL, 0, csv, csv_len, &b), RT_OK);
    o = parse_back(&b);
    assert_int_equal(json_object_size(o), 5);
    assert_int_equal(json_integer_value(json_object_get(o, "exit_code")), 137);
    assert_string_equal(str_of(o, "run_status"), "failed");
    assert_string_equal(str_of(o, "finished_at"), "1970-01-01T00:00:00Z");
    assert_string_equal(str_of(o, "data_source"), "inline");
    assert_int_equal(json_string_length(json_object_get(o, "data_csv")), csv_len);
    assert_memory_equal(str_of(o, "data_csv"), csv, csv_len);
    assert_null(json_object_get(o, "data_uris"));
    json_decref(o);

    /* a non-zero exit that is a clean stop is "finished"; no CSV at all gives "" */
    assert_int_equal(rt_sentinel_finish_body(143, false, 951782400.5, NULL, 0, NULL, 0, &b), RT_OK);
    o = parse_back(&b);
    assert_string_equal(str_of(o, "run_status"), "finished");
    assert_string_equal(str_of(o, "finished_at"), "2000-02-29T00:00:00Z");
    assert_string_equal(str_of(o, "data_csv"), "");
    json_decref(o);

    /* a large CSV goes through whole */
    size_t big = 3u << 20;
    char *large = malloc(big);
    assert_non_null(large);
    for (size_t i = 0; i < big; i++)
        large[i] = i % 64 == 63 ? '\n' : (char)('0' + i % 10);
    assert_int_equal(rt_sentinel_finish_body(1, true, 1735689599, NULL, 0, large, big, &b), RT_OK);
    o = parse_back(&b);
    assert_int_equal(json_string_length(json_object_get(o, "data_csv")), big);
    assert_memory_equal(str_of(o, "data_csv"), large, big);
    assert_string_equal(str_of(o, "finished_at"), "2024-12-31T23:59:59Z");
    json_decref(o);
    free(large);

    assert_int_equal(rt_sentinel_finish_body(0, false, NAN, NULL, 0, "", 0, &b), RT_ERR_INVALID);
    assert_int_equal(rt_sentinel_finish_body(0, false, -1, NULL, 0, "", 0, &b), RT_ERR_INVALID);
    assert_int_equal(rt_sentinel_finish_body(0, false, 1e15, NULL, 0, "", 0, &b), RT_ERR_INVALID);
    assert_int_equal(rt_sentinel_finish_body(0, false, 1, NULL, 1, "", 0, &b), RT_ERR_INVALID);
    const char *holes[] = {"s3://a/b", NULL};
    assert_int_equal(rt_sentinel_finish_body(0, false, 1, holes, 2, "", 0, &b), RT_ERR_INVALID);
    assert_int_equal(rt_sentinel_finish_body(0, false, 1, NULL, 0, NULL, 5, &b), RT_ERR_INVALID);
    assert_int_equal(rt_sentinel_finish_body(0, false, 1, NULL, 0, "", 0, NULL), RT_ERR_INVALID);
}

#define CREDS "\"upload_credentials\":{\"access_key\":\"ASIAXAMPLE\",\"secret_key\":\"SECRETVALUE/x+y\"," \
              "\"session_token\":\"TOKENVALUE==\",\"expiration\":\"2026-11-22T10:00:00Z\"}"

static void fill_marks(char *run_id, size_t cap, rt_s3_target *t, rt_s3_credentials *c)
{
    memset(run_id, 'R', cap - 1);
    run_id[cap - 1] = '\0';
    memset(t, 0, sizeof *t);
    rt_copy_str(t->bucket, sizeof t->bucket, "old-bucket");
    rt_copy_str(t->prefix, sizeof t->prefix, "old/prefix");
    rt_copy_str(t->endpoint, sizeof t->endpoint, "http://127.0.0.1:9000");
    rt_copy_str(t->region, sizeof t->region, "eu-west-1");
    memset(c, 0, sizeof *c);
    rt_copy_str(c->access_key, sizeof c->access_key, "OLDKEY");
    c->expires_unix = 42;
}

static void parse_register_good(void **state)
{
    (void)state;
    char id[64], err[256];
    rt_s3_target t;
    rt_s3_credentials c;
    size_t n;
    const char *b = body("{\"run_id\":\"3f2a-b_9.x~\",\"upload_uri_prefix\":\"s3://sentinel-runs/team/2026/\"," CREDS
                         ",\"extra\":[1,2,{}]}",
                         &n);
    fill_marks(id, sizeof id, &t, &c);
    assert_true(rt_sentinel_parse_register(b, n, id, sizeof id, &t, &c, err, sizeof err));
    assert_string_equal(err, "");
    assert_string_equal(id, "3f2a-b_9.x~");
    assert_string_equal(t.bucket, "sentinel-runs");
    assert_string_equal(t.prefix, "team/2026");
    assert_string_equal(t.endpoint, "http://127.0.0.1:9000"); /* untouched */
    assert_string_equal(t.region, "eu-west-1");
    assert_string_equal(c.access_key, "ASIAXAMPLE");
    assert_string_equal(c.secret_key, "SECRETVALUE/x+y");
    assert_string_equal(c.session_token, "TOKENVALUE==");
    assert_true(c.expires_unix == 1795341600.0);

    /* expires_at, an integer run id, a bucket alone, no expiry at all */
    const struct {
        const char *json, *id, *bucket, *prefix;
        double exp;
    } ok[] = {
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://b-1.x/p\",\"upload_credentials\":{\"access_key\":\"A\","
         "\"secret_key\":\"S\",\"session_token\":\"T\",\"expires_at\":\"2026-11-22T12:00:00+02:00\"}}",
         "r", "b-1.x", "p", 1795341600.0},
        {"{\"run_id\":12345,\"upload_uri_prefix\":\"s3://bkt\",\"upload_credentials\":{\"access_key\":\"A\","
         "\"secret_key\":\"S\",\"session_token\":\"T\"}}",
         "12345", "bkt", "", NAN},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://bkt///a/b//\",\"upload_credentials\":{\"access_key\":\"A\","
         "\"secret_key\":\"S\",\"session_token\":\"T\",\"expiration\":null,\"expires_at\":\"2026-11-22T10:00:00.5Z\"}}",
         "r", "bkt", "a/b", 1795341600.5},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(ok); i++) {
        b = body(ok[i].json, &n);
        fill_marks(id, sizeof id, &t, &c);
        if (!rt_sentinel_parse_register(b, n, id, sizeof id, &t, &c, err, sizeof err))
            fail_msg("case %zu: %s", i, err);
        assert_string_equal(id, ok[i].id);
        assert_string_equal(t.bucket, ok[i].bucket);
        assert_string_equal(t.prefix, ok[i].prefix);
        if (isnan(ok[i].exp))
            assert_true(isnan(c.expires_unix));
        else
            assert_true(c.expires_unix == ok[i].exp);
    }
    body(NULL, NULL);
}

/* Hostile and broken replies: false, err names the problem, outputs untouched, no secret in err. */
static void parse_register_hostile(void **state)
{
    (void)state;
    static char huge[9000];
    memset(huge, 'A', sizeof huge - 1);
    static char big_token[5200];
    int k = snprintf(big_token, sizeof big_token,
                     "{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://bkt/p\",\"upload_credentials\":{\"access_key\":"
                     "\"A\",\"secret_key\":\"SECRETVALUE\",\"session_token\":\"");
    memset(big_token + k, 'T', 4096);
    snprintf(big_token + k + 4096, sizeof big_token - (size_t)k - 4096, "\"}}");
    static char big_prefix[1500];
    k = snprintf(big_prefix, sizeof big_prefix, "{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://bkt/");
    memset(big_prefix + k, 'p', 1024);
    snprintf(big_prefix + k + 1024, sizeof big_prefix - (size_t)k - 1024, "\"," CREDS "}");
    static char long_id[400];
    snprintf(long_id, sizeof long_id, "{\"run_id\":\"%.70s\",\"upload_uri_prefix\":\"s3://bkt/p\"," CREDS "}", huge);
#define P "\"upload_uri_prefix\":\"s3://bkt/p\""
    const struct {
        const char *json, *want;
    } bad[] = {
        {"", "empty"},
        {"not json", "not JSON"},
        {"[1]", "not a JSON object"},
        {"{\"run_id\":\"a\",\"run_id\":\"b\"," P "," CREDS "}", "not JSON"}, /* duplicate key */
        {"{" P "," CREDS "}", "run_id is missing"},
        {"{\"run_id\":null," P "," CREDS "}", "run_id is not a string"},
        {"{\"run_id\":[]," P "," CREDS "}", "run_id is not a string"},
        {"{\"run_id\":-3," P "," CREDS "}", "run_id is not a string"},
        {"{\"run_id\":1.5," P "," CREDS "}", "run_id is not a string"},
        {"{\"run_id\":\"\"," P "," CREDS "}", "URL path"},
        {"{\"run_id\":\"../etc\"," P "," CREDS "}", "URL path"},
        {"{\"run_id\":\"..\"," P "," CREDS "}", "URL path"},
        {"{\"run_id\":\"a b\"," P "," CREDS "}", "URL path"},
        {"{\"run_id\":\"a\\u0000b\"," P "," CREDS "}", "not JSON"}, /* jansson refuses NUL */
        {long_id, "run_id is too long"},
        {"{\"run_id\":\"r\"," CREDS "}", "upload_uri_prefix is missing"},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":7," CREDS "}", "upload_uri_prefix is not a string"},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"https://bkt/p\"," CREDS "}", "not an s3:// URI"},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://\"," CREDS "}", "bucket"},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://ab/p\"," CREDS "}", "bucket"},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://Bucket/p\"," CREDS "}", "bucket"},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://-bkt/p\"," CREDS "}", "bucket"},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://bk@t/p\"," CREDS "}", "bucket"},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://bkt/a/../b\"," CREDS "}", "segment"},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://bkt/a//b\"," CREDS "}", "segment"},
        {"{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://bkt/a\\r\\nX-Evil: 1\"," CREDS "}", "control"},
        {big_prefix, "too long"},
        {"{\"run_id\":\"r\"," P "}", "upload_credentials is missing"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":\"SECRETVALUE\"}", "upload_credentials is not an object"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"secret_key\":\"SECRETVALUE\",\"session_token\":\"T\"}}",
         "access_key is missing"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"access_key\":\"A\",\"session_token\":\"T\"}}",
         "secret_key is missing"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"access_key\":\"A\",\"secret_key\":\"SECRETVALUE\"}}",
         "session_token is missing"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"access_key\":5,\"secret_key\":\"SECRETVALUE\","
         "\"session_token\":\"T\"}}",
         "access_key is not a string"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"access_key\":\"\",\"secret_key\":\"SECRETVALUE\","
         "\"session_token\":\"T\"}}",
         "access_key is empty"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"access_key\":\"A\",\"secret_key\":\"SECRET VALUE\","
         "\"session_token\":\"T\"}}",
         "secret_key is not printable ASCII"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"access_key\":\"A\",\"secret_key\":\"SECRETVALUE\","
         "\"session_token\":\"T\\r\\nX-Evil: 1\"}}",
         "session_token is not printable ASCII"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"access_key\":\"A\",\"secret_key\":\"SECRETVALUE\","
         "\"session_token\":\"T\\u00e9\"}}",
         "session_token is not printable ASCII"},
        {big_token, "session_token is too long"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"access_key\":\"A\",\"secret_key\":\"SECRETVALUE\","
         "\"session_token\":\"T\",\"expiration\":\"tomorrow\"}}",
         "expiration is not an ISO 8601 time"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"access_key\":\"A\",\"secret_key\":\"SECRETVALUE\","
         "\"session_token\":\"T\",\"expiration\":1795341600}}",
         "expiration is not an ISO 8601 time"},
        {"{\"run_id\":\"r\"," P ",\"upload_credentials\":{\"access_key\":\"A\",\"secret_key\":\"SECRETVALUE\","
         "\"session_token\":\"T\",\"expires_at\":\"2026-02-30T00:00:00Z\"}}",
         "expires_at is not an ISO 8601 time"},
    };
#undef P
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        char id[64], err[256];
        rt_s3_target t;
        rt_s3_credentials c;
        fill_marks(id, sizeof id, &t, &c);
        size_t n;
        const char *b = body(bad[i].json, &n);
        if (rt_sentinel_parse_register(b, n, id, sizeof id, &t, &c, err, sizeof err))
            fail_msg("case %zu accepted: %s", i, bad[i].json);
        if (!strstr(err, bad[i].want))
            fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err, bad[i].want);
        assert_null(strstr(err, "SECRET"));
        assert_null(strstr(err, "TOKEN"));
        assert_int_equal(strspn(id, "R"), sizeof id - 1);
        assert_string_equal(t.bucket, "old-bucket");
        assert_string_equal(t.prefix, "old/prefix");
        assert_string_equal(c.access_key, "OLDKEY");
        assert_true(c.expires_unix == 42);
        /* the same reply as refresh: its credential problems are found the same way */
        if (strstr(bad[i].want, "upload_credentials") || strstr(bad[i].want, "_key") ||
            strstr(bad[i].want, "session_token") || strstr(bad[i].want, "expir")) {
            assert_false(rt_sentinel_parse_refresh(b, n, &c, err, sizeof err));
            assert_non_null(strstr(err, bad[i].want));
            assert_string_equal(c.access_key, "OLDKEY");
        }
    }
    /* a body not NUL-terminated, cut anywhere: never accepted, never read past */
    const char *full = "{\"run_id\":\"r\",\"upload_uri_prefix\":\"s3://bkt/p\"," CREDS "}";
    for (size_t cut = 0; cut < strlen(full); cut++) {
        char id[64], err[8];
        rt_s3_target t;
        rt_s3_credentials c;
        fill_marks(id, sizeof id, &t, &c);
        char *part = malloc(cut ? cut : 1);
        memcpy(part, full, cut);
        assert_false(rt_sentinel_parse_register(part, cut, id, sizeof id, &t, &c, err, sizeof err));
        assert_true(strlen(err) < sizeof err); /* cut to the room given */
        free(part);
    }
    /* the run id must fit the caller's room; no err room at all is fine */
    char small[4];
    rt_s3_target t;
    rt_s3_credentials c;
    size_t n;
    const char *b = body("{\"run_id\":\"abcd\",\"upload_uri_prefix\":\"s3://bkt/p\"," CREDS "}", &n);
    assert_false(rt_sentinel_parse_register(b, n, small, sizeof small, &t, &c, NULL, 0));
    char five[5];
    assert_true(rt_sentinel_parse_register(b, n, five, sizeof five, &t, &c, NULL, 0));
    assert_string_equal(five, "abcd");
    assert_false(rt_sentinel_parse_register(b, n, NULL, 5, &t, &c, NULL, 0));
    assert_false(rt_sentinel_parse_register(b, n, five, sizeof five, NULL, &c, NULL, 0));
    assert_false(rt_sentinel_parse_register(NULL, 0, five, sizeof five, &t, &c, NULL, 0));
    body(NULL, NULL);
}

static void parse_refresh(void **state)
{
    (void)state;
    rt_s3_credentials c;
    memset(&c, 0, sizeof c);
    char err[128];
    size_t n;
    const char *b = body("{" CREDS "}", &n);
    assert_true(rt_sentinel_parse_refresh(b, n, &c, err, sizeof err));
    assert_string_equal(c.access_key, "ASIAXAMPLE");
    assert_string_equal(c.secret_key, "SECRETVALUE/x+y");
    assert_string_equal(c.session_token, "TOKENVALUE==");
    assert_true(c.expires_unix == 1795341600.0);
    /* a token of exactly the most that fits */
    static char json[4300];
    int k = snprintf(json, sizeof json,
                     "{\"upload_credentials\":{\"access_key\":\"A\",\"secret_key\":\"S\",\"session_token\":\"");
    memset(json + k, 't', 4095);
    snprintf(json + k + 4095, sizeof json - (size_t)k - 4095, "\",\"expires_at\":\"2026-11-22t10:00:00-0130\"}}");
    b = body(json, &n);
    assert_true(rt_sentinel_parse_refresh(b, n, &c, err, sizeof err));
    assert_int_equal(strlen(c.session_token), 4095);
    assert_true(c.expires_unix == 1795341600.0 + 5400);
    b = body("{\"upload_credentials\":{}}", &n);
    assert_false(rt_sentinel_parse_refresh(b, n, &c, err, sizeof err));
    assert_string_equal(err, "upload_credentials.access_key is missing");
    assert_int_equal(strlen(c.session_token), 4095); /* untouched */
    assert_false(rt_sentinel_parse_refresh(b, n, NULL, err, sizeof err));
    body(NULL, NULL);
}

/* The finish's reply: a whole JSON object (issue 67 item 4), nothing less. */
static void parse_finish(void **state)
{
    (void)state;
    static const struct {
        const char *json; /* NULL: no body */
        const char *err;  /* NULL: taken */
    } cases[] = {
        {"{\"run_id\":\"r-1\",\"run_status\":\"finished\"}", NULL},
        {"{\"run\":{\"run_id\":\"r-1\"},\"processing\":{\"status\":\"ok\"}}", NULL}, /* the live service's */
        {"{}", NULL},
        {"{\"run_id\":\"r-1\",\"run_st", "the reply is not JSON"}, /* cut, Content-Length right */
        {"<html><body>OK</body></html>", "the reply is not JSON"},
        {"[1]", "the reply is not a JSON object"},
        {NULL, "the reply is empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[128];
        size_t n = 0;
        const char *b = cases[i].json ? body(cases[i].json, &n) : NULL;
        bool ok = rt_sentinel_parse_finish(b, n, err, sizeof err);
        assert_true(ok == !cases[i].err);
        assert_string_equal(err, cases[i].err ? cases[i].err : "");
    }
    body(NULL, NULL);
}

static void iso8601(void **state)
{
    (void)state;
    const struct {
        const char *s;
        double t;
    } good[] = {
        {"2026-11-22T10:00:00Z", 1795341600},
        {"2026-11-22t10:00:00z", 1795341600},
        {"2026-11-22 10:00:00Z", 1795341600},
        {"2026-11-22T10:00:00", 1795341600}, /* no zone: UTC */
        {"2026-11-22T10:00:00.25Z", 1795341600.25},
        {"2026-11-22T10:00:00,5Z", 1795341600.5},
        {"2026-11-22T10:00:00.123456789012345Z", 1795341600.123456789012345},
        {"2026-11-22T12:00:00+02:00", 1795341600},
        {"2026-11-22T05:00:00-0500", 1795341600},
        {"2026-11-22T11:00:00+01", 1795341600},
        {"2026-11-22T10:00:00+00:00", 1795341600},
        {"2026-11-22T10:00:00-00:00", 1795341600},
        {"2000-02-29T00:00:00Z", 951782400},
        {"1970-01-01T00:00:00Z", 0},
        {"1969-12-31T23:59:59Z", -1},
        {"2024-12-31T23:59:59Z", 1735689599},
        {"2100-03-01T00:00:00Z", 4107542400},
        {"2016-12-31T23:59:60Z", 1483228800}, /* a leap second: the next second */
        {"0000-01-01T00:00:00Z", -62167219200},
        {"9999-12-31T23:59:59Z", 253402300799},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(good); i++) {
        double t = rt_iso8601_parse(good[i].s);
        if (!(fabs(t - good[i].t) < 1e-6))
            fail_msg("%s: %.6f, want %.6f", good[i].s, t, good[i].t);
    }
    const char *bad[] = {
        "", "2026", "2026-11-22", "2026-11-22T10:00", "2026-11-22T10:00:00ZZ", "2026-11-22T10:00:00Z ",
        " 2026-11-22T10:00:00Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-02-29T00:00:00Z",
        "2100-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-00T00:00:00Z", "2026-11-22T24:00:00Z",
        "2026-11-22T10:60:00Z", "2026-11-22T10:00:61Z", "2026-11-22T10:00:00.Z", "2026-11-22T10:00:00+2:00",
        "2026-11-22T10:00:00+24:00", "2026-11-22T10:00:00+02:60", "2026-11-22T10:00:00+02:0",
        "2026-11-22T10:00:00+020", "2026-11-22T10:00:00+02:00:00", "2026-11-22X10:00:00Z", "26-11-22T10:00:00Z",
        "+2026-11-22T10:00:00Z", "2026-1-22T10:00:00Z", "2026-11-22T10:00:00 Z", "1795341600", "tomorrow",
        "2026-11-22T10:00:00\x01", "\xef\xbc\x92\x30\x32\x36-11-22T10:00:00Z",
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++)
        if (!isnan(rt_iso8601_parse(bad[i])))
            fail_msg("accepted \"%s\"", bad[i]);
    assert_true(isnan(rt_iso8601_parse(NULL)));
    /* every day of a leap and a common year round-trips against gmtime_r */
    for (int64_t t = 946684800; t < 946684800 + 2 * 366 * 86400; t += 86400 + 3661) {
        time_t tt = (time_t)t;
        struct tm tm;
        char s[32];
        gmtime_r(&tt, &tm);
        strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%SZ", &tm);
        assert_true(rt_iso8601_parse(s) == (double)t);
    }
}

/* The Rust resource-tracker's date tests (src/sentinel/run.rs at 3825a8c: days_since_epoch,
 * parse_iso8601_secs, unix_secs_to_iso8601) as vectors of ours: the same answers, except that
 * ours reads times before 1970 (the Rust helper refuses them) as the general parser it is. */
static void rust_date_vectors(void **state)
{
    (void)state;
    assert_true(rt_iso8601_parse("1970-01-01T00:00:00Z") == 0);
    assert_true(rt_iso8601_parse("1970-01-02T00:00:00Z") == 86400);
    assert_true(rt_iso8601_parse("2026-04-01T00:00:00Z") == 20544.0 * 86400);
    assert_true(rt_iso8601_parse("2026-04-01T00:00:00+00:00") == rt_iso8601_parse("2026-04-01T00:00:00Z"));
    assert_true(rt_iso8601_parse("2000-01-01T00:00:00Z") == 946684800);
    assert_true(rt_iso8601_parse("2026-04-01T12:34:56Z") == 1775046896);
    assert_true(rt_iso8601_parse("2013-05-24T00:00:00Z") == 1369353600);
    assert_true(rt_iso8601_parse("2026-04-03T15:30:45Z") == 20546.0 * 86400 + 15 * 3600 + 30 * 60 + 45);
    assert_true(rt_iso8601_parse("2000-02-29T12:00:00Z") == 951825600);
    const char *bad[] = {"1970-00-01T00:00:00Z", "1970-13-01T00:00:00Z", "1970-01-00T00:00:00Z",
                         "1970-01-32T00:00:00Z", "2026-04-01", "not-a-date"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++)
        if (!isnan(rt_iso8601_parse(bad[i])))
            fail_msg("accepted \"%s\"", bad[i]);
    assert_true(rt_iso8601_parse("1969-12-31T00:00:00Z") == -86400); /* Rust: None (before 1970) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(register_full),       cmocka_unit_test(register_absent), cmocka_unit_test(register_utf8),
        cmocka_unit_test(finish_bodies),       cmocka_unit_test(parse_register_good),
        cmocka_unit_test(parse_register_hostile), cmocka_unit_test(parse_refresh), cmocka_unit_test(parse_finish),
        cmocka_unit_test(iso8601),
        cmocka_unit_test(rust_date_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
