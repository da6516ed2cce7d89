/* s3_put.c - test helper: PUTs one file to S3 through rt_s3_put (libcurl's SigV4) and prints the
 * status and the CPU time the PUT took, so the e2e tests can drive the strict SigV4 stand-in.
 *   s3-put ENDPOINT BUCKET KEY FILE [REPEAT]
 * ENDPOINT: path-style base (http://127.0.0.1:PORT), or "" for virtual-hosted AWS URLs. KEY is
 * the whole object key. Credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN; region from AWS_REGION, else asked of the bucket (then eu-central-1).
 * Each PUT prints "status=S cpu_ms=C wall_ms=W" on stdout; a failure prints the library's
 * message on stderr and exits 1 (after all REPEAT PUTs). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/s3.h"

/* Reads the whole file into a malloc'd buffer (*len bytes). Returns it, or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *b = realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Copies the environment variable name into out[cap]. Returns false when it is too long. */
static bool env_copy(const char *name, char *out, size_t cap)
{
    const char *v = getenv(name);
    int w = snprintf(out, cap, "%s", v ? v : "");
    return w >= 0 && (size_t)w < cap;
}

static double ms_of(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: s3-put ENDPOINT BUCKET KEY FILE [REPEAT]\n");
        return 2;
    }
    int repeat = argc == 6 ? (int)strtol(argv[5], NULL, 10) : 1;
    static rt_s3_target t;
    static rt_s3_credentials c;
    if (snprintf(t.endpoint, sizeof t.endpoint, "%s", argv[1]) >= (int)sizeof t.endpoint ||
        snprintf(t.bucket, sizeof t.bucket, "%s", argv[2]) >= (int)sizeof t.bucket || !env_copy("AWS_REGION", t.region, sizeof t.region) ||
        !env_copy("AWS_ACCESS_KEY_ID", c.access_key, sizeof c.access_key) ||
        !env_copy("AWS_SECRET_ACCESS_KEY", c.secret_key, sizeof c.secret_key) ||
        !env_copy("AWS_SESSION_TOKEN", c.session_token, sizeof c.session_token) || repeat < 1) {
        fprintf(stderr, "s3-put: an argument or variable is too long\n");
        return 2;
    }
    size_t len = 0;
    char *body = slurp(argv[4], &len);
    if (!body) {
        fprintf(stderr, "s3-put: cannot read %s\n", argv[4]);
        return 2;
    }
    if (!t.region[0]) {
        rt_s3_find_region(&t, &c, 10);
        printf("region=%s\n", t.region);
    }
    int failed = 0;
    for (int i = 0; i < repeat; i++) {
        long status = 0;
        char err[512];
        double cpu0 = ms_of(CLOCK_PROCESS_CPUTIME_ID), wall0 = ms_of(CLOCK_MONOTONIC);
        rt_error rc = rt_s3_put(&t, &c, argv[3], body, len, "application/gzip", 30, &status, err, sizeof err);
        double cpu = ms_of(CLOCK_PROCESS_CPUTIME_ID) - cpu0, wall = ms_of(CLOCK_MONOTONIC) - wall0;
        printf("status=%ld cpu_ms=%.3f wall_ms=%.3f\n", status, cpu, wall);
        if (rc != RT_OK) {
            fprintf(stderr, "s3-put: %s\n", err);
            failed = 1;
        }
    }
    free(body);
    return failed;
}
