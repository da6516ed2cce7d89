/* test_stream.c - the uploader (stream.c) against a fake network (stream_int.h): batches and
 * their seqs, retries, spill files, the memory bound, credentials refresh, registration
 * failure, the last failure (rt_stream_errmsg), and the finish body (s3 URIs, or the rows that
 * did not reach S3 inline). The stream runs on a test clock (unit_clock.h) that the test steps
 * between rows: nothing sleeps to let time pass. */
#include "unit.h"
#include "unit_wait.h"
#include "unit_clock.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>

#include <netinet/in.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "core/gzip.h"
#include "net/curl.h"
#include "stream/stream_int.h"

#define MAXPUT 256
#define T0 1000.0 /* the test clock's start */

static rt_clock *orphan_clock; /* the clock of a thread left to end by itself: never freed */

/* What the fake network saw, and how it misbehaves. */
typedef struct fake {
    pthread_mutex_t mu;
    rt_clock *clk;          /* the stream's clock: how long a hang lasts */
    int register_fail;      /* POST /runs answers 503 while > 0 (counted down); -1: always */
    int put_fail;           /* PUT answers 500 while > 0 (counted down); -1: always */
    int put_ok_first;       /* with put_fail -1: this many PUTs succeed first */
    bool put_hang;          /* PUT takes its whole timeout, then fails (no reply: it may have landed) */
    bool put_unsent;        /* PUT fails at once, never sent (status -1: a refused connection) */
    const char *put_err;    /* a failing PUT's words (NULL: "HTTP 500") */
    double finish_hang;     /* POST /finish takes this long (ignoring its timeout), then fails */
    bool finish_returned;   /* the hung POST /finish came back */
    pthread_cond_t returned; /* signalled (under mu) then */
    double expires_in;      /* credentials' lifetime from now */
    int registers, refreshes, finishes, put_calls;
    char reg_body[8192];
    char reg_idem[128];     /* the Idempotency-Key of the last POST /runs */
    char *finish_body;
    char keys[MAXPUT][128];
    char access[MAXPUT][128]; /* the access key each successful PUT was signed with */
    rt_buf bodies[MAXPUT];
    int nput;                /* successful PUTs */
} fake;

static void iso(double unix_secs, char *out, size_t cap)
{
    time_t t = (time_t)unix_secs;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static rt_error fake_post(void *user, const char *url, const char *token, const char *idem, const char *body,
                          size_t len, double timeout, long *status, rt_buf *reply, char *err, size_t errlen)
{
    (void)timeout;
    fake *f = user;
    assert_string_equal(token, "TOKEN-SECRET");
    pthread_mutex_lock(&f->mu);
    double hang = strstr(url, "/finish") ? f->finish_hang : 0;
    pthread_mutex_unlock(&f->mu);
    if (hang > 0) {
        rt_clock_sleep_until(f->clk, rt_clock_now(f->clk) + hang);
        pthread_mutex_lock(&f->mu);
        f->finish_returned = true;
        pthread_cond_broadcast(&f->returned);
        pthread_mutex_unlock(&f->mu);
        *status = 0;
        snprintf(err, errlen, "Timeout was reached");
        return RT_ERR_IO;
    }
    pthread_mutex_lock(&f->mu);
    char exp[64], text[1024];
    iso(time(NULL) + f->expires_in, exp, sizeof exp);
    *status = 200;
    text[0] = '\0';
    size_t n = strlen(url);
    if (n >= 5 && strcmp(url + n - 5, "/runs") == 0) {
        f->registers++;
        assert_non_null(idem);
        snprintf(f->reg_idem, sizeof f->reg_idem, "%s", idem);
        snprintf(f->reg_body, sizeof f->reg_body, "%.*s", (int)len, body);
        if (f->register_fail) {
            if (f->register_fail > 0)
                f->register_fail--;
            *status = 503;
        } else {
            snprintf(text, sizeof text,
                     "{\"run_id\":\"r1\",\"upload_uri_prefix\":\"s3://bkt/pre\",\"upload_credentials\":{"
                     "\"access_key\":\"AK0\",\"secret_key\":\"SK\",\"session_token\":\"ST\",\"expiration\":\"%s\"}}",
                     exp);
        }
    } else if (strstr(url, "/refresh-credentials")) {
        assert_null(idem);
        f->refreshes++;
        snprintf(text, sizeof text,
                 "{\"upload_credentials\":{\"access_key\":\"AK%d\",\"secret_key\":\"SK\",\"session_token\":\"ST\","
                 "\"expiration\":\"%s\"}}",
                 f->refreshes, exp);
        f->expires_in = 3600;
    } else if (strstr(url, "/finish")) {
        f->finishes++;
        free(f->finish_body);
        f->finish_body = strndup(body, len);
        snprintf(text, sizeof text, "{}");
    } else {
        *status = 404;
    }
    pthread_mutex_unlock(&f->mu);
    rt_buf_init(reply, 1 << 20);
    rt_buf_append(reply, text, strlen(text) + 1);
    reply->len--;
    return RT_OK;
}

static rt_error fake_put(void *user, const rt_s3_target *t, const rt_s3_credentials *c, const char *key,
                         const void *body, size_t len, double timeout, long *status, char *err, size_t errlen)
{
    fake *f = user;
    assert_string_equal(t->bucket, "bkt");
    assert_string_equal(t->region, "eu-central-1");
    pthread_mutex_lock(&f->mu);
    f->put_calls++;
    bool hang = f->put_hang, unsent = f->put_unsent;
    bool fail = f->put_fail > 0 || (f->put_fail < 0 && f->nput >= f->put_ok_first);
    if (f->put_fail > 0)
        f->put_fail--;
    pthread_mutex_unlock(&f->mu);
    if (hang) {
        rt_clock_sleep_until(f->clk, rt_clock_now(f->clk) + timeout);
        *status = 0;
        snprintf(err, errlen, "Timeout was reached");
        return RT_ERR_IO;
    }
    if (unsent) {
        *status = -1;
        snprintf(err, errlen, "Failed to connect to 127.0.0.1 port 9: Connection refused");
        return RT_ERR_IO;
    }
    if (fail) {
        *status = 500;
        snprintf(err, errlen, "%s", f->put_err ? f->put_err : "HTTP 500");
        return RT_ERR_IO;
    }
    pthread_mutex_lock(&f->mu);
    assert_true(f->nput < MAXPUT);
    snprintf(f->keys[f->nput], sizeof f->keys[0], "%s", key);
    snprintf(f->access[f->nput], sizeof f->access[0], "%s", c->access_key);
    rt_buf_init(&f->bodies[f->nput], SIZE_MAX);
    rt_buf_append(&f->bodies[f->nput], body, len);
    f->nput++;
    *status = 200;
    pthread_mutex_unlock(&f->mu);
    return RT_OK;
}

static void fake_region(void *user, rt_s3_target *t, const rt_s3_credentials *c, double timeout)
{
    (void)user;
    (void)c;
    (void)timeout;
    snprintf(t->region, sizeof t->region, "eu-central-1");
}

static void fake_free(fake *f)
{
    for (int i = 0; i < f->nput; i++)
        rt_buf_free(&f->bodies[i]);
    free(f->finish_body);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->returned);
    rt_clock_test_free(f->clk);
}

