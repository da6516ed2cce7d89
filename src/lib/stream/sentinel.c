/* sentinel.c - the Sentinel API of docs/contracts.md §5 as pure functions: the JSON bodies of
 * POST /runs and POST /runs/{id}/finish built with jansson, the replies of /runs and
 * refresh-credentials read with jansson into bounded, header-safe fields, and an ISO 8601 time
 * parser. */
#define _DEFAULT_SOURCE /* gmtime_r, explicit_bzero */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sentinel.h"

/* Bodies are dumped with 15 significant digits: a figure rounded to 3 decimals prints as itself
 * (15788.21, not 15788.209999999999). */
#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))
/* The most a register body may take (a long argv and many tags fit easily). */
#define REGISTER_MAX ((size_t)16 << 20)

/* ---- UTF-8 ---------------------------------------------------------------------------------- */

/* The length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or 0 when the bytes there are not one. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* past U+10FFFF */
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* A JSON string of s[0..n): the bytes as they are when they are UTF-8, else with every byte that
 * is not part of a well-formed sequence replaced by U+FFFD (an argv or a CPU model may hold any
 * bytes; the API takes only UTF-8). Returns a new reference, or NULL when out of memory. */
static json_t *json_text(const char *s, size_t n)
{
    json_t *v = json_stringn(s, n);
    if (v)
        return v;
    if (n > (SIZE_MAX - 1) / 3)
        return NULL;
    char *clean = malloc(n * 3 + 1); /* one byte becomes at most three (EF BF BD) */
    if (!clean)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_seq((const unsigned char *)s + i, n - i);
        if (len == 0) {
            memcpy(clean + k, "\xEF\xBF\xBD", 3);
            k += 3;
            i++;
        } else {
            memcpy(clean + k, s + i, len);
            k += len;
            i += len;
        }
    }
    v = json_stringn(clean, k);
    free(clean);
    return v;
}

/* ---- building bodies ------------------------------------------------------------------------ */

/* Sets o[key] to the string s unless s is NULL or empty (an absent value is left out). Returns
 * false when out of memory. */
static bool put_str(json_t *o, const char *key, const char *s)
{
    if (!s || !s[0])
        return true;
    return json_object_set_new(o, key, json_text(s, strlen(s))) == 0;
}

/* Sets o[key] to the integer v unless it is RT_NULL_I64. Returns false when out of memory. */
static bool put_int(json_t *o, const char *key, int64_t v)
{
    return v == RT_NULL_I64 || json_object_set_new(o, key, json_integer((json_int_t)v)) == 0;
}

/* Sets o[key] to x rounded to 3 decimals unless x is NaN or infinite (or too large to scale): as an integer when it is
 * whole (16384, not 16384.0, which an integer field of the API takes as well). Returns false
 * when out of memory. */
static bool put_num(json_t *o, const char *key, double x)
{
    if (!isfinite(x))
        return true;
    double r = round(x * 1000) / 1000;
    if (!isfinite(r))
        return true; /* too large to be a real figure */
    json_t *v = (r == floor(r) && fabs(r) < 9e15) ? json_integer((json_int_t)r) : json_real(r);
    return json_object_set_new(o, key, v) == 0;
}

/* json_dump_callback's sink: appends to the rt_buf in data. */
static int dump_to_buf(const char *p, size_t n, void *data)
{
    return rt_buf_append(data, p, n) == 0 ? 0 : -1;
}

/* Dumps o into *out (initialised here, NUL-terminated), taking max bytes at most, and releases o.
 * Returns RT_OK, or RT_ERR_NOMEM with *out empty. */
static rt_error dump_body(json_t *o, size_t max, rt_buf *out)
{
    rt_buf_init(out, max);
    int rc = json_dump_callback(o, dump_to_buf, out, DUMP_FLAGS);
    json_decref(o);
    if (rc != 0 || !out->data) {
        rt_buf_free(out);
        return RT_ERR_NOMEM;
    }
    return RT_OK;
}

/* The argv as the string of its compact JSON array ("[\"python\",\"train.py\"]"), or NULL when
 * out of memory. An argv with no element gives "" (then left out). The caller frees it. */
static char *command_text(const char *const *argv)
{
    json_t *a = json_array();
    for (size_t i = 0; a && argv[i]; i++)
        if (json_array_append_new(a, json_text(argv[i], strlen(argv[i]))) != 0) {
            json_decref(a);
            return NULL;
        }
    if (!a)
        return NULL;
    char *s = json_array_size(a) ? json_dumps(a, JSON_COMPACT) : rt_strdup("");
    json_decref(a);
    return s;
}

