/* otlp.c - the OTLP/HTTP metrics exporter: rt_otlp_add copies a sample into a compact row in a
 * bounded queue (no formatting, no I/O on the caller's thread); the exporter's own thread pushes
 * the queued rows every interval as one ExportMetricsServiceRequest (otlp_json.c), gzipped,
 * retrying 429/502/503/504 and transport failures with backoff (1 s doubling to 30 s, jittered; a
 * Retry-After is the least pause), and at the end pushes what is left within finish_timeout_secs.
 * A push carries at most 512 samples; the queue holds max_queue_samples (the oldest dropped).
 *
 * Resource attributes: the user's (opts->resource) first; then, for keys they do not name,
 * service.name (the job's name, else "resource-tracker"), telemetry.sdk.{name,language,version},
 * host.name, host.id, host.arch, os.type, cloud.provider/region/availability_zone/account.id and
 * host.type (the cloud's result, waited for before the first push at most 2 s from the start,
 * or a quarter of what is left of the end; copied, and never asked once rt_otlp_finish returned),
 * process.pid, process.command, process.command_args, and the job's labels (labels.h) as
 * resource_tracker.LABEL (resource_tracker.job_name, resource_tracker.tag_team, ...).
 * Messages never hold the values of the user's headers: a receiver's reply quoted in a message is
 * redacted whole before it is cut short.
 * A request's JSON is at most 64 MiB: past that a push carries fewer samples, the rest staying
 * queued in order. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>

#include "../core/gzip.h"
#include "../core/lasterr.h"
#include "../core/locked.h"
#include "labels.h"
#include "otlp_int.h"
#include "phase_label.h"
#include "../source/cloud.h"

#define BATCH_ROWS 512              /* the most samples one request carries */
#define BODY_MAX ((size_t)64 << 20) /* the most JSON one request is built from */
#define REPLY_MAX ((size_t)1 << 20)
#define RETRY_AFTER_CAP 60.0 /* the longest a Retry-After is honoured */
#define BACKOFF_MIN 1.0
#define BACKOFF_MAX 30.0
#define MIN_REQUEST 0.05      /* the least time a request is given */
#define OUTAGE_WARN_SECS 10.0 /* failing this long is warned about (a short blip is not) */
#define CLOUD_WAIT 2.0        /* the most the first push waits for the cloud's result */
#define CLOUD_STEP 0.05       /* how often it looks meanwhile */
#define QUOTE_MAX 159         /* the most of a receiver's text a message quotes */

typedef enum outcome { SENT, REFUSED, RETRY } outcome;

/* The push being made: its body and how many samples it holds. */
typedef struct pending {
    rt_gzip *z; /* owns data when gzipped */
    char *raw;  /* owns data otherwise */
    const void *data;
    size_t len, rows;
    unsigned tries;
    double retry_at; /* monotonic; 0: now */
    bool asked;      /* retry_at holds a Retry-After's pause (kept at the end) */
} pending;

struct rt_otlp {
    rt_logger lg; /* the thread's messages: through otlp_log, to user_lg until rt_otlp_free */
    rt_logger user_lg;
    /* The caller's logger and cloud discovery are used only under caller_mu while caller_gone
     * is false; rt_otlp_finish sets it when it returns with the thread still running. */
    pthread_mutex_t caller_mu;
    bool caller_gone;
    rt_otlp_fetch_fn fetch;
    void *fetch_user;
    char *url;
    char **headers;       /* the user's, then Content-Type and Content-Encoding; NULL-terminated */
    size_t nuser_headers; /* of them, the user's (their values are redacted from messages) */
    rt_kv *user_res;      /* the user's resource attributes, copied */
    size_t nuser_res;
    rt_labels labels;
    char **command;
    char *hostname, *host_id;
    rt_cloud_discovery *cloud;
    rt_clock *clock; /* NULL: the real one */
    double interval, timeout, finish_timeout, t0;
    bool gzip;
    size_t max_queue;
    size_t body_max; /* under mu */

    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu */
    rt_otlp_row **q; /* a ring of max_queue rows */
    size_t qhead, qlen;
    uint64_t added, delivered, dropped, rejected;
    unsigned requests;
    bool finishing, done, orphaned;
    double deadline;
    rt_error result;
    rt_handle_err err; /* the last failure met, for rt_otlp_errmsg (its msg under mu) */
    rt_phase_label phase; /* the phase attribute's values: rows point at them */

    /* the thread's own */
    pending p;
    bool have_p;
    rt_otlp_state state;
    rt_otlp_attr *res;
    char **res_strs; /* strings made for res (resource_tracker.LABEL keys) */
    size_t nres, nres_strs;
    bool res_built, failing, outage_warned, drop_warned, partial_warned, big_warned;
    bool cloud_settled;  /* the cloud's result copied, or no longer waited for */
    char *cloud_vals[5]; /* its provider, account, region, zone and instance type, copied */
    double fail_since;   /* monotonic: the first failure of the current outage */
    char last_why[256];  /* the last failure, for the end's message */
    char *json;
    size_t json_cap;
    unsigned seed;
};

/* ---- small helpers -------------------------------------------------------------------------------- */

/* A push failed for why (redacted already): the end's message and rt_otlp_errmsg say so. */
static void push_failed(rt_otlp *ex, const char *why)
{
    rt_copy_str(ex->last_why, sizeof ex->last_why, why);
    rt_handle_err_set(&ex->err, &ex->mu, "%s", why);
}