/* The log callback of every test's stream: counts the messages, and those that came after
 * rt_stream_free returned (set log_freed then). */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static int log_count, log_after_free;
static bool log_freed;
static bool warned_moved;       /* a warning said the spill directory moved */
static const char *fallback_dir; /* the next start's spill_fallback_dir */
static const char *tmp_root;     /* the fallbacks' /tmp (main's) */

static void count_log(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    pthread_mutex_lock(&log_mu);
    if (level >= RT_LOG_WARN && strstr(msg, "cannot use the spill directory") && strstr(msg, "instead"))
        warned_moved = true;
    log_count++;
    log_after_free += log_freed;
    pthread_mutex_unlock(&log_mu);
}

/* The stream's settings for the tests: a fast interval, a temp spill dir. */
typedef struct fixture {
    fake f;
    char dir[64];
    rt_stream *st;
    rt_stream_options o;
    rt_cpu cpu;
    rt_memory mem;
    rt_sample s;
    int added;
    const char *spill; /* the spill dir when not dir */
    int csv_energy;    /* the stream's rows with the energy columns (0.18) */
} fixture;

static void start(fixture *x, double interval, size_t mem_limit)
{
    snprintf(x->dir, sizeof x->dir, "/tmp/rt-stream-XXXXXX");
    unit_tmpdir(x->dir);
    rt_stream_options o = RT_STREAM_OPTIONS_INIT;
    static const char *const argv[] = {"python", "train.py", NULL};
    static const char *const tags[] = {"a=b"};
    static rt_job job = RT_JOB_INIT;
    job.job_name = "unit";
    job.tags = tags;
    job.tag_count = 1;
    o.token = "TOKEN-SECRET";
    o.api_url = "http://127.0.0.1:9/api/";
    o.upload_interval_secs = interval;
    o.job = &job;
    o.command = argv;
    o.spill_dir = x->spill ? x->spill : x->dir;
    o.spill_fallback_dir = fallback_dir;
    o.memory_limit_bytes = mem_limit;
    o.finish_timeout_secs = 3;
    o.log = count_log;
    o.csv_energy = x->csv_energy;
    x->o = o;
    pthread_mutex_init(&x->f.mu, NULL);
    pthread_cond_init(&x->f.returned, NULL);
    if (!x->f.expires_in)
        x->f.expires_in = 3600;
    rt_stream_net net = {.post = fake_post, .put = fake_put, .find_region = fake_region, .user = &x->f};
    assert_non_null(x->f.clk = rt_clock_test_new(T0));
    assert_int_equal(rt_stream_start_net(&x->o, &net, x->f.clk, &x->st), RT_OK);
    memset(&x->cpu, 0, sizeof x->cpu);
    x->cpu.process_count = 3;
    x->cpu.process_child_count = RT_NULL_I64;
    x->cpu.process_cores_used = NAN;
    memset(&x->mem, 0, sizeof x->mem);
    x->s.cpu = &x->cpu;
    x->s.memory = &x->mem;
    x->s.disk_space_total_bytes = x->s.disk_space_used_bytes = x->s.disk_space_free_bytes = RT_NULL_U64;
}

/* Runs the stream's clock on by secs (its thread blocked on the clock again after). */
static void run_for(fixture *x, double secs)
{
    clock_run_to(x->f.clk, 1, rt_clock_now(x->f.clk) + secs);
}