/* The job's metadata fields and its tags (those of the form "k=v", k not empty: any other would
 * make the API refuse the whole run). Returns false when out of memory. */
static bool put_job(json_t *o, const rt_job *j)
{
    for (size_t i = 0; i < rt_job_field_count(); i++)
        if (!put_str(o, rt_job_field_name(i), rt_job_field(j, i)))
            return false;
    if (!j->tags || j->tag_count == 0)
        return true;
    json_t *tags = json_array();
    if (!tags || json_object_set_new(o, "tags", tags) != 0)
        return false;
    for (size_t i = 0; i < j->tag_count; i++) {
        const char *t = j->tags[i];
        if (!t || t[0] == '=' || !strchr(t, '='))
            continue;
        if (json_array_append_new(tags, json_text(t, strlen(t))) != 0)
            return false;
    }
    return true;
}

/* The host_* fields (allocation: the run's guess, else the host's). False when out of memory. */
static bool put_host(json_t *o, const rt_host *h, const char *allocation)
{
    if (!allocation && h)
        allocation = h->allocation;
    if (!put_str(o, "host_server_allocation", allocation))
        return false;
    if (!h)
        return true;
    return put_str(o, "host_id", h->host_id) && put_str(o, "host_hostname", h->hostname) &&
           put_str(o, "host_ip", h->ip) && put_int(o, "host_vcpus", h->vcpus) &&
           put_str(o, "host_cpu_model", h->cpu_model) && put_num(o, "host_memory_mib", h->memory_mib) &&
           put_str(o, "host_gpu_model", h->gpu_model) && put_int(o, "host_gpu_count", h->gpu_count) &&
           put_num(o, "host_gpu_memory_mib", h->gpu_memory_mib) && put_num(o, "host_storage_gb", h->storage_gb);
}

/* The cloud_* fields. False when out of memory. */
static bool put_cloud(json_t *o, const rt_cloud *c)
{
    return put_str(o, "cloud_vendor_id", c->vendor_id) && put_str(o, "cloud_account_id", c->account_id) &&
           put_str(o, "cloud_region_id", c->region_id) && put_str(o, "cloud_zone_id", c->zone_id) &&
           put_str(o, "cloud_instance_type", c->instance_type);
}

/* Builds the body of POST /runs. Values that are NULL, empty, NaN or RT_NULL_I64 are left out
 * (never null); tags without a '=' are left out; strings that are not UTF-8 have their stray
 * bytes replaced by U+FFFD. *out is initialised here (any earlier content is not freed). Returns
 * RT_OK, RT_ERR_INVALID (run or out NULL) or RT_ERR_NOMEM (then *out is empty). */
rt_error rt_sentinel_register_body(const rt_sentinel_run *run, rt_buf *out)
{
    if (!out)
        return RT_ERR_INVALID;
    rt_buf_init(out, 0);
    if (!run)
        return RT_ERR_INVALID;
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok && run->job)
        ok = put_job(o, run->job);
    if (ok && run->command) {
        char *cmd = command_text(run->command);
        ok = cmd && put_str(o, "command", cmd);
        free(cmd);
    }
    if (ok)
        ok = put_host(o, run->host, run->allocation);
    if (ok && run->cloud)
        ok = put_cloud(o, run->cloud);
    if (!ok) {
        json_decref(o);
        return RT_ERR_NOMEM;
    }
    return dump_body(o, REGISTER_MAX, out);
}

/* Builds the body of POST /runs/{id}/finish. Returns RT_OK, RT_ERR_INVALID (out NULL, a time
 * that is not finite or not after 1970, n > 0 with a NULL URI), or RT_ERR_NOMEM (then *out is
 * empty). *out is initialised here. */
