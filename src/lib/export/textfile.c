/* textfile.c - a batch job's figures for node_exporter's textfile collector
 * (rt_prom_textfile_write): DIR/resource_tracker_NAME.prom, replaced atomically (a temporary
 * file in DIR, synced, renamed over the target). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prom_text.h"

/* One requested figure labelled from (no line when not said). */
static void requested(rt_prom_out *f, const char *name, const char *help, const char *from, double v, int dec)
{
    rt_prom_family(f, name, RT_PROM_GAUGE, help);
    if (!from)
        return;
    rt_kv kv = {"from", from};
    rt_prom_num(f, &kv, 1, v, dec);
}

/* used / given, NaN unless both are known and given above 0. */
static double ratio(double used, double given)
{
    return isfinite(used) && isfinite(given) && given > 0 ? used / given : NAN;
}

/* What the job was given and the efficiencies so far, as seff counts them. */
static void request_body(rt_prom_out *f, const rt_job_status *st, double now)
{
    const rt_request *r = st->request;
    requested(f, "resource_tracker_job_requested_cpu_cores", "Cores the job was given where it runs.", r->cpu_from,
              r->cpu_cores, 6);
    requested(f, "resource_tracker_job_requested_memory_bytes", "Memory the job was given where it runs.",
              r->memory_from, r->memory_mib * 1048576.0, 0);
    requested(f, "resource_tracker_job_requested_gpus", "GPUs the job was given where it runs.", r->gpus_from, r->gpus,
              0);
    requested(f, "resource_tracker_job_time_limit_seconds", "The job's wall-time limit where it runs.",
              r->time_limit_from, r->time_limit_secs, 3);
    double end = isfinite(st->end_secs) ? st->end_secs : now;
    double began = r->job_start_secs > 0 ? r->job_start_secs : st->start_secs;
    const struct {
        const char *resource;
        double v;
    } eff[] = {
        {"cpu", r->cpu_from ? ratio(st->cpu_secs, r->cpu_cores * st->duration_secs) : NAN},
        {"memory", r->memory_from ? ratio(st->memory_peak_bytes, r->memory_mib * 1048576.0) : NAN},
        {"time_limit", r->time_limit_from ? ratio(end - began, r->time_limit_secs) : NAN},
    };
    rt_prom_family(f, "resource_tracker_job_efficiency_ratio", RT_PROM_GAUGE,
                   "What the job used of what it was given so far: CPU seconds / (cores x duration), peak memory / "
                   "memory, time since the job began / its time limit.");
    for (size_t i = 0; i < RT_ARRAY_LEN(eff); i++) {
        if (!isfinite(eff[i].v))
            continue;
        rt_kv kv = {"resource", eff[i].resource};
        rt_prom_num(f, &kv, 1, eff[i].v, 6);
    }
}

/* The gauges of a status, in the text format 0.0.4. */
static void textfile_body(rt_ob *o, const rt_labels *labels, const rt_job_status *st, double now)
{
    rt_prom_out f = {.o = o, .labels = labels};
    const struct {
        const char *name, *help;
        double v;
        int dec;
    } nums[] = {
        {"resource_tracker_job_start_time_seconds", "Unix time the job started.", st->start_secs, 3},
        {"resource_tracker_job_end_time_seconds", "Unix time the job ended (absent while it runs).", st->end_secs, 3},
        {"resource_tracker_job_duration_seconds", "Seconds the job has run, or ran in all.", st->duration_secs, 6},
        {"resource_tracker_job_cpu_seconds", "CPU seconds of the job's process tree.", st->cpu_secs, 6},
        {"resource_tracker_job_memory_peak_bytes", "Peak memory of the job's process tree.", st->memory_peak_bytes, 0},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(nums); i++) {
        rt_prom_family(&f, nums[i].name, RT_PROM_GAUGE, nums[i].help);
        rt_prom_num(&f, NULL, 0, nums[i].v, nums[i].dec);
    }
    rt_prom_family(&f, "resource_tracker_job_exit_status", RT_PROM_GAUGE,
                   "Exit status of the job (absent while it runs).");
    rt_prom_i64(&f, NULL, 0, st->exit_status);
    rt_prom_family(&f, "resource_tracker_job_running", RT_PROM_GAUGE, "1 while the job runs, 0 once it ended.");
    rt_prom_u64(&f, NULL, 0, isnan(st->end_secs) ? 1 : 0);
    rt_prom_family(&f, "resource_tracker_job_samples", RT_PROM_GAUGE, "Samples the tracker took of the job.");
    rt_prom_u64(&f, NULL, 0, st->samples);
    rt_prom_family(&f, "resource_tracker_job_last_update_time_seconds", RT_PROM_GAUGE,
                   "Unix time this file was written.");
    rt_prom_num(&f, NULL, 0, now, 3);
    /* 0.15: the tree's energy with its method, where the caller's struct has them */
    if (st->struct_size >= offsetof(rt_job_status, energy_method) + sizeof st->energy_method && st->energy_method) {
        rt_prom_family(&f, "resource_tracker_job_energy_joules", RT_PROM_GAUGE,
                       "Energy of the job's process tree since tracking began (its share of the machine's).");
        rt_kv kv = {"method", st->energy_method};
        rt_prom_num(&f, &kv, 1, st->energy_joules, 6);
    }
    if (st->struct_size >= offsetof(rt_job_status, request) + sizeof st->request && st->request)
        request_body(&f, st, now);
}