/* Adds n rows (timestamps 1000+k, unique), the clock running on by secs after each. */
static void add_rows(fixture *x, int n, double secs)
{
    for (int i = 0; i < n; i++) {
        x->s.timestamp_secs = 1000.0 + x->added++;
        assert_int_equal(rt_stream_add(x->st, &x->s), RT_OK);
        if (secs > 0)
            run_for(x, secs);
    }
}

/* rt_stream_finish, the clock running on by itself meanwhile (to each retry and the deadline). */
static rt_error finish(fixture *x, int exit_code, int failed)
{
    clock_driver d;
    clock_drive_start(&d, x->f.clk, 2); /* the stream's thread and this one */
    rt_error e = rt_stream_finish(x->st, exit_code, failed);
    clock_drive_stop(&d);
    return e;
}

static const char *rows_header; /* the header count_rows expects: NULL, rt_csv_header() */

/* Counts the timestamps 1000..1000+n-1 in csv (rows after a header line, each with as many cells
 * as it), failing on a duplicate or an unknown row. */
static void count_rows(const char *csv, size_t len, int *seen, int n)
{
    const char *p = csv, *end = csv + len;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    assert_non_null(nl);
    const char *want = rows_header ? rows_header : rt_csv_header();
    assert_int_equal((size_t)(nl - p + 1), strlen(want));
    assert_memory_equal(p, want, (size_t)(nl - p + 1));
    for (p = nl + 1; p < end; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(end - p));
        assert_non_null(nl);
        size_t cells = 0, want_cells = 0;
        for (const char *c = p; c < nl; c++)
            cells += *c == ',';
        for (const char *c = want; *c; c++)
            want_cells += *c == ',';
        assert_int_equal(cells, want_cells);
        int k = (int)strtol(p, NULL, 10) - 1000;
        assert_true(k >= 0 && k < n);
        assert_int_equal(seen[k], 0);
        seen[k] = 1;
    }
}

/* Checks the objects: keys r1/000000.csv.gz (under the prefix "pre") on without gaps or repeats, each a gzip whose
 * rows go into seen. Returns how many. */
static int check_objects(fixture *x, int *seen)
{
    for (int i = 0; i < x->f.nput; i++) {
        char want[64];
        snprintf(want, sizeof want, "r1/%06d.csv.gz", i);
        assert_string_equal(x->f.keys[i], want);
        rt_buf raw = {0};
        assert_int_equal(rt_gunzip(x->f.bodies[i].data, x->f.bodies[i].len, 1 << 24, &raw), RT_OK);
        count_rows(raw.data, raw.len, seen, x->added);
        rt_buf_free(&raw);
    }
    return x->f.nput;
}

/* The finish body as JSON (checked for its fixed fields). */
static json_t *finish_json(fixture *x, const char *source)
{
    assert_int_equal(x->f.finishes, 1);
    json_error_t je;
    json_t *j = json_loads(x->f.finish_body, 0, &je);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "data_source")), source);
    assert_null(json_object_get(j, "run_id"));
    return j;
}

static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Gunzips every spill file in dir into seen. Returns the file count. */
static int spilled_rows(fixture *x, int *seen)
{
    DIR *d = opendir(x->dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", x->dir, e->d_name);
        size_t len = strlen(e->d_name);
        if (len > 4 && (strcmp(e->d_name + len - 4, ".run") == 0 || strcmp(e->d_name + len - 5, ".lock") == 0))
            continue; /* the run's record and lock (record.c) */
        assert_non_null(strstr(e->d_name, ".csv.gz"));
        int fd = open(path, O_RDONLY);
        rt_buf gz, raw = {0};
        rt_buf_init(&gz, 1 << 24);
        assert_true(rt_read_fd_grow(fd, &gz, RT_READ_TO_EOF) > 0);
        close(fd);
        assert_int_equal(rt_gunzip(gz.data, gz.len, 1 << 24, &raw), RT_OK);
        count_rows(raw.data, raw.len, seen, x->added);
        rt_buf_free(&gz);
        rt_buf_free(&raw);
        n++;
    }
    closedir(d);
    return n;
}

