/* fuzz_sentinel.c - libFuzzer target for the Sentinel API's reply parsers and ISO 8601 times
 * (stream/sentinel.h): any reply is read or rejected without a crash, leak or read past its end,
 * and what is accepted is bounded and header-safe; the register and finish bodies built from the
 * same bytes are always JSON objects (no null; the inline CSV intact when it is UTF-8). */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream/sentinel.h"

/* Aborts unless s is NUL-terminated within cap and holds only 0x21..0x7e (nonempty), or, for a
 * prefix, no control byte and no leading or trailing '/'. */
static void check_field(const char *s, size_t cap, bool prefix)
{
    size_t n = strnlen(s, cap);
    if (n == cap || (!prefix && n == 0))
        abort();
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (prefix ? (c < 0x20 || c == 0x7f) : (c < 0x21 || c > 0x7e))
            abort();
    }
    if (prefix && n > 0 && (s[0] == '/' || s[n - 1] == '/'))
        abort();
}

static void check_creds(const rt_s3_credentials *c)
{
    check_field(c->access_key, sizeof c->access_key, false);
    check_field(c->secret_key, sizeof c->secret_key, false);
    check_field(c->session_token, sizeof c->session_token, false);
    if (isinf(c->expires_unix))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1); /* the parsers get exactly size bytes; the NUL is for the rest */
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char id[64], err[160];
    rt_s3_target t;
    rt_s3_credentials c;
    memset(&t, 0, sizeof t);
    memset(&c, 0, sizeof c);
    if (rt_sentinel_parse_register(buf, size, id, sizeof id, &t, &c, err, sizeof err)) {
        check_field(id, sizeof id, false);
        check_field(t.prefix, sizeof t.prefix, true);
        check_field(t.bucket, sizeof t.bucket, false);
        check_creds(&c);
    } else if (strnlen(err, sizeof err) == 0 || strnlen(err, sizeof err) == sizeof err) {
        abort(); /* a refusal always says why */
    }
    memset(&c, 0, sizeof c);
    if (rt_sentinel_parse_refresh(buf, size, &c, err, sizeof err))
        check_creds(&c);
    double when = rt_iso8601_parse(buf);
    if (!isnan(when) && (!isfinite(when) || fabs(when) > 4e11))
        abort();

    /* the bytes as strings (split at NULs) in a register body: still a JSON object, no null */
    const char *argv[4] = {NULL, NULL, NULL, NULL};
    size_t k = 0;
    for (size_t i = 0; i <= size && k < 3; i += strlen(buf + i) + 1)
        argv[k++] = buf + i;
    rt_job job = RT_JOB_INIT;
    job.job_name = argv[0];
    job.tags = argv;
    job.tag_count = k;
    rt_host h;
    memset(&h, 0, sizeof h);
    h.cpu_model = argv[k - 1];
    h.vcpus = RT_NULL_I64;
    h.gpu_count = size;
    h.memory_mib = NAN;
    if (size >= sizeof h.memory_mib)
        memcpy(&h.memory_mib, buf, sizeof h.memory_mib); /* any double: NaN, inf, huge */
    h.gpu_memory_mib = h.storage_gb = NAN;
    rt_sentinel_run run = {.job = &job, .command = argv, .host = &h};
    rt_buf b;
    if (rt_sentinel_register_body(&run, &b) == RT_OK) {
        json_t *o = json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(o) || !json_is_string(json_object_get(o, "command")))
            abort();
        const char *key;
        json_t *v;
        json_object_foreach(o, key, v)
        {
            if (json_is_null(v))
                abort();
        }
        json_decref(o);
        rt_buf_free(&b);
    }
    /* the bytes as the inline CSV: a JSON object whose data_csv is them when they are UTF-8 */
    if (rt_sentinel_finish_body(size % 256, size % 2, (double)size, NULL, 0, buf, size, &b) == RT_OK) {
        json_t *o = json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
        json_t *csv = json_object_get(o, "data_csv");
        if (!json_is_string(csv))
            abort();
        json_t *same = json_stringn(buf, size);
        if (same && (json_string_length(csv) != size || memcmp(json_string_value(csv), buf, size) != 0))
            abort();
        json_decref(same);
        json_decref(o);
        rt_buf_free(&b);
    }
    free(buf);
    return 0;
}