rt_error rt_sentinel_finish_body(int exit_code, bool failed, double finished_unix, const char *const *uris, size_t n,
                                 const char *csv, size_t csv_len, rt_buf *out)
{
    if (!out)
        return RT_ERR_INVALID;
    rt_buf_init(out, 0);
    if (!isfinite(finished_unix) || finished_unix < 0 || finished_unix > 253402300799.0 || (n > 0 && !uris) ||
        (n == 0 && !csv && csv_len > 0))
        return RT_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        if (!uris[i])
            return RT_ERR_INVALID;
    time_t t = (time_t)floor(finished_unix);
    struct tm tm;
    char when[32];
    if (!gmtime_r(&t, &tm) || strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm) != 20)
        return RT_ERR_INVALID;
    json_t *o = json_object();
    bool ok = o && json_object_set_new(o, "exit_code", json_integer(exit_code)) == 0 &&
              json_object_set_new(o, "run_status", json_string(failed ? "failed" : "finished")) == 0 &&
              json_object_set_new(o, "finished_at", json_string(when)) == 0;
    if (ok && n > 0) {
        json_t *list = json_array();
        ok = list && json_object_set_new(o, "data_source", json_string("s3")) == 0 &&
             json_object_set_new(o, "data_uris", list) == 0;
        for (size_t i = 0; ok && i < n; i++)
            ok = json_array_append_new(list, json_text(uris[i], strlen(uris[i]))) == 0;
    } else if (ok) {
        ok = json_object_set_new(o, "data_source", json_string("inline")) == 0 &&
             json_object_set_new(o, "data_csv", json_text(csv ? csv : "", csv_len)) == 0;
    }
    if (!ok) {
        json_decref(o);
        return RT_ERR_NOMEM;
    }
    /* JSON escapes take at most 6 bytes per byte (\u00XX) */
    size_t max = csv_len < (SIZE_MAX - 65536) / 6 ? csv_len * 6 + 65536 : SIZE_MAX;
    for (size_t i = 0; i < n && max < SIZE_MAX / 2; i++)
        max += strlen(uris[i]) * 6 + 8;
    return dump_body(o, max, out);
}

/* ---- reading replies ------------------------------------------------------------------------ */

/* Writes msg into err[errlen] when there is room for it. Returns false (for `return fail(...)`). */
static bool fail(char *err, size_t errlen, const char *msg)
{
    if (err && errlen > 0)
        snprintf(err, errlen, "%s", msg);
    return false;
}

/* Whether s is a value that may go into an HTTP header and a signature as it is: printable ASCII
 * without blanks (0x21..0x7e), not empty. */
static bool header_safe(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return false;
    return true;
}

/* Copies upload_credentials.<key> (a header-safe string that fits cap) into dst. Returns true,
 * or false with err naming the key (never the value). */
static bool cred_field(json_t *c, const char *key, char *dst, size_t cap, char *err, size_t errlen)
{
    json_t *v = json_object_get(c, key);
    char msg[96];
    if (!json_is_string(v)) {
        snprintf(msg, sizeof msg, "upload_credentials.%s is %s", key, v ? "not a string" : "missing");
        return fail(err, errlen, msg);
    }
    size_t n = json_string_length(v);
    if (n >= cap || !header_safe(json_string_value(v), n)) {
        snprintf(msg, sizeof msg, "upload_credentials.%s is %s", key,
                 n >= cap ? "too long" : n == 0 ? "empty" : "not printable ASCII");
        return fail(err, errlen, msg);
    }
    memcpy(dst, json_string_value(v), n + 1);
    return true;
}

/* Wipes the string value of c's member key (the parsed reply's copy of a secret), if any. */
static void wipe_member(json_t *c, const char *key)
{
    json_t *v = json_object_get(c, key);
    if (json_is_string(v))
        explicit_bzero((char *)json_string_value(v), json_string_length(v));
}

/* Reads the upload_credentials member of reply into *creds, all or nothing: *creds is written
 * only when every field is good. Its expiry is expiration or else expires_at (an ISO 8601
 * string); neither: NaN (unknown); one that is not a time: an error. */
static bool read_credentials(json_t *reply, rt_s3_credentials *creds, char *err, size_t errlen)
{
    json_t *c = json_object_get(reply, "upload_credentials");
    if (!json_is_object(c))
        return fail(err, errlen, c ? "upload_credentials is not an object" : "upload_credentials is missing");
    rt_s3_credentials *tmp = calloc(1, sizeof *tmp); /* about 4.5 KiB: not on a thread's stack */
    if (!tmp)
        return fail(err, errlen, "out of memory");
    bool ok = cred_field(c, "access_key", tmp->access_key, sizeof tmp->access_key, err, errlen) &&
              cred_field(c, "secret_key", tmp->secret_key, sizeof tmp->secret_key, err, errlen) &&
              cred_field(c, "session_token", tmp->session_token, sizeof tmp->session_token, err, errlen);
    tmp->expires_unix = NAN;
    const char *names[2] = {"expiration", "expires_at"};
    for (int i = 0; ok && i < 2; i++) {
        json_t *e = json_object_get(c, names[i]);
        if (!e || json_is_null(e))
            continue;
        double t = json_is_string(e) ? rt_iso8601_parse(json_string_value(e)) : NAN;
        if (isnan(t)) {
            char msg[96];
            snprintf(msg, sizeof msg, "upload_credentials.%s is not an ISO 8601 time", names[i]);
            ok = fail(err, errlen, msg);
        }
        tmp->expires_unix = t;
        break;
    }
    if (ok)
        *creds = *tmp;
    wipe_member(c, "secret_key"); /* the parsed copies; the reply's own buffer is the caller's */
    wipe_member(c, "session_token");
    explicit_bzero(tmp, sizeof *tmp);
    free(tmp);
    return ok;
}