static void cleanup(fixture *x)
{
    DIR *d = opendir(x->dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", x->dir, e->d_name);
        if (e->d_name[0] != '.')
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(x->dir);
    fake_free(&x->f);
}

static void assert_all_seen(const int *seen, int n)
{
    for (int i = 0; i < n; i++)
        if (!seen[i])
            fail_msg("row %d is missing", i);
}

static void test_batches_reach_s3(void **state)
{
    (void)state;
    fixture x = {0};
    start(&x, 0.05, 0);
    /* the pass over older runs (none here) asked once, before the finish; not again, nor after */
    assert_int_equal(rt_stream_deliver_earlier(NULL), RT_ERR_INVALID);
    assert_int_equal(rt_stream_deliver_earlier(x.st), RT_OK);
    assert_int_equal(rt_stream_deliver_earlier(x.st), RT_ERR_INVALID);
    add_rows(&x, 60, 0.01);
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    assert_int_equal(rt_stream_deliver_earlier(x.st), RT_ERR_INVALID);
    rt_stream_free(x.st);
    int seen[60] = {0};
    int n = check_objects(&x, seen);
    assert_int_equal(n, 12); /* a batch every 0.05 s of the 0.6 s */
    assert_all_seen(seen, 60);
    json_t *j = finish_json(&x, "s3");
    json_t *uris = json_object_get(j, "data_uris");
    assert_int_equal((int)json_array_size(uris), n);
    assert_string_equal(json_string_value(json_array_get(uris, 0)), "s3://bkt/pre/r1/000000.csv.gz");
    assert_int_equal((int)json_integer_value(json_object_get(j, "exit_code")), 0);
    assert_string_equal(json_string_value(json_object_get(j, "run_status")), "finished");
    json_decref(j);
    /* one registration, whose body names the job and no pid */
    assert_int_equal(x.f.registers, 1);
    assert_non_null(strstr(x.f.reg_body, "\"job_name\""));
    assert_null(strstr(x.f.reg_body, "\"pid\""));
    assert_int_equal(files_in(x.dir), 0);
    cleanup(&x);
}

/* S3 fails a few times: every batch still arrives once, with its seq, and no spill file stays. */
static void test_retries_keep_seq(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.put_fail = 4;
    start(&x, 0.05, 0);
    add_rows(&x, 80, 0.01);
    assert_int_equal(finish(&x, 3, 1), RT_OK);
    unsigned closed, uploaded, spilled;
    rt_stream_counts(x.st, NULL, NULL, &closed, &uploaded, &spilled);
    rt_stream_free(x.st);
    int seen[80] = {0};
    assert_int_equal(check_objects(&x, seen), (int)closed);
    assert_int_equal(uploaded, closed);
    assert_true(spilled >= 1); /* a batch that failed was written out meanwhile */
    assert_all_seen(seen, 80);
    json_t *j = finish_json(&x, "s3");
    assert_string_equal(json_string_value(json_object_get(j, "run_status")), "failed");
    assert_int_equal((int)json_integer_value(json_object_get(j, "exit_code")), 3);
    json_decref(j);
    assert_int_equal(files_in(x.dir), 0);
    cleanup(&x);
}

/* S3 never answers: everything goes inline, and the spill files go once it was sent. */
static void test_nothing_in_s3_goes_inline(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.put_fail = -1;
    start(&x, 0.05, 0);
    add_rows(&x, 30, 0.01);
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    rt_stream_free(x.st);
    assert_int_equal(x.f.nput, 0);
    json_t *j = finish_json(&x, "inline");
    assert_null(json_object_get(j, "data_uris"));
    const char *csv = json_string_value(json_object_get(j, "data_csv"));
    assert_non_null(csv);
    int seen[30] = {0};
    count_rows(csv, strlen(csv), seen, 30);
    assert_all_seen(seen, 30);
    json_decref(j);
    assert_int_equal(files_in(x.dir), 0);
    cleanup(&x);
}

/* The energy columns asked for (csv_energy): the batches in S3 and the inline CSV carry the 32
 * columns and the four of energy, header and rows; without it (every other test), the 32. */
static void test_energy_columns_asked(void **state)
{
    (void)state;
    rows_header = rt_format_header(RT_FORMAT_CSV_ENERGY);
    for (int inline_only = 0; inline_only < 2; inline_only++) {
        fixture x = {.csv_energy = 1};
        x.f.put_fail = inline_only ? -1 : 0;
        start(&x, 0.05, 0);
        add_rows(&x, 20, 0.01);
        assert_int_equal(finish(&x, 0, 0), RT_OK);
        rt_stream_free(x.st);
        int seen[20] = {0};
        json_t *j = finish_json(&x, inline_only ? "inline" : "s3");
        if (inline_only) {
            const char *csv = json_string_value(json_object_get(j, "data_csv"));
            assert_non_null(csv);
            count_rows(csv, strlen(csv), seen, 20);
        } else {
            assert_true(check_objects(&x, seen) >= 1);
        }
        assert_all_seen(seen, 20);
        json_decref(j);
        cleanup(&x);
    }
    rows_header = NULL;
}

/* Some batches in S3, then S3 gone: the finish names every uploaded object (data_source s3, as
 * the Python tracker 0.5 sends it), never "inline" with only the rest; the rest stays spilled
 * for a later delivery. S3 plus spilled: every row, once. */
static void test_partial_s3_rest_spilled(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.put_fail = -1;
    x.f.put_ok_first = 2;
    start(&x, 0.05, 0);
    add_rows(&x, 60, 0.01);
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    rt_stream_free(x.st);
    int seen[60] = {0};
    assert_int_equal(check_objects(&x, seen), 2);
    json_t *j = finish_json(&x, "s3");
    assert_null(json_object_get(j, "data_csv"));
    json_t *uris = json_object_get(j, "data_uris");
    assert_int_equal((int)json_array_size(uris), 2);
    assert_string_equal(json_string_value(json_array_get(uris, 1)), "s3://bkt/pre/r1/000001.csv.gz");
    json_decref(j);
    assert_true(spilled_rows(&x, seen) >= 1); /* fails on a row also in S3 */
    assert_all_seen(seen, 60);
    cleanup(&x);
}

/* The spill file names in x->dir, sorted, into names (up to cap). Returns how many. */
static int spill_names(fixture *x, char names[][256], int cap)
{
    DIR *d = opendir(x->dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < cap;)
        if (e->d_name[0] != '.' && strstr(e->d_name, ".csv.gz"))
            snprintf(names[n++], 256, "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)n, 256, (int (*)(const void *, const void *))strcmp);
    return n;
}

/* Spill files damaged by hand while the API is down (one truncated, one removed; batches live in
 * their files only, memory bound 1 byte): each is skipped with a warning and counted, the
 * batches behind them still go (to S3, keys without a gap; or inline, which does not fail as a
 * whole), and the rows that arrive plus the rows counted damaged are the rows added. */
static void damaged_case(bool s3_up)
{
    fixture x = {0};
    x.f.register_fail = 1;
    if (!s3_up)
        x.f.put_fail = -1;
    start(&x, 0.05, 1);
    add_rows(&x, 100, 0.01); /* 1 s: registration failed once, about 19 batches spilled */
    char names[64][256], path[600];
    assert_true(spill_names(&x, names, 64) >= 4);
    snprintf(path, sizeof path, "%s/%s", x.dir, names[0]);
    assert_int_equal(truncate(path, 10), 0);
    snprintf(path, sizeof path, "%s/%s", x.dir, names[2]);
    assert_int_equal(unlink(path), 0);
    add_rows(&x, 200, 0.01); /* registered on the retry, 2 s after the first */
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    unsigned damaged;
    uint64_t damaged_rows;
    rt_stream_damaged(x.st, &damaged, &damaged_rows);
    rt_stream_free(x.st);
    assert_int_equal(damaged, 2);
    assert_true(damaged_rows >= 2);
    int seen[300] = {0};
    if (s3_up) {
        check_objects(&x, seen); /* keys 000000.. without a gap */
        json_decref(finish_json(&x, "s3"));
    } else {
        assert_int_equal(x.f.nput, 0);
        json_t *j = finish_json(&x, "inline");
        const char *csv = json_string_value(json_object_get(j, "data_csv"));
        count_rows(csv, strlen(csv), seen, 300);
        json_decref(j);
    }
    int arrived = 0;
    for (int i = 0; i < 300; i++)
        arrived += seen[i];
    assert_int_equal(arrived + (int)damaged_rows, 300);
    /* the truncated file is kept aside, nothing else stays */
    assert_int_equal(spill_names(&x, names, 64), 1);
    assert_non_null(strstr(names[0], ".damaged"));
    cleanup(&x);
}

static void test_damaged_spill_skipped_s3(void **state)
{
    (void)state;
    damaged_case(true);
}

static void test_damaged_spill_skipped_inline(void **state)
{
    (void)state;
    damaged_case(false);
}

/* The API never answers: one warning's worth of tries, no PUT, every row in the spill dir. */
static void test_api_down_spills(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.register_fail = -1;
    start(&x, 0.05, 0);
    add_rows(&x, 40, 0.01);
    assert_int_equal(finish(&x, 0, 0), RT_ERR_IO);
    rt_stream_free(x.st);
    assert_int_equal(x.f.put_calls, 0);
    assert_int_equal(x.f.finishes, 0);
    assert_int_equal(x.f.registers, 2); /* at the first batch (0.05 s), and at the end: the retry is 2 s on */
    int seen[40] = {0};
    assert_true(spilled_rows(&x, seen) >= 1);
    assert_all_seen(seen, 40);
    cleanup(&x);
}

/* The API down at first, up later: registered on a retry, nothing lost. */
static void test_register_retry(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.register_fail = 1;
    start(&x, 0.05, 0);
    add_rows(&x, 300, 0.01); /* 3 s: the second try comes 2 s after the first */
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    rt_stream_free(x.st);
    assert_int_equal(x.f.registers, 2);
    int seen[300] = {0};
    check_objects(&x, seen);
    assert_all_seen(seen, 300);
    assert_int_equal(files_in(x.dir), 0);
    cleanup(&x);
}

/* A memory bound of one byte: batches live in spill files only, and are uploaded from there. */
static void test_memory_bound(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.put_fail = 6;
    start(&x, 0.05, 1);
    add_rows(&x, 60, 0.01);
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    rt_stream_free(x.st);
    int seen[60] = {0};
    check_objects(&x, seen);
    assert_all_seen(seen, 60);
    assert_int_equal(files_in(x.dir), 0);
    cleanup(&x);
}

/* Credentials expiring within 300 s are refreshed, and PUTs use the new ones. */
static void test_refresh(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.expires_in = 100;
    start(&x, 0.05, 0);
    add_rows(&x, 30, 0.01);
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    rt_stream_free(x.st);
    assert_int_equal(x.f.refreshes, 1);
    assert_true(x.f.nput >= 1);
    for (int i = 0; i < x.f.nput; i++)
        assert_string_equal(x.f.access[i], "AK1");
    cleanup(&x);
}

/* S3 hangs (each PUT sent, never answered: it may land later): finish comes back within its
 * timeout, the run is not finished (neither inline, where a late landing would repeat the rows,
 * nor naming objects without that one), every row is kept with the record naming the batch in
 * doubt, and the registration carried the run's key as its Idempotency-Key. */
static void test_hang_bounded(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.put_hang = true;
    start(&x, 0.05, 0);
    add_rows(&x, 20, 0.01);
    double a = rt_clock_now(x.f.clk);
    rt_error e = finish(&x, 0, 0);
    double took = rt_clock_now(x.f.clk) - a; /* on the clock: the hangs' times, no more */
    char key[64];
    snprintf(key, sizeof key, "%s", x.st->local_key);
    rt_stream_free(x.st);
    assert_true(took <= x.o.finish_timeout_secs);
    assert_int_equal(e, RT_ERR_IO);
    assert_int_equal(x.f.finishes, 0);
    assert_string_equal(x.f.reg_idem, key);
    int seen[20] = {0};
    assert_true(spilled_rows(&x, seen) >= 1);
    assert_all_seen(seen, 20);
    rt_run_record r;
    assert_true(rt_record_load(x.dir, key, &r, NULL));
    assert_int_equal(r.doubt_seq, 0);
    assert_string_equal(r.run_id, "r1");
    assert_int_equal(strlen(r.fp), 32);
    rt_record_clear(&r);
    cleanup(&x);
}

/* S3 refuses the connection (nothing sent: nothing can land): the rows go inline at the end. */
static void test_unsent_inline(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.put_unsent = true;
    start(&x, 0.05, 0);
    add_rows(&x, 20, 0.01);
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    rt_stream_free(x.st);
    json_t *j = finish_json(&x, "inline");
    const char *csv = json_string_value(json_object_get(j, "data_csv"));
    int seen[20] = {0};
    count_rows(csv, strlen(csv), seen, 20);
    assert_all_seen(seen, 20);
    json_decref(j);
    cleanup(&x);
}

/* The API stalls at finish past the timeout: rt_stream_finish comes back by its deadline, and
 * rt_stream_free leaves the thread to free itself, which then calls no log callback (the
 * caller's may be gone) and frees the stream (a leak shows under ASan; a use after free
 * under ASan or TSan). */
static void test_finish_stall_orphan(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.finish_hang = 4.5;
    int threads = unit_threads();
    start(&x, 0.05, 0);
    add_rows(&x, 10, 0.01);
    double a = rt_clock_now(x.f.clk);
    assert_int_equal(finish(&x, 0, 0), RT_ERR_IO);
    assert_true(rt_clock_now(x.f.clk) - a <= x.o.finish_timeout_secs); /* by its deadline: the stall is 4.5 s */
    pthread_mutex_lock(&x.f.mu);
    assert_false(x.f.finish_returned);
    pthread_mutex_unlock(&x.f.mu);
    rt_stream_free(x.st);
    pthread_mutex_lock(&log_mu);
    log_freed = true;
    pthread_mutex_unlock(&log_mu);
    rt_clock_test_step(x.f.clk, 5); /* the hung request comes back, the thread ends */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 30;
    pthread_mutex_lock(&x.f.mu);
    while (!x.f.finish_returned && pthread_cond_timedwait(&x.f.returned, &x.f.mu, &ts) == 0)
        ;
    assert_true(x.f.finish_returned);
    pthread_mutex_unlock(&x.f.mu);
    /* the orphaned thread cannot be joined: its end is the process's threads back to those
     * before the stream started (it would have logged by then, were it to) */
    UNIT_WAIT_UNTIL(unit_threads() <= threads, UNIT_WAIT_SECS);
    assert_true(unit_threads() <= threads);
    orphan_clock = x.f.clk; /* the thread's last act may be a look at the clock: it outlives the thread */
    x.f.clk = NULL;
    pthread_mutex_lock(&log_mu);
    int after = log_after_free;
    log_freed = false;
    pthread_mutex_unlock(&log_mu);
    assert_int_equal(after, 0);
    cleanup(&x);
}

/* The spill directory cannot be made (its parent is a file) and S3 fails: batches stay in memory
 * up to the bound, rows past it are counted lost (never a crash), and the inline CSV plus the
 * lost rows are every row added, none twice. */
static void test_spill_fails_bounded(void **state)
{
    (void)state;
    fixture x = {0};
    char file[128], spill[160];
    snprintf(file, sizeof file, "/tmp/rt-stream-file-%ld", (long)getpid());
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    close(fd);
    snprintf(spill, sizeof spill, "%s/spill", file);
    x.spill = spill;
    x.f.put_fail = -1;
    rt_spill_tmp_root = file; /* no fallback can be made either */
    start(&x, 0.05, 1500);
    int kept = 0;
    for (int i = 0; i < 150; i++) {
        x.s.timestamp_secs = 1000.0 + x.added++;
        kept += rt_stream_add(x.st, &x.s) == RT_OK;
        run_for(&x, 0.01);
    }
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    uint64_t rows, lost;
    rt_stream_counts(x.st, &rows, &lost, NULL, NULL, NULL);
    rt_stream_free(x.st);
    assert_true(lost > 0);
    assert_int_equal((int)(rows + lost), 150);
    json_t *j = finish_json(&x, "inline");
    const char *csv = json_string_value(json_object_get(j, "data_csv"));
    int seen[150] = {0}, n = 0;
    count_rows(csv, strlen(csv), seen, 150);
    for (int i = 0; i < 150; i++)
        n += seen[i];
    assert_int_equal(n, (int)rows);
    assert_int_equal(n, kept);
    json_decref(j);
    rt_spill_tmp_root = tmp_root;
    unlink(file);
    cleanup(&x);
}

/* The spill directory cannot be made (its parent is a file): the batches go to the caller's
 * fallback directory instead, the move said once, with the run's record beside them. */
static void test_spill_falls_back(void **state)
{
    (void)state;
    fixture x = {0};
    char file[128], spill[160], fb[64] = "/tmp/rt-stream-fb-XXXXXX";
    snprintf(file, sizeof file, "/tmp/rt-stream-file-%ld", (long)getpid());
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    close(fd);
    snprintf(spill, sizeof spill, "%s/spill", file);
    assert_non_null(mkdtemp(fb));
    x.spill = spill;
    x.f.register_fail = -1;
    fallback_dir = fb;
    start(&x, 0.05, 0);
    add_rows(&x, 30, 0.01);
    assert_int_equal(finish(&x, 0, 0), RT_ERR_IO);
    char key[64];
    snprintf(key, sizeof key, "%s", x.st->local_key);
    uint64_t lost;
    rt_stream_counts(x.st, NULL, &lost, NULL, NULL, NULL);
    rt_stream_free(x.st);
    fallback_dir = NULL;
    assert_int_equal((int)lost, 0);
    rmdir(x.dir); /* the fixture's own: nothing went there */
    snprintf(x.dir, sizeof x.dir, "%s", fb); /* spilled_rows reads x.dir */
    int seen[30] = {0};
    assert_true(spilled_rows(&x, seen) >= 1);
    assert_all_seen(seen, 30);
    rt_run_record r;
    assert_true(rt_record_load(fb, key, &r, NULL));
    rt_record_clear(&r);
    pthread_mutex_lock(&log_mu);
    assert_true(warned_moved);
    pthread_mutex_unlock(&log_mu);
    unlink(file);
    cleanup(&x);
}

/* No rows at all: the run is finished inline with the header alone; bad options refused. */
/* rt_stream_errmsg: "" until something fails, then the last failure (a registration, an upload
 * whose words echo the token: taken out), kept after later successes. */
static void test_errmsg_says_the_last_failure(void **state)
{
    (void)state;
    fixture x = {0};
    x.f.register_fail = 1;
    x.f.put_fail = 1;
    x.f.put_err = "access denied to TOKEN-SECRET";
    start(&x, 0.05, 0);
    assert_string_equal(rt_stream_errmsg(x.st), "");
    assert_string_equal(rt_stream_errmsg(NULL), "");
    add_rows(&x, 10, 0.01); /* the first batch (0.05 s): registration fails */
    assert_int_equal(x.f.registers, 1);
    assert_string_equal(rt_stream_errmsg(x.st), "cannot register the run at the Sentinel API (HTTP 503)");
    add_rows(&x, 250, 0.01); /* registered on the retry (2 s on); the first upload fails */
    assert_int_equal(x.f.registers, 2);
    const char *m = rt_stream_errmsg(x.st);
    assert_true(strncmp(m, "upload of batch ", 16) == 0);
    assert_non_null(strstr(m, " failed (HTTP 500: access denied to "));
    assert_null(strstr(m, "TOKEN-SECRET"));
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    assert_non_null(strstr(rt_stream_errmsg(x.st), " failed (HTTP 500: access denied to "));
    rt_stream_free(x.st);
    int seen[260] = {0};
    check_objects(&x, seen);
    assert_all_seen(seen, 260);
    cleanup(&x);
}

/* A run record is written 0600 and read back field for field (no credential is written); a value holding a newline is
 * refused; a file that is not a record is not read as one; the lock is taken once. */
static void test_record_round_trip(void **state)
{
    (void)state;
    char dir[64] = "/tmp/rt-record-XXXXXX";
    unit_tmpdir(dir);
    rt_run_record r, back;
    memset(&r, 0, sizeof r);
    r.reg_body = strdup("{\"job_name\":\"a b\"}");
    snprintf(r.run_id, sizeof r.run_id, "run-1");
    snprintf(r.target.bucket, sizeof r.target.bucket, "bkt");
    snprintf(r.target.prefix, sizeof r.target.prefix, "runs/with space");
    snprintf(r.creds.secret_key, sizeof r.creds.secret_key, "SK/+x");
    r.creds.expires_unix = 1795000000.5;
    r.uploaded = 7;
    r.done_seq = 9;
    r.ended = true;
    r.exit_code = -3;
    r.failed = true;
    r.finished_unix = 1795000001.25;
    r.finish_sent = true;
    int fd = rt_record_lock(dir, "k1");
    assert_true(fd >= 0);
    assert_int_equal(rt_record_lock(dir, "k1"), -1); /* held: another taker is refused */
    assert_true(rt_record_write(dir, "k1", &r));
    char path[256];
    snprintf(path, sizeof path, "%s/k1.run", dir);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    double mtime = 0;
    assert_true(rt_record_load(dir, "k1", &back, &mtime));
    assert_true(mtime > 0);
    assert_string_equal(back.reg_body, r.reg_body);
    assert_string_equal(back.run_id, "run-1");
    assert_string_equal(back.target.prefix, "runs/with space");
    assert_string_equal(back.creds.secret_key, ""); /* never written */
    assert_int_equal(back.uploaded, 7);
    assert_int_equal(back.done_seq, 9);
    assert_true(back.ended && back.failed && back.finish_sent);
    assert_int_equal(back.exit_code, -3);
    assert_true(back.finished_unix == r.finished_unix);
    rt_record_clear(&back);
    snprintf(r.run_id, sizeof r.run_id, "run\n2");
    assert_false(rt_record_write(dir, "k1", &r)); /* the old record stays */
    assert_true(rt_record_load(dir, "k1", &back, NULL));
    assert_string_equal(back.run_id, "run-1");
    rt_record_clear(&back);
    rt_record_clear(&r);
    FILE *f = fopen(path, "w");
    fputs("not a record\n", f);
    fclose(f);
    assert_false(rt_record_load(dir, "k1", &back, NULL));
    rt_record_remove(dir, "k1");
    rt_record_unlock(dir, "k1", fd, true);
    assert_true(rmdir(dir) == 0); /* nothing left: record, lock and temporary files gone */
}

/* The abort time and the listening socket of a request in flight. */
typedef struct abort_when {
    _Atomic double *at;
    int listen_fd;
} abort_when;

/* Moves the abort time to now, from another thread, once the request is in flight: its
 * connection made (the kernel completed it; the listening socket reads as ready), 30 s at most. */
static void *abort_soon(void *arg)
{
    abort_when *a = arg;
    struct pollfd p = {.fd = a->listen_fd, .events = POLLIN};
    (void)poll(&p, 1, 30000);
    atomic_store(a->at, rt_mono_secs());
    return NULL;
}

/* A request in flight ends when another thread moves its abort time (rt_fetch_abort_at, libcurl's
 * progress callback): a peer that takes the connection and never answers, a 30 s timeout, and
 * the error is the abort, not curl's timeout. */
static void test_fetch_abort_in_flight(void **state)
{
    (void)state;
    char err[256];
    if (rt_fetch_available(err, sizeof err) != RT_OK)
        skip();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 4), 0); /* the kernel completes the connection; nothing answers */
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/x", (unsigned)ntohs(a.sin_port));
    _Atomic double at = INFINITY;
    rt_fetch_abort_at(&at);
    pthread_t th;
    abort_when when = {.at = &at, .listen_fd = fd};
    assert_int_equal(pthread_create(&th, NULL, abort_soon, &when), 0);
    rt_fetch_request rq = {.method = "PUT", .url = url, .body = "x", .body_len = 1, .timeout_secs = 30,
                           .max_body = 100};
    rt_fetch_reply rp;
    assert_int_equal(rt_fetch(&rq, &rp, err, sizeof err), RT_ERR_IO);
    rt_fetch_reply_free(&rp);
    assert_string_equal(err, "aborted at the caller's deadline");
    pthread_join(th, NULL);
    /* already past: the next request ends at its first tick; NULL: no abort time again */
    assert_int_equal(rt_fetch(&rq, &rp, err, sizeof err), RT_ERR_IO);
    rt_fetch_reply_free(&rp);
    assert_string_equal(err, "aborted at the caller's deadline");
    rt_fetch_abort_at(NULL);
    rq.timeout_secs = 0.3;
    assert_int_equal(rt_fetch(&rq, &rp, err, sizeof err), RT_ERR_IO);
    rt_fetch_reply_free(&rp);
    assert_string_not_equal(err, "aborted at the caller's deadline");
    close(fd);
}