/* Waits on ex->cv (mu held) until the time until of the exporter's clock, or until stop becomes
 * true. */
static void wait_until(rt_otlp *ex, double until, const bool *stop)
{
    while (!*stop && !rt_clock_wait(ex->clock, &ex->cv, &ex->mu, until))
        ;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* A copy of src (n strings, or NULL-terminated when n is SIZE_MAX) with room for extra more,
 * NULL-terminated; *count gets the strings copied. NULL on no memory. */
static char **strv_dup(const char *const *src, size_t n, size_t extra, size_t *count)
{
    size_t k = 0;
    while (src && (n == SIZE_MAX ? src[k] != NULL : k < n))
        k++;
    char **v = calloc(k + extra + 1, sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < k; i++)
        if (!(v[i] = rt_strdup(src[i]))) {
            strv_free(v);
            return NULL;
        }
    if (count)
        *count = k;
    return v;
}

/* The thread's logger: the caller's callback until rt_otlp_free returned. */
static void otlp_log(void *user, rt_log_level level, const char *msg)
{
    rt_otlp *ex = user;
    pthread_mutex_lock(&ex->caller_mu);
    if (!ex->caller_gone && ex->user_lg.fn)
        ex->user_lg.fn(ex->user_lg.user, level, msg);
    pthread_mutex_unlock(&ex->caller_mu);
}

/* Marks the caller's logger and cloud discovery off-limits to the thread from now on (waits for
 * a message or a look at the cloud under way). */
static void caller_leaves(rt_otlp *ex)
{
    pthread_mutex_lock(&ex->caller_mu);
    ex->caller_gone = true;
    pthread_mutex_unlock(&ex->caller_mu);
}

/* When the end's pushes stop (mu held): a little before rt_otlp_finish stops waiting; INFINITY
 * before rt_otlp_finish was called. */
static double end_of(const rt_otlp *ex)
{
    return ex->finishing ? ex->deadline - fmin(ex->finish_timeout * 0.05, 0.25) : INFINITY;
}

double rt_otlp_retry_after(const char *value, double now_unix, double cap)
{
    if (!value)
        return -1;
    while (*value == ' ' || *value == '\t')
        value++;
    if (*value >= '0' && *value <= '9') { /* delta-seconds */
        const char *p = value;
        uint64_t secs;
        if (!rt_parse_u64(&p, p + strlen(p), &secs))
            return -1;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p)
            return -1;
        return fmin((double)secs, cap);
    }
    struct tm tm; /* an HTTP-date: IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT" */
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(value, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!end || *end)
        return -1;
    double at = (double)timegm(&tm);
    return fmin(fmax(at - now_unix, 0), cap);
}

/* ---- the caller's side ---------------------------------------------------------------------------- */

rt_error rt_otlp_add(rt_otlp *ex, const rt_sample *sample)
{
    if (!ex || !sample)
        return RT_ERR_INVALID;
    rt_otlp_row *row = rt_otlp_row_new(sample);
    if (!row)
        return RT_ERR_NOMEM;
    rt_otlp_row *old = NULL;
    pthread_mutex_lock(&ex->mu);
    row->phase = rt_phase_label_of(&ex->phase, sample); /* the innermost open phase, now */
    if (ex->finishing) {
        pthread_mutex_unlock(&ex->mu);
        free(row);
        return RT_ERR_INVALID;
    }
    if (ex->qlen == ex->max_queue) { /* full: the oldest goes */
        old = ex->q[ex->qhead];
        ex->qhead = (ex->qhead + 1) % ex->max_queue;
        ex->qlen--;
        ex->dropped++;
    }
    ex->q[(ex->qhead + ex->qlen) % ex->max_queue] = row;
    ex->qlen++;
    ex->added++;
    pthread_mutex_unlock(&ex->mu);
    free(old);
    return RT_OK;
}

/* ---- the resource --------------------------------------------------------------------------------- */

/* Adds a tracker attribute unless the user gave one of that key. */
static void res_add(rt_otlp *ex, rt_otlp_attr a)
{
    if (!a.key || (a.type == RT_OTLP_STR && (!a.str || !*a.str)))
        return;
    for (size_t i = 0; i < ex->nres; i++)
        if (strcmp(ex->res[i].key, a.key) == 0)
            return;
    ex->res[ex->nres++] = a;
}

static void res_str(rt_otlp *ex, const char *key, const char *value)
{
    res_add(ex, (rt_otlp_attr){.key = key, .type = RT_OTLP_STR, .str = value});
}