/* Creates a new temporary file in dfd named after target (a name the textfile collector skips:
 * hidden, not ending in .prom), mode 0666 less the umask, never through a link. Returns the fd
 * and the name in tmp, or -1 with errno. */
static int create_temp(int dfd, const char *target, char *tmp, size_t tmpcap)
{
    static atomic_uint counter;
    for (int attempt = 0; attempt < 32; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned n = atomic_fetch_add(&counter, 1);
        int len = snprintf(tmp, tmpcap, ".%.100s.tmp.%ld.%u.%lx", target, (long)getpid(), n, (unsigned long)ts.tv_nsec);
        if (len < 0 || (size_t)len >= tmpcap) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Writes body as dfd/target through a temporary file: written, synced when sync (the file and,
 * after the rename, the directory), renamed over target (which replaces a link there, never
 * following it). 0, or -1 with errno and the temporary file removed. */
static int replace_file(int dfd, const char *target, const char *body, size_t len, bool sync)
{
    char tmp[NAME_MAX + 1];
    int fd = create_temp(dfd, target, tmp, sizeof tmp);
    if (fd < 0)
        return -1;
    int rc = rt_write_all(fd, body, len);
    if (rc == 0 && sync)
        rc = fsync(fd);
    int err = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    if (rc == 0 && renameat(dfd, tmp, dfd, target) != 0) {
        rc = -1;
        err = errno;
    }
    if (rc != 0) {
        unlinkat(dfd, tmp, 0);
        errno = err;
        return -1;
    }
    if (sync)
        (void)fsync(dfd); /* the rename's durability; the file is in place either way */
    return 0;
}

rt_error rt_prom_textfile_write(const char *dir, const char *name, const rt_job *job, const rt_job_status *status,
                                char *path, size_t pathlen)
{
    /* the struct as 0.14 had it, up to samples, is the least a caller may give */
    if (!dir || !*dir || !status || status->struct_size < offsetof(rt_job_status, samples) + sizeof(uint64_t))
        return RT_ERR_INVALID;
    char file[NAME_MAX + 1];
    const char *nm = name && *name ? name : "job";
    size_t nlen = strlen(nm);
    static const char prefix[] = "resource_tracker_", suffix[] = ".prom";
    if (sizeof prefix - 1 + nlen + sizeof suffix > sizeof file)
        return RT_ERR_INVALID;
    memcpy(file, prefix, sizeof prefix - 1);
    for (size_t i = 0; i < nlen; i++) {
        char c = nm[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '.' || c == '-';
        file[sizeof prefix - 1 + i] = ok ? c : '_';
    }
    memcpy(file + sizeof prefix - 1 + nlen, suffix, sizeof suffix);
    char full[PATH_MAX];
    int plen = snprintf(full, sizeof full, "%s/%s", dir, file);
    if (plen < 0 || (size_t)plen >= sizeof full || (path && (size_t)plen >= pathlen))
        return RT_ERR_INVALID;
    if (path)
        memcpy(path, full, (size_t)plen + 1);

    rt_labels labels;
    if (rt_labels_from_job(job, &labels) != RT_OK)
        return RT_ERR_NOMEM;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double now_secs = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    char stackbuf[4096];
    rt_ob o = {.buf = stackbuf, .cap = sizeof stackbuf};
    textfile_body(&o, &labels, status, now_secs);
    char *heap = NULL;
    if (o.len > sizeof stackbuf) { /* long labels: once more into a buffer of the right size */
        heap = malloc(o.len);
        if (!heap) {
            rt_labels_free(&labels);
            return RT_ERR_NOMEM;
        }
        o = (rt_ob){.buf = heap, .cap = o.len};
        textfile_body(&o, &labels, status, now_secs);
    }
    rt_labels_free(&labels);

    rt_error rc = RT_OK;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || replace_file(dfd, file, o.buf, o.len, isfinite(status->end_secs)) != 0)
        rc = RT_ERR_IO;
    int err = errno;
    if (dfd >= 0)
        close(dfd);
    free(heap);
    errno = err;
    return rc;
}