static void test_empty_and_invalid(void **state)
{
    (void)state;
    fixture x = {0};
    start(&x, 0.05, 0);
    assert_int_equal(finish(&x, 0, 0), RT_OK);
    assert_int_equal(finish(&x, 0, 0), RT_ERR_INVALID);
    assert_int_equal(rt_stream_add(x.st, &x.s), RT_ERR_INVALID);
    rt_stream_free(x.st);
    json_t *j = finish_json(&x, "inline");
    assert_string_equal(json_string_value(json_object_get(j, "data_csv")), rt_csv_header());
    json_decref(j);
    cleanup(&x);

    rt_stream *st = NULL;
    rt_stream_options o = RT_STREAM_OPTIONS_INIT;
    rt_stream_net net = {.post = fake_post, .put = fake_put, .find_region = fake_region};
    assert_int_equal(rt_stream_start_net(&o, &net, NULL, &st), RT_ERR_INVALID); /* no token */
    o.token = "";
    assert_int_equal(rt_stream_start(&o, &st), RT_ERR_INVALID);
    o.token = "t";
    o.api_url = "ftp://x";
    assert_int_equal(rt_stream_start_net(&o, &net, NULL, &st), RT_ERR_INVALID);
    assert_null(st);
    rt_stream_free(NULL);
}