/* The reply as a JSON object (free with json_decref), or NULL with err set. */
static json_t *load_reply(const char *buf, size_t len, char *err, size_t errlen)
{
    if (!buf || len == 0) {
        fail(err, errlen, "the reply is empty");
        return NULL;
    }
    json_error_t e;
    json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);
    if (!json_is_object(j)) {
        fail(err, errlen, j ? "the reply is not a JSON object" : "the reply is not JSON");
        json_decref(j);
        return NULL;
    }
    return j;
}

/* Whether s[0..n) is a run id that goes into a URL path and an S3 key as it is: URL-unreserved
 * characters (A-Z a-z 0-9 - . _ ~), not "." or "..". */
static bool run_id_ok(const char *s, size_t n)
{
    if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
              c == '_' || c == '~'))
            return false;
    }
    return true;
}

/* Parses "s3://BUCKET[/PREFIX]" into bucket[bcap] and prefix[pcap] (the prefix without leading
 * or trailing '/'). The bucket follows S3's naming rules (3 to 63 of a-z 0-9 . -, starting and
 * ending with a letter or digit); the prefix has no control byte, no empty, "." or ".." segment
 * (curl would fold them, and the signed path would no longer be the one sent). Returns true, or
 * false with err saying why. Writes only on success. */
static bool parse_s3_prefix(const char *uri, size_t n, char *bucket, size_t bcap, char *prefix, size_t pcap,
                            char *err, size_t errlen)
{
    if (n < 5 || memcmp(uri, "s3://", 5) != 0)
        return fail(err, errlen, "upload_uri_prefix is not an s3:// URI");
    const char *b = uri + 5, *end = uri + n;
    const char *slash = memchr(b, '/', (size_t)(end - b));
    size_t blen = (size_t)((slash ? slash : end) - b);
    bool bucket_ok = blen >= 3 && blen <= 63 && blen < bcap;
    for (size_t i = 0; bucket_ok && i < blen; i++) {
        char c = b[i];
        bool edge = i == 0 || i == blen - 1;
        bucket_ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (!edge && (c == '.' || c == '-'));
    }
    if (!bucket_ok)
        return fail(err, errlen, "upload_uri_prefix has no valid bucket name");
    const char *p = slash ? slash : end, *pend = end;
    while (p < pend && *p == '/')
        p++;
    while (pend > p && pend[-1] == '/')
        pend--;
    size_t plen = (size_t)(pend - p);
    if (plen >= pcap)
        return fail(err, errlen, "upload_uri_prefix is too long");
    for (const char *seg = p; seg < pend;) {
        const char *e = memchr(seg, '/', (size_t)(pend - seg));
        if (!e)
            e = pend;
        size_t sl = (size_t)(e - seg);
        if (sl == 0 || (sl == 1 && seg[0] == '.') || (sl == 2 && seg[0] == '.' && seg[1] == '.'))
            return fail(err, errlen, "upload_uri_prefix has an empty, \".\" or \"..\" segment");
        for (size_t i = 0; i < sl; i++)
            if ((unsigned char)seg[i] < 0x20 || seg[i] == 0x7f)
                return fail(err, errlen, "upload_uri_prefix has a control character");
        seg = e + 1;
    }
    memcpy(bucket, b, blen);
    bucket[blen] = '\0';
    memcpy(prefix, p, plen);
    prefix[plen] = '\0';
    return true;
}

/* Reads the reply of POST /runs. Writes run_id, target->bucket, target->prefix (not its endpoint
 * or region) and *creds only when the whole reply is good; otherwise returns false with err
 * naming what was missing or wrong (never a value). run_id is a string of URL-unreserved
 * characters, or a non-negative integer (written in decimal). */
