/* fuzz_s3.c - libFuzzer target for the S3 helpers' hand-written string handling (net/s3.h):
 * an S3 error reply's Code and Message read, an upload_uri_prefix parsed, an object's URL and
 * URI built from it with a key, a region checked, a secret redacted from a message. Nothing may
 * crash, read past its input, or leave a result that is not terminated within its field or that
 * holds a control byte; the redaction must leave no copy of the secret. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/s3.h"

/* Aborts unless s is terminated within cap, holds no control byte, and is "" when not found. */
static void check_text(const char *s, size_t cap, bool found)
{
    size_t n = strnlen(s, cap);
    if (n == cap || (!found && n != 0))
        abort();
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            abort();
}

/* The whole input as an S3 error reply body (exactly size bytes, no NUL after them), read into
 * the fields s3.c uses and into the smallest ones. */
static void error_reply(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return;
    memcpy(buf, data, size);
    char code[128], msg[512];
    bool ok = rt_s3_parse_error(buf, size, code, sizeof code, msg, sizeof msg);
    check_text(code, sizeof code, true);
    check_text(msg, sizeof msg, true);
    if (!ok && (code[0] || msg[0]))
        abort();
    rt_s3_parse_error(buf, size, code, 1, msg, 2);
    check_text(code, 1, true);
    check_text(msg, 2, true);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    error_reply(data, size);
    /* three NUL-terminated strings cut from the input at its first two 0x01 bytes */
    char *buf = malloc(size + 3);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = buf[size + 1] = buf[size + 2] = '\0';
    char *parts[3] = {buf, buf + size + 1, buf + size + 2};
    char *p = memchr(buf, 1, size);
    if (p) {
        *p = '\0';
        parts[1] = p + 1;
        char *q = memchr(p + 1, 1, (size_t)(buf + size - (p + 1)));
        if (q) {
            *q = '\0';
            parts[2] = q + 1;
        }
    }
    rt_s3_target t;
    memset(&t, 0x55, sizeof t);
    t.endpoint[0] = t.region[0] = '\0';
    if (rt_s3_parse_uri(parts[0], &t)) {
        if (strnlen(t.bucket, sizeof t.bucket) == sizeof t.bucket || t.bucket[0] == '\0' ||
            strnlen(t.prefix, sizeof t.prefix) == sizeof t.prefix)
            abort();
        char out[2048];
        snprintf(t.region, sizeof t.region, "eu-central-1");
        if (rt_s3_object_url(&t, parts[1], out, sizeof out) && strnlen(out, sizeof out) == sizeof out)
            abort();
        if (rt_s3_object_uri(&t, parts[1], out, sizeof out) && strnlen(out, sizeof out) == sizeof out)
            abort();
        snprintf(t.endpoint, sizeof t.endpoint, "http://127.0.0.1:9000");
        if (rt_s3_object_url(&t, parts[1], out, sizeof out) && strnlen(out, sizeof out) == sizeof out)
            abort();
    }
    (void)rt_s3_valid_region(parts[1]);
    /* redaction: no copy of the secret is left. A mark "[redacted]" and the text around it may
     * spell the secret again (a secret "]____" after a mark): the marks are blanked with 0x01
     * before looking, so the check holds for secrets without a 0x01 (only the first two 0x01
     * split the input: the secret may hold more, and a blanked mark would then spell it, as
     * fuzz/regress/s3/secret-holds-blank found). Checked for secrets of 10 bytes or more (a
     * shorter one is replaced by a cut mark). */
    size_t sl = strlen(parts[2]);
    rt_redact(parts[0], parts[2]);
    if (sl >= 10 && !strchr(parts[2], 1)) {
        for (char *m = parts[0]; (m = strstr(m, "[redacted]")) != NULL; m += 10)
            memset(m, 1, 10);
        if (strstr(parts[0], parts[2]))
            abort();
    }
    free(buf);
    return 0;
}