int main(void)
{
    char err[256];
    if (rt_gzip_available(err, sizeof err) != RT_OK) {
        fprintf(stderr, "test_stream: skipped, no gzip: %s\n", err);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_reach_s3),  cmocka_unit_test(test_retries_keep_seq),
        cmocka_unit_test(test_nothing_in_s3_goes_inline), cmocka_unit_test(test_energy_columns_asked), cmocka_unit_test(test_partial_s3_rest_spilled),
        cmocka_unit_test(test_damaged_spill_skipped_s3), cmocka_unit_test(test_damaged_spill_skipped_inline),
        cmocka_unit_test(test_fetch_abort_in_flight), cmocka_unit_test(test_record_round_trip),
        cmocka_unit_test(test_api_down_spills),   cmocka_unit_test(test_register_retry),
        cmocka_unit_test(test_memory_bound),      cmocka_unit_test(test_refresh),
        cmocka_unit_test(test_hang_bounded),
        cmocka_unit_test(test_unsent_inline),      cmocka_unit_test(test_empty_and_invalid),
        cmocka_unit_test(test_finish_stall_orphan), cmocka_unit_test(test_spill_fails_bounded),
        cmocka_unit_test(test_spill_falls_back),
        cmocka_unit_test(test_errmsg_says_the_last_failure),
    };
    char root[64] = "/tmp/rt-stream-root-XXXXXX"; /* the fallbacks' /tmp: no run of the machine's is looked at */
    if (!mkdtemp(root))
        return 1;
    tmp_root = root;
    rt_spill_tmp_root = root;
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(root);
    return rc;
}