/* OpenTelemetry's host.arch for the kernel's machine name. */
static const char *arch_name(const char *m)
{
    static const char *const map[][2] = {{"x86_64", "amd64"}, {"aarch64", "arm64"}, {"armv7l", "arm32"},
                                         {"i686", "x86"},     {"i386", "x86"},      {"ppc64le", "ppc64"},
                                         {"ppc64", "ppc64"},  {"s390x", "s390x"},   {"ppc", "ppc32"}};
    for (size_t i = 0; i < RT_ARRAY_LEN(map); i++)
        if (strcmp(m, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

/* OpenTelemetry's cloud.provider for the discovery's vendor id. */
static const char *provider_name(const char *v)
{
    if (!v)
        return NULL;
    if (strcmp(v, "alicloud") == 0)
        return "alibaba_cloud";
    return v;
}

/* Looks at the cloud's result without waiting (under caller_mu: never once rt_otlp_finish
 * returned) and copies its values when it is known. Returns true when there is nothing more to
 * wait for: the result copied (or no memory for it), no discovery, or the caller gone. */
static bool cloud_look(rt_otlp *ex)
{
    if (ex->cloud_settled)
        return true;
    pthread_mutex_lock(&ex->caller_mu);
    const rt_cloud *c = !ex->caller_gone && ex->cloud ? rt_cloud_result(ex->cloud, 0) : NULL;
    if (c) {
        const char *v[RT_ARRAY_LEN(ex->cloud_vals)] = {provider_name(c->vendor_id), c->account_id, c->region_id,
                                                       c->zone_id, c->instance_type};
        for (size_t i = 0; i < RT_ARRAY_LEN(v); i++)
            ex->cloud_vals[i] = v[i] ? rt_strdup(v[i]) : NULL;
    }
    ex->cloud_settled = c || ex->caller_gone || !ex->cloud;
    pthread_mutex_unlock(&ex->caller_mu);
    return ex->cloud_settled;
}

/* Before the first push: waits for the cloud's result, looking every CLOUD_STEP, until it is
 * known, CLOUD_WAIT after the start, or a quarter of what was left to the end when the wait
 * began (the end's deadline read at every step: rt_otlp_finish may come meanwhile). */
static void await_cloud(rt_otlp *ex)
{
    double began = rt_clock_now(ex->clock);
    while (!cloud_look(ex)) {
        pthread_mutex_lock(&ex->mu);
        double now = rt_clock_now(ex->clock);
        double lim = fmin(ex->t0 + CLOUD_WAIT, began + (end_of(ex) - began) / 4);
        bool stop = false;
        if (now < lim)
            wait_until(ex, fmin(now + CLOUD_STEP, lim), &stop);
        pthread_mutex_unlock(&ex->mu);
        if (now >= lim)
            return;
    }
}

/* The resource of every push, from the first row's tree: built once, before the first push. */
static void build_resource(rt_otlp *ex, const rt_otlp_row *first)
{
    ex->res_built = true;
    size_t cap = ex->nuser_res + ex->labels.count + 24;
    ex->res = calloc(cap, sizeof *ex->res);
    ex->res_strs = calloc(ex->labels.count + 1, sizeof *ex->res_strs);
    if (!ex->res || !ex->res_strs) {
        rt_log(&ex->lg, RT_LOG_WARN, "otlp: out of memory for the resource attributes");
        return;
    }
    for (size_t i = 0; i < ex->nuser_res; i++)
        res_str(ex, ex->user_res[i].key, ex->user_res[i].value);
    const char *job_name = NULL;
    for (size_t i = 0; i < ex->labels.count; i++)
        if (strcmp(ex->labels.kv[i].key, "job_name") == 0)
            job_name = ex->labels.kv[i].value;
    res_str(ex, "service.name", job_name ? job_name : "resource-tracker");
    res_str(ex, "telemetry.sdk.name", "resource-tracker");
    res_str(ex, "telemetry.sdk.language", "c");
    res_str(ex, "telemetry.sdk.version", rt_version());
    res_str(ex, "host.name", ex->hostname);
    res_str(ex, "host.id", ex->host_id);
    struct utsname u;
    if (uname(&u) == 0)
        res_str(ex, "host.arch", arch_name(u.machine));
    res_str(ex, "os.type", "linux");
    static const char *const cloud_keys[RT_ARRAY_LEN(ex->cloud_vals)] = {
        "cloud.provider", "cloud.account.id", "cloud.region", "cloud.availability_zone", "host.type"};
    for (size_t i = 0; i < RT_ARRAY_LEN(cloud_keys); i++)
        res_str(ex, cloud_keys[i], ex->cloud_vals[i]);
    int64_t pid = first ? rt_otlp_row_pid(first) : 0;
    if (pid > 0)
        res_add(ex, (rt_otlp_attr){.key = "process.pid", .type = RT_OTLP_INT, .i = pid});
    if (ex->command && ex->command[0]) {
        res_str(ex, "process.command", ex->command[0]);
        res_add(ex, (rt_otlp_attr){
                        .key = "process.command_args", .type = RT_OTLP_STRS, .strs = (const char *const *)ex->command});
    }
    for (size_t i = 0; i < ex->labels.count; i++) {
        char key[256];
        if (!rt_pathf(key, sizeof key, "resource_tracker.%s", ex->labels.kv[i].key))
            continue;
        char *k = rt_strdup(key);
        if (!k)
            continue;
        ex->res_strs[ex->nres_strs++] = k;
        res_str(ex, k, ex->labels.kv[i].value);
    }
}

/* ---- the pushes ----------------------------------------------------------------------------------- */

static void pending_free(pending *p)
{
    rt_gzip_free(p->z);
    free(p->raw);
    memset(p, 0, sizeof *p);
}

/* Returns rows (n, oldest first, already accumulated) to the head of the queue, in order; those
 * that no longer fit (the queue filled meanwhile) are the oldest: dropped, counted. */
static void requeue(rt_otlp *ex, rt_otlp_row *const *rows, size_t n)
{
    pthread_mutex_lock(&ex->mu);
    for (size_t i = n; i-- > 0;) {
        if (ex->qlen == ex->max_queue) {
            free(rows[i]);
            ex->dropped++;
            continue;
        }
        ex->qhead = (ex->qhead + ex->max_queue - 1) % ex->max_queue;
        ex->q[ex->qhead] = rows[i];
        ex->qlen++;
    }
    pthread_mutex_unlock(&ex->mu);
}

/* Counts n samples refused before any request (logged, the first time only when once). */
static void refuse_unsent(rt_otlp *ex, size_t n, const char *why, bool once)
{
    pthread_mutex_lock(&ex->mu);
    ex->rejected += n;
    pthread_mutex_unlock(&ex->mu);
    if (once && ex->big_warned)
        return;
    ex->big_warned |= once;
    rt_handle_err_set(&ex->err, &ex->mu, "samples dropped (%zu): %s", n, why);
    rt_log(&ex->lg, RT_LOG_WARN, "otlp: samples dropped (%zu): %s", n, why);
}

/* How many of k rows whose JSON takes len bytes to try next for at most fit bytes: in proportion,
 * less a tenth, and at most half of k (at least 1). */
static size_t fewer(size_t k, size_t len, size_t fit)
{
    size_t f = (size_t)((double)k * ((double)fit / (double)len) * 0.9);
    return f < 1 ? 1 : f > k / 2 ? (k / 2 ? k / 2 : 1) : f;
}

/* Takes up to BATCH_ROWS queued rows and builds their request into ex->p: as many of them, from
 * the oldest, as make at most body_max bytes of JSON (without allocating more than that body),
 * the rest going back to the queue; a row too large alone is dropped (counted refused, warned
 * once). Returns false when the queue was empty, or nothing could be built (samples counted
 * refused, logged). */
static bool build_pending(rt_otlp *ex)
{
    rt_otlp_row *rows[BATCH_ROWS];
    size_t n = 0;
    pthread_mutex_lock(&ex->mu);
    while (n < BATCH_ROWS && ex->qlen > 0) {
        rows[n++] = ex->q[ex->qhead];
        ex->qhead = (ex->qhead + 1) % ex->max_queue;
        ex->qlen--;
    }
    size_t max = ex->body_max;
    pthread_mutex_unlock(&ex->mu);
    if (n == 0)
        return false;
    if (!ex->res_built) {
        await_cloud(ex);
        build_resource(ex, rows[0]);
    }
    if (rt_otlp_accumulate(&ex->state, rows, n) != RT_OK)
        rt_log(&ex->lg, RT_LOG_DEBUG, "otlp: out of memory for a device's series");
    size_t off = 0, k = n, len;
    for (;;) { /* rows[off, off + k) is tried */
        len = rt_otlp_format(ex->res, ex->nres, rows + off, k, ex->json, ex->json_cap);
        if (len < max && len < ex->json_cap)
            break;
        if (len < max) {
            char *grown = realloc(ex->json, len + 1);
            if (grown) {
                ex->json = grown;
                ex->json_cap = len + 1;
                continue;
            }
        }
        if (k > 1) {
            k = fewer(k, len, len < max ? ex->json_cap : max);
            continue;
        }
        free(rows[off++]); /* one sample alone is too large */
        refuse_unsent(ex, 1,
                      len < max ? "out of memory"
                                : "a sample alone makes a request larger than the most "
                                  "one may be (later ones like it are dropped silently)",
                      len >= max);
        if (off == n)
            return false;
        k = n - off;
    }
    requeue(ex, rows + off + k, n - off - k);
    for (size_t i = off; i < off + k; i++)
        free(rows[i]);
    const char *why = NULL;
    pending p = {.rows = k};
    if (ex->gzip) {
        const void *data = NULL;
        /* level 1: a body lives for one request, and the CPU it costs is the job's machine's
         * (on a real body: 40% of level 6's time, 16% larger) */
        if (rt_gzip_new_level(len + len / 8 + 65536, 1, &p.z) != RT_OK || rt_gzip_write(p.z, ex->json, len) != RT_OK ||
            rt_gzip_finish(p.z, &data, &p.len) != RT_OK)
            why = "out of memory for the gzip body";
        p.data = data;
    } else if ((p.raw = malloc(len)) != NULL) {
        memcpy(p.raw, ex->json, len);
        p.data = p.raw;
        p.len = len;
    } else {
        why = "out of memory";
    }
    if (why) {
        pending_free(&p);
        refuse_unsent(ex, k, why, false);
        return false;
    }
    ex->p = p;
    ex->have_p = true;
    return true;
}

/* Replaces in text every value (4 bytes or more) of the user's headers with a mark. */
static void redact_headers(const rt_otlp *ex, char *text)
{
    for (size_t i = 0; i < ex->nuser_headers; i++) { /* a receiver that echoes a header's value */
        const char *v = strchr(ex->headers[i], ':') + 1;
        while (*v == ' ')
            v++;
        if (strlen(v) >= 4)
            rt_redact(text, v);
    }
}

/* A copy of len bytes of a receiver's text fit for a message: NUL bytes made spaces, the values
 * of the user's headers redacted over the whole text (before a message cuts it short, so that
 * no part of a value straddling the cut is left), then bytes outside printable ASCII made
 * spaces. NULL on no memory (then nothing of the text is quoted). Free with free(). */
static char *quotable(const rt_otlp *ex, const char *data, size_t len)
{
    char *t = malloc(len + 1);
    if (!t)
        return NULL;
    for (size_t i = 0; i < len; i++)
        t[i] = data[i] ? data[i] : ' ';
    t[len] = '\0';
    redact_headers(ex, t);
    for (char *p = t; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            *p = ' ';
    return t;
}

/* Warns once when an accepted reply says some data points were rejected (partialSuccess). */
static void check_partial(rt_otlp *ex, const rt_buf *body)
{
    if (ex->partial_warned || !body->data || body->len == 0)
        return;
    json_t *j = json_loadb(body->data, body->len, 0, NULL);
    json_t *ps = json_object_get(j, "partialSuccess");
    json_t *rej = json_object_get(ps, "rejectedDataPoints");
    long long n = json_is_string(rej) ? strtoll(json_string_value(rej), NULL, 10) : json_integer_value(rej);
    if (n > 0) {
        json_t *em = json_object_get(ps, "errorMessage");
        char *msg = json_is_string(em) ? quotable(ex, json_string_value(em), json_string_length(em)) : NULL;
        rt_log(&ex->lg, RT_LOG_WARN, "otlp: the receiver rejected %lld data points (%.*s)", n, (int)QUOTE_MAX,
               msg ? msg : "");
        free(msg);
        ex->partial_warned = true;
    }
    json_decref(j);
}

/* Sends the pending push once, within timeout. why gets the failure ("HTTP 503", curl's words),
 * *retry_after the delay a Retry-After asked for (-1: none). */
static outcome send_pending(rt_otlp *ex, double timeout, char *why, size_t whylen, double *retry_after)
{
    rt_fetch_request rq = {.method = "POST",
                           .url = ex->url,
                           .headers = (const char *const *)ex->headers,
                           .body = ex->p.data,
                           .body_len = ex->p.len,
                           .timeout_secs = timeout,
                           .max_body = REPLY_MAX,
                           .reply_header = "Retry-After"};
    rt_fetch_reply rp;
    char err[512] = "";
    rt_error e = ex->fetch(ex->fetch_user, &rq, &rp, err, sizeof err);
    pthread_mutex_lock(&ex->mu);
    ex->requests++;
    pthread_mutex_unlock(&ex->mu);
    *retry_after = -1;
    outcome o;
    if (e == RT_OK && rp.status >= 200 && rp.status < 300) {
        check_partial(ex, &rp.body);
        o = SENT;
    } else if (e == RT_OK) {
        long s = rp.status;
        o = s == 429 || s == 502 || s == 503 || s == 504 ? RETRY : REFUSED;
        char *body = rp.body.data && rp.body.len ? quotable(ex, rp.body.data, rp.body.len) : NULL;
        snprintf(why, whylen, "HTTP %ld%s%.*s", s, body && body[0] ? ": " : "", (int)QUOTE_MAX, body ? body : "");
        free(body);
        if (o == RETRY)
            *retry_after = rt_otlp_retry_after(rp.header, rt_real_secs(), RETRY_AFTER_CAP);
    } else {
        o = e == RT_ERR_IO ? RETRY : REFUSED; /* IO: no connection, no answer in time */
        snprintf(why, whylen, "%s", err[0] ? err : rt_strerror(e));
    }
    rt_fetch_reply_free(&rp);
    redact_headers(ex, why); /* curl's words too */
    return o;
}

/* The pause before try number tries + 1: from lo doubling to hi, jittered into its upper half. */
static double backoff(rt_otlp *ex, unsigned tries, double lo, double hi)
{
    double b = fmin(lo * ldexp(1.0, (int)(tries > 16 ? 16 : tries) - 1), hi);
    return b * (0.5 + 0.5 * (double)rand_r(&ex->seed) / RAND_MAX);
}

/* Pushes the pending request and then the queue, batch by batch, until the queue is empty, a
 * push must wait for its retry, or until (monotonic) comes. finishing: the short backoff. */
static void drain(rt_otlp *ex, double until, bool finishing)
{
    for (;;) {
        /* once rt_otlp_finish is called, the end's phase takes over: no request started from
         * here runs past its deadline */
        if (!finishing && rt_locked_flag(&ex->mu, &ex->finishing))
            return;
        if (!ex->have_p && !build_pending(ex)) {
            pthread_mutex_lock(&ex->mu);
            bool more = ex->qlen > 0;
            pthread_mutex_unlock(&ex->mu);
            if (more)
                continue; /* a batch that could not be built: the next one */
            return;
        }
        double now = rt_clock_now(ex->clock);
        if (now < ex->p.retry_at)
            return;
        double timeout = fmin(ex->timeout, until - now);
        if (timeout < MIN_REQUEST)
            return;
        char why[512] = "";
        double ra;
        outcome o = send_pending(ex, timeout, why, sizeof why, &ra);
        size_t rows = ex->p.rows;
        if (o == RETRY) {
            ex->p.tries++;
            /* Retry-After is a floor: "Retry-After: 0" from a receiver in trouble is no reason to
             * hammer it */
            double wait =
                finishing ? backoff(ex, ex->p.tries, 0.25, 1.0) : backoff(ex, ex->p.tries, BACKOFF_MIN, BACKOFF_MAX);
            wait = fmax(wait, ra);
            ex->p.retry_at = rt_clock_now(ex->clock) + wait;
            ex->p.asked = ra >= 0;
            if (!ex->failing)
                ex->fail_since = rt_clock_now(ex->clock);
            push_failed(ex, why);
            rt_log(&ex->lg, RT_LOG_DEBUG, "otlp: push try %u failed (%s); next in %.1f s", ex->p.tries, why, wait);
            ex->failing = true;
            return;
        }
        pending_free(&ex->p);
        ex->have_p = false;
        pthread_mutex_lock(&ex->mu);
        if (o == SENT)
            ex->delivered += rows;
        else
            ex->rejected += rows;
        pthread_mutex_unlock(&ex->mu);
        if (o == REFUSED)
            rt_log(&ex->lg, RT_LOG_WARN, "otlp: the receiver refused a push of %zu samples (%s); it is dropped", rows,
                   why);
        else if (ex->outage_warned)
            rt_log(&ex->lg, RT_LOG_INFO, "otlp: metrics are pushed again");
        if (o == REFUSED)
            push_failed(ex, why);
        ex->failing = false;
        ex->outage_warned = false;
    }
}

/* Warns once an outage has lasted OUTAGE_WARN_SECS (checked every interval, whatever the backoff). */
static void note_outage(rt_otlp *ex)
{
    double lasted = rt_clock_now(ex->clock) - ex->fail_since;
    if (!ex->failing || ex->outage_warned || lasted < OUTAGE_WARN_SECS)
        return;
    ex->outage_warned = true;
    rt_log(&ex->lg, RT_LOG_WARN,
           "otlp: cannot push metrics for %.0f s (%s); retrying, samples are kept meanwhile "
           "(at most %zu)",
           lasted, ex->last_why, ex->max_queue);
}

/* Warns once when the queue first overflowed. */
static void note_drops(rt_otlp *ex)
{
    pthread_mutex_lock(&ex->mu);
    uint64_t dropped = ex->dropped;
    pthread_mutex_unlock(&ex->mu);
    if (dropped && !ex->drop_warned) {
        ex->drop_warned = true;
        rt_handle_err_set(&ex->err, &ex->mu, "the queue (%zu samples) was full: the oldest samples were dropped", ex->max_queue);
        rt_log(&ex->lg, RT_LOG_WARN,
               "otlp: the receiver does not take the samples fast enough: the queue (%zu samples) is full and the "
               "oldest are dropped",
               ex->max_queue);
    }
}

/* The end: everything queued pushed, retried until the thread's own deadline (a little before
 * rt_otlp_finish stops waiting); a backoff is cut short, a Retry-After is kept (past the deadline:
 * given up). Sets ex->result. */
static void finish_phase(rt_otlp *ex)
{
    pthread_mutex_lock(&ex->mu);
    double until = end_of(ex);
    pthread_mutex_unlock(&ex->mu);
    if (ex->have_p && !ex->p.asked)
        ex->p.retry_at = 0;
    for (;;) {
        drain(ex, until, true);
        double now = rt_clock_now(ex->clock);
        if (!ex->have_p || now + MIN_REQUEST >= until || ex->p.retry_at >= until)
            break;
        rt_clock_sleep_until(ex->clock, ex->p.retry_at);
    }
    note_drops(ex);
    pthread_mutex_lock(&ex->mu);
    uint64_t added = ex->added, delivered = ex->delivered, dropped = ex->dropped;
    uint64_t unsent = ex->qlen + (ex->have_p ? ex->p.rows : 0);
    uint64_t refused = ex->rejected;
    pthread_mutex_unlock(&ex->mu);
    if (delivered < added)
        rt_log(&ex->lg, RT_LOG_WARN,
               "otlp: %llu of %llu samples were not delivered (%llu still queued at the end, %llu dropped from the "
               "full queue, %llu refused; last error: %s)",
               (unsigned long long)(added - delivered), (unsigned long long)added, (unsigned long long)unsent,
               (unsigned long long)dropped, (unsigned long long)refused, ex->last_why[0] ? ex->last_why : "none");
    ex->result = delivered == added ? RT_OK : RT_ERR_IO;
}

static void otlp_destroy(rt_otlp *ex);

/* The exporter's thread: a push every interval (and the retries between), then the end. Frees
 * ex itself when rt_otlp_free gave up waiting for it (orphaned). */
static void *otlp_main(void *arg)
{
    rt_otlp *ex = arg;
    double next = ex->t0 + ex->interval;
    pthread_mutex_lock(&ex->mu);
    for (;;) {
        double wake = ex->have_p && ex->p.retry_at < next ? ex->p.retry_at : next;
        wait_until(ex, wake, &ex->finishing);
        if (ex->finishing)
            break;
        pthread_mutex_unlock(&ex->mu);
        double now = rt_clock_now(ex->clock);
        bool tick = now >= next;
        if (tick)
            next += ex->interval * floor((now - next) / ex->interval + 1.0);
        if (tick || (ex->have_p && now >= ex->p.retry_at))
            drain(ex, INFINITY, false);
        note_outage(ex);
        note_drops(ex);
        pthread_mutex_lock(&ex->mu);
    }
    pthread_mutex_unlock(&ex->mu);
    finish_phase(ex);
    pthread_mutex_lock(&ex->mu);
    ex->done = true;
    bool orphaned = ex->orphaned;
    rt_clock_broadcast(ex->clock, &ex->cv);
    pthread_mutex_unlock(&ex->mu);
    if (orphaned)
        otlp_destroy(ex);
    return NULL;
}

/* ---- the public side ------------------------------------------------------------------------------ */

static void otlp_destroy(rt_otlp *ex)
{
    for (size_t i = 0; ex->q && i < ex->qlen; i++)
        free(ex->q[(ex->qhead + i) % ex->max_queue]);
    free(ex->q);
    pending_free(&ex->p);
    rt_otlp_state_free(&ex->state);
    for (size_t i = 0; ex->headers && ex->headers[i]; i++) /* they may hold credentials */
        explicit_bzero(ex->headers[i], strlen(ex->headers[i]));
    strv_free(ex->headers);
    for (size_t i = 0; i < ex->nuser_res; i++) {
        free((char *)ex->user_res[i].key);
        free((char *)ex->user_res[i].value);
    }
    free(ex->user_res);
    rt_labels_free(&ex->labels);
    strv_free(ex->command);
    for (size_t i = 0; i < ex->nres_strs; i++)
        free(ex->res_strs[i]);
    free(ex->res_strs);
    free(ex->res);
    for (size_t i = 0; i < RT_ARRAY_LEN(ex->cloud_vals); i++)
        free(ex->cloud_vals[i]);
    rt_free_all(ex->json, ex->hostname, ex->host_id, ex->url);
    pthread_mutex_destroy(&ex->mu);
    pthread_mutex_destroy(&ex->caller_mu);
    pthread_cond_destroy(&ex->cv);
    rt_cloud_free(ex->cloud);
    rt_phase_label_free(&ex->phase); /* after the rows that point at its names */
    free(ex);
}

/* A usable "Name: value" header: a non-empty token name, a colon, no line breaks. */
static bool header_ok(const char *h)
{
    const char *colon = strchr(h, ':');
    if (!colon || colon == h || strpbrk(h, "\r\n"))
        return false;
    for (const char *p = h; p < colon; p++)
        if (*p <= ' ' || *p >= 0x7f)
            return false;
    return true;
}

/* Copies what the options point to into ex. Returns false on no memory. */
static bool copy_options(rt_otlp *ex, const rt_otlp_options *o)
{
    size_t n = 0;
    ex->url = rt_strdup(o->url);
    ex->headers = strv_dup(o->headers, SIZE_MAX, 2, &n);
    if (!ex->url || !ex->headers)
        return false;
    ex->nuser_headers = n;
    if (!(ex->headers[n++] = rt_strdup("Content-Type: application/json")) ||
        (ex->gzip && !(ex->headers[n++] = rt_strdup("Content-Encoding: gzip"))))
        return false;
    if (o->resource_count) {
        ex->user_res = calloc(o->resource_count, sizeof *ex->user_res);
        if (!ex->user_res)
            return false;
        for (size_t i = 0; i < o->resource_count; i++) {
            const rt_kv *kv = &o->resource[i];
            if (!kv->key || !*kv->key)
                continue;
            rt_kv *d = &ex->user_res[ex->nuser_res++];
            d->key = rt_strdup(kv->key);
            d->value = rt_strdup(kv->value ? kv->value : "");
            if (!d->key || !d->value)
                return false;
        }
    }
    if (o->command && !(ex->command = strv_dup(o->command, SIZE_MAX, 0, NULL)))
        return false;
    if (o->host && ((o->host->hostname && !(ex->hostname = rt_strdup(o->host->hostname))) ||
                    (o->host->host_id && !(ex->host_id = rt_strdup(o->host->host_id)))))
        return false;
    if (o->job) {
        rt_job j = RT_JOB_INIT;
        if (rt_struct_copy(&j, sizeof j, o->job) < 0 || rt_labels_from_job(&j, &ex->labels) != RT_OK)
            return false;
    }
    ex->q = calloc(ex->max_queue, sizeof *ex->q);
    ex->json_cap = 1 << 16;
    ex->json = malloc(ex->json_cap);
    return ex->q && ex->json;
}

rt_error rt_otlp_start_net(const rt_otlp_options *opts, rt_otlp_fetch_fn fetch, void *user, rt_clock *clock,
                           rt_otlp **out)
{
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    rt_otlp_options o = RT_OTLP_OPTIONS_INIT;
    if (!opts || !fetch || rt_struct_copy(&o, sizeof o, opts) < 0 || !o.url ||
        (strncmp(o.url, "http://", 7) != 0 && strncmp(o.url, "https://", 8) != 0) ||
        !(o.interval_secs >= 0 && o.interval_secs < 1e6) || !(o.timeout_secs >= 0 && o.timeout_secs < 1e6) ||
        !(o.finish_timeout_secs >= 0 && o.finish_timeout_secs < 1e6) || (o.resource_count && !o.resource))
        return RT_ERR_INVALID;
    for (size_t i = 0; o.headers && o.headers[i]; i++)
        if (!header_ok(o.headers[i]))
            return RT_ERR_INVALID;
    char err[256];
    if (!o.no_gzip && rt_gzip_available(err, sizeof err) != RT_OK)
        return RT_ERR_UNSUPPORTED;
    rt_otlp *ex = calloc(1, sizeof *ex);
    if (!ex)
        return RT_ERR_NOMEM;
    pthread_mutex_init(&ex->mu, NULL);
    pthread_mutex_init(&ex->caller_mu, NULL);
    rt_clock_cond_init(&ex->cv);
    ex->clock = clock;
    ex->user_lg = (rt_logger){.fn = o.log, .user = o.log_user};
    ex->lg = (rt_logger){.fn = otlp_log, .user = ex};
    ex->fetch = fetch;
    ex->fetch_user = user;
    ex->cloud = rt_cloud_ref(o.cloud); /* ours: the caller may free its handle */
    ex->interval = o.interval_secs > 0 ? o.interval_secs : 10.0;
    ex->timeout = o.timeout_secs > 0 ? o.timeout_secs : 10.0;
    ex->finish_timeout = o.finish_timeout_secs > 0 ? o.finish_timeout_secs : 10.0;
    ex->gzip = !o.no_gzip;
    ex->max_queue = o.max_queue_samples ? o.max_queue_samples : 1024;
    ex->body_max = BODY_MAX;
    ex->seed = (unsigned)((uint64_t)(rt_real_secs() * 1000.0) ^ (uintptr_t)ex);
    if (!copy_options(ex, &o)) {
        otlp_destroy(ex);
        return RT_ERR_NOMEM;
    }
    ex->t0 = rt_clock_now(ex->clock);
    int e = pthread_create(&ex->th, NULL, otlp_main, ex);
    if (e != 0) {
        otlp_destroy(ex);
        errno = e;
        return RT_ERR_SYSTEM;
    }
    *out = ex;
    return RT_OK;
}

/* rt_otlp_fetch_fn through libcurl. */
static rt_error curl_fetch(void *user, const rt_fetch_request *req, rt_fetch_reply *out, char *err, size_t errlen)
{
    (void)user;
    return rt_fetch(req, out, err, errlen);
}

rt_error rt_otlp_start(const rt_otlp_options *opts, rt_otlp **out)
{
    if (out)
        *out = NULL;
    if (!opts || !out || opts->struct_size < sizeof(size_t))
        return RT_ERR_INVALID;
    char err[256];
    if (rt_fetch_available(err, sizeof err) != RT_OK)
        return RT_ERR_UNSUPPORTED;
    return rt_otlp_start_net(opts, curl_fetch, NULL, NULL, out);
}

rt_error rt_otlp_finish(rt_otlp *ex)
{
    if (!ex)
        return RT_ERR_INVALID;
    pthread_mutex_lock(&ex->mu);
    if (ex->finishing) {
        pthread_mutex_unlock(&ex->mu);
        return RT_ERR_INVALID;
    }
    ex->finishing = true;
    ex->deadline = rt_clock_now(ex->clock) + ex->finish_timeout;
    rt_clock_broadcast(ex->clock, &ex->cv);
    wait_until(ex, ex->deadline, &ex->done);
    rt_error r = ex->done ? ex->result : RT_ERR_IO;
    uint64_t undelivered = ex->added - ex->delivered;
    bool late = !ex->done;
    pthread_mutex_unlock(&ex->mu);
    if (late) { /* the thread is still in a request that began before the end: it says nothing more */
        rt_handle_err_set(&ex->err, &ex->mu, "%llu samples were not delivered (the receiver did not answer in time)",
                     (unsigned long long)undelivered);
        rt_log(&ex->lg, RT_LOG_WARN, "otlp: %llu samples were not delivered (the receiver did not answer in time)",
               (unsigned long long)undelivered);
        caller_leaves(ex);
    }
    return r;
}

void rt_otlp_free(rt_otlp *ex)
{
    if (!ex)
        return;
    if (!rt_locked_flag(&ex->mu, &ex->finishing))
        rt_otlp_finish(ex);
    pthread_mutex_lock(&ex->mu);
    if (!ex->done) { /* a request past its deadline: the thread frees ex when it ends */
        caller_leaves(ex);
        pthread_detach(ex->th);
        ex->orphaned = true;
        pthread_mutex_unlock(&ex->mu);
        return;
    }
    pthread_mutex_unlock(&ex->mu);
    pthread_join(ex->th, NULL);
    otlp_destroy(ex);
}

const char *rt_otlp_errmsg(rt_otlp *ex)
{
    return ex ? rt_handle_err_get(&ex->err, &ex->mu) : "";
}

void rt_otlp_set_body_max(rt_otlp *ex, size_t max)
{
    pthread_mutex_lock(&ex->mu);
    ex->body_max = max ? max : BODY_MAX;
    pthread_mutex_unlock(&ex->mu);
}

void rt_otlp_counts(rt_otlp *ex, uint64_t *added, uint64_t *delivered, uint64_t *dropped, uint64_t *rejected,
                    unsigned *requests)
{
    pthread_mutex_lock(&ex->mu);
    if (added)
        *added = ex->added;
    if (delivered)
        *delivered = ex->delivered;
    if (dropped)
        *dropped = ex->dropped;
    if (rejected)
        *rejected = ex->rejected;
    if (requests)
        *requests = ex->requests;
    pthread_mutex_unlock(&ex->mu);
}