bool rt_sentinel_parse_register(const char *buf, size_t len, char *run_id, size_t run_id_cap, rt_s3_target *target,
                                rt_s3_credentials *creds, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!run_id || run_id_cap == 0 || !target || !creds)
        return fail(err, errlen, "bad arguments");
    json_t *j = load_reply(buf, len, err, errlen);
    if (!j)
        return false;
    bool ok = false;
    char id[128], bucket[sizeof target->bucket], prefix[sizeof target->prefix];
    json_t *v = json_object_get(j, "run_id");
    const char *ids = NULL;
    size_t idn = 0;
    if (json_is_string(v)) {
        ids = json_string_value(v);
        idn = json_string_length(v);
    } else if (json_is_integer(v) && json_integer_value(v) >= 0) {
        snprintf(id, sizeof id, "%lld", (long long)json_integer_value(v));
        ids = id;
        idn = strlen(id);
    }
    if (!ids)
        fail(err, errlen, v ? "run_id is not a string" : "run_id is missing");
    else if (idn >= run_id_cap || !run_id_ok(ids, idn))
        fail(err, errlen, idn >= run_id_cap ? "run_id is too long" : "run_id has characters a URL path cannot take");
    else {
        json_t *u = json_object_get(j, "upload_uri_prefix");
        if (!json_is_string(u))
            fail(err, errlen, u ? "upload_uri_prefix is not a string" : "upload_uri_prefix is missing");
        else if (parse_s3_prefix(json_string_value(u), json_string_length(u), bucket, sizeof bucket, prefix,
                                 sizeof prefix, err, errlen) &&
                 read_credentials(j, creds, err, errlen)) {
            memmove(run_id, ids, idn);
            run_id[idn] = '\0';
            memcpy(target->bucket, bucket, sizeof bucket);
            memcpy(target->prefix, prefix, sizeof prefix);
            ok = true;
        }
    }
    json_decref(j);
    return ok;
}

/* Reads the reply of refresh-credentials. *creds is written only when it is good; otherwise
 * false with err naming what was wrong (never a value). */
bool rt_sentinel_parse_refresh(const char *buf, size_t len, rt_s3_credentials *creds, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!creds)
        return fail(err, errlen, "bad arguments");
    json_t *j = load_reply(buf, len, err, errlen);
    if (!j)
        return false;
    bool ok = read_credentials(j, creds, err, errlen);
    json_decref(j);
    return ok;
}

/* Reads the reply of finish: a whole JSON object (the stand-in's {run_id, run_status}, the live
 * service's {run, processing}). Anything else (no body, a body cut short, not JSON) is not a
 * finish taken: false with err saying which. */
bool rt_sentinel_parse_finish(const char *buf, size_t len, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    json_t *j = load_reply(buf, len, err, errlen);
    json_decref(j);
    return j != NULL;
}

/* ---- ISO 8601 ---------------------------------------------------------------------------- */

/* Reads exactly n digits at *p into *out, advancing *p. Returns false when they are not there. */
static bool digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return true;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (negative before). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                    /* 0..399 */
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* 0..365, from March 1 */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            /* 0..146096 */
    return era * 146097 + doe - 719468;
}

/* Parses "YYYY-MM-DD(T|t| )HH:MM:SS[(.|,)fraction][Z|z|±HH:MM|±HHMM|±HH]" to Unix seconds; a
 * time without a zone is taken as UTC (what a Python service writes for a naive UTC datetime).
 * Returns NaN for anything else: other shapes, a day the month does not have, an hour past 23,
 * trailing bytes. Pure: no locale, no TZ. */
double rt_iso8601_parse(const char *s)
{
    if (!s)
        return NAN;
    const char *p = s;
    int y, mo, d, h, mi, sec;
    if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' || !digits(&p, 2, &d))
        return NAN;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return NAN;
    p++;
    if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' || !digits(&p, 2, &sec))
        return NAN;
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap) || h > 23 || mi > 59 || sec > 60)
        return NAN;
    double frac = 0, scale = 0.1;
    if (*p == '.' || *p == ',') {
        p++;
        if (*p < '0' || *p > '9')
            return NAN;
        for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    int offset = 0; /* seconds east of UTC */
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
        if (!digits(&p, 2, &oh))
            return NAN;
        if (*p == ':') {
            p++;
            if (!digits(&p, 2, &om))
                return NAN;
        } else if (*p >= '0' && *p <= '9' && !digits(&p, 2, &om))
            return NAN;
        if (oh > 23 || om > 59)
            return NAN;
        offset = sign * (oh * 3600 + om * 60);
    }
    if (*p != '\0')
        return NAN;
    int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
    return (double)t + frac;
}
