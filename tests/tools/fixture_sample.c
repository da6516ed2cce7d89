/* fixture_sample.c - test helper: samples a captured fixture tree through the public API with
 * clock readings given on stdin, so the output is exact and repeatable.
 *   fixture-sample PROC_ROOT SYS_ROOT [STATVFS_FILE]
 * stdin lines "MONO REAL": the first takes the baseline reading and prints "ok"; each later one
 * takes a reading and prints the sample as a JSON line and then as a CSV row ($FIXTURE_VIEWS=1:
 * every view of it instead, as views.c writes them, up to a line "== end").
 * STATVFS_FILE lines: "MOUNT_POINT<TAB>FRSIZE<TAB>BLOCKS<TAB>BFREE<TAB>BAVAIL".
 * $FIXTURE_PID: the root of a process tree in the fixture to track. NVML is never loaded
 * (the fixture's GPUs are its sysfs and fdinfo files). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resource_tracker.h"
#include "sample/replay.h"
#include "views.h"

static int fixture_statvfs(void *user, const char *mount_point, struct statvfs *out)
{
    const char *path = user;
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return -1;
    char line[4352];
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = '\0';
        unsigned long long fr, blocks, bfree, bavail;
        if (strcmp(line, mount_point) == 0 && sscanf(tab + 1, "%llu %llu %llu %llu", &fr, &blocks, &bfree, &bavail) == 4) {
            memset(out, 0, sizeof *out);
            out->f_frsize = out->f_bsize = (unsigned long)fr;
            out->f_blocks = (fsblkcnt_t)blocks;
            out->f_bfree = (fsblkcnt_t)bfree;
            out->f_bavail = (fsblkcnt_t)bavail;
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

static void log_cb(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    fprintf(stderr, "fixture-sample: [%d] %s\n", (int)level, msg);
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: fixture-sample PROC_ROOT SYS_ROOT [STATVFS_FILE]\n");
        return 2;
    }
    const char *pid = getenv("FIXTURE_PID");
    rt_sampler_options so = RT_SAMPLER_OPTIONS_INIT;
    so.proc_root = argv[1];
    so.sys_root = argv[2];
    so.log = log_cb;
    so.pid = pid ? strtoll(pid, NULL, 10) : 0;
    so.nvml_library = "/nonexistent/fixture/libnvidia-ml.so.1";
    rt_sampler *s;
    rt_error e = rt_sampler_new_replay(&so, fixture_statvfs, argc == 4 ? argv[3] : NULL, &s);
    if (e != RT_OK) {
        fprintf(stderr, "fixture-sample: %s\n", rt_strerror(e));
        return 1;
    }
    rt_job job = RT_JOB_INIT;
    job.job_name = "fixture";
    const char *views = getenv("FIXTURE_VIEWS");
    static char out[1 << 16];
    double mono, real;
    bool first = true;
    while (scanf("%lf %lf", &mono, &real) == 2) {
        const rt_sample *smp;
        rt_sampler_sample_at(s, mono, real, &smp);
        if (first) { /* the first reading only sets the baseline */
            first = false;
            printf("ok\n");
        } else if (views && strcmp(views, "1") == 0) {
            print_views(stdout, smp, &job);
        } else {
            for (int f = 0; f < 2; f++) {
                size_t n = rt_format_sample(f ? RT_FORMAT_CSV : RT_FORMAT_JSON, smp, &job, out, sizeof out);
                if (n >= sizeof out) {
                    fprintf(stderr, "fixture-sample: sample too large\n");
                    return 1;
                }
                fputs(out, stdout);
            }
        }
        fflush(stdout);
    }
    rt_sampler_free(s);
    return 0;
}
