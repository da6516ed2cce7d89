/* bench_bridge.c - what the static build's loader helper costs (core/bridge.h, src/lib/bridge/): per
 * use, the CPU of the tool and of the helper (the children's rusage, the helper's fork, exec and
 * libraries' loading included) and the wall time, for a helper that loads libcurl and ends (what
 * every HTTP request of the static build starts with), one that hashes 1 MiB (an S3 batch's
 * SHA-256) and a history session (open, one insert, close). Runs the plain build of the helper
 * (bridge-helper-test) through rt_bridge_use_program: the static build's differs only by its
 * memory file. Prints figures; asserts nothing.
 *   bench-bridge HELPER [ROUNDS]   (default 30) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/bridge.h"
#include "sqlite/sqlite_bridge.h"

static double cpu(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static void report(const char *what, int n, double wall, double self, double kids)
{
    printf("  %-34s %7.2f ms wall, %6.2f ms CPU in the tool, %6.2f ms in the helper (per use, %d uses)\n", what,
           wall * 1e3 / n, self * 1e3 / n, kids * 1e3 / n, n);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench-bridge HELPER [ROUNDS]\n");
        return 2;
    }
    rt_bridge_use_program(argv[1]);
    int n = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 30;
    if (n < 1)
        n = 30;
    char err[300];
    size_t mib = 1u << 20;
    char *data = malloc(mib);
    if (!data)
        return 1;
    memset(data, 'x', mib);
    for (int kind = 0; kind < 3; kind++) {
        double w0 = rt_mono_secs(), s0 = cpu(RUSAGE_SELF), k0 = cpu(RUSAGE_CHILDREN);
        for (int i = 0; i < n; i++) {
            if (kind == 0 && rt_bridge_probe("curl", err, sizeof err) < 0) {
                printf("  libcurl: %s\n", err);
                break;
            }
            if (kind == 1) {
                rt_bridge b;
                rt_wire q, a;
                rt_wire_init(&q);
                rt_wire_init(&a);
                rt_wire_put_i64(&q, RT_BRIDGE_SHA256);
                rt_wire_put_bytes(&q, data, mib);
                if (rt_bridge_start(&b, err, sizeof err) == 0) {
                    rt_bridge_call(&b, &q, &a, rt_mono_secs() + 30, NULL, err, sizeof err);
                    rt_bridge_stop(&b);
                }
                rt_wire_free(&q);
                rt_wire_free(&a);
            }
            if (kind == 2) {
                static rt_sqlite_api t;
                static char dir[] = "/tmp/bench-bridge-XXXXXX", path[64];
                if (i == 0) {
                    if (rt_sqlite_bridge_install(&t, err, sizeof err) < 0 || !mkdtemp(dir)) {
                        printf("  SQLite: %s\n", err);
                        break;
                    }
                    snprintf(path, sizeof path, "%s/h.db", dir);
                }
                sqlite3 *db = NULL;
                t.open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
                t.exec(db, "CREATE TABLE IF NOT EXISTS r (v); INSERT INTO r VALUES (1)", NULL, NULL, NULL);
                t.close(db);
                if (i == n - 1) {
                    unlink(path);
                    rmdir(dir);
                }
            }
        }
        double w = rt_mono_secs() - w0, s = cpu(RUSAGE_SELF) - s0, k = cpu(RUSAGE_CHILDREN) - k0;
        report(kind == 0   ? "start, load libcurl, end"
               : kind == 1 ? "start, SHA-256 of 1 MiB, end"
                           : "history session (open, insert, close)",
               n, w, s, k);
    }
    free(data);
    return 0;
}
