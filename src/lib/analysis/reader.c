/* reader.c - recorded runs read back one rt_record at a time, in memory that does not grow
 * with the file (gzipped or not): the tool's JSON lines and CSV, and the Python
 * resource-tracker's CSV files.
 *
 * Formats, recognised by the first non-blank line:
 *  - "json": a line starting with '{' (docs/contracts.md §2). Each line goes through jsonline.c
 *    (the schema's figures read by name, over a validating tokenizer, no allocation) and maps to
 *    a record as record.c maps a live sample (the members of the tree, its group and its
 *    split's parts by record_fields.c's rows, as record.c copies them):
 *    disk (physical: not is_virtual, 0.17) and network bytes in the interval are the
 *    difference of a device's *_total from the
 *    previous good record when it was listed there and the interval starts at it, else (a
 *    counter that went back after a reboot, a gap) its *_per_sec x interval_secs; disk space
 *    sums total/used_bytes over the mounts listed under the disks, each mount point once (the sampler lists one mount per distinct filesystem,
 *    under every disk it spans, so a repeated mount point is the same filesystem); a
 *    process's read/write bytes are the difference of its *_total from the previous record
 *    that had one (a total null for a while is not counted twice), or its total when there
 *    was none, or the pid changed or the total went back (tracking counts from zero).
 *    The Rust tool's line (`--format json-rs`, 0.17) is read the same way, its interval and its
 *    tree's figures (under "cpu") added by jsonline_rs.c; its tree's bytes are the interval's.
 *  - "csv", "python-process", "python-system", "python-combined": the tool's and the Python
 *    resource-tracker's CSV files, read by reader_csv.c.
 * CSV rows carry no interval: it is the difference
 * from the previous row's timestamp (the first row takes the second's, a lone row has none),
 * found with one record of lookahead. Figures a format lacks are NaN.
 *
 * A malformed line is counted, logged as "FILE:LINE: problem" (the first 20 per file) and
 * skipped; timestamps that are no Unix time in seconds (negative, past year 5000) are
 * malformed. An interval_secs below 0 or over 1e9 is ignored (then taken from the timestamps).
 *
 * Memory does not grow with the input: the file (or stdin) is read 1 MiB at a time, a gzip
 * file (told by its magic) through a gunzip stream, and a line may be at most 16 MiB, as long
 * as the longest the tool's writer ever writes (rt_writer's bound; a real line is a few KiB, a
 * run's 4,096 phase marks of one sample at most about 8 MiB): a longer one ends the read
 * with RT_ERR_PARSE, "FILE:LINE: a line longer than 16 MiB ...", what came before having been
 * read. A gzip stream that is corrupt or cut short ends the input where it breaks, the line
 * it cut counted as malformed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/gzip.h"
#include "../core/lasterr.h"
#include "reader_priv.h"
#include "record_fields.h"
#include "reader_test.h"

#define MAX_INTERVAL 1e9          /* an interval_secs above (or below 0) is ignored */

static const char *const fmt_names[] = {"json", "csv", "python-process", "python-system", "python-combined"};

/* ---- lines -------------------------------------------------------------------------------- */

#define CHUNK (1u << 20)          /* bytes asked of each read(2) */
#define MAX_LINE (16u << 20)      /* longer lines end the read (RT_READER_MAX_LINE) */
#define PEEK (64u * 1024u)        /* bytes read first, to tell gzip by its magic */
#define MAX_SHOWN 20              /* malformed lines logged per file */

/* The read size and longest line of readers opened from now on (reader_test.h). */
static size_t chunk_size = CHUNK, max_line = MAX_LINE;

void rt_reader_test_limits(size_t chunk, size_t max)
{
    chunk_size = chunk ? chunk : CHUNK;
    max_line = max ? max : MAX_LINE;
}

/* Sets a new reader's read size and longest line (the defaults, or reader_test.h's). */
static void lines_init(rt_reader *r)
{
    r->chunk = chunk_size;
    r->max_line = max_line;
}

/* Counts a malformed line and logs it (the first MAX_SHOWN, then one line saying more are not
 * shown). */
static void malformed(rt_reader *r, uint64_t line, const char *what, bool no_nl)
{
    r->skipped++;
    snprintf(r->errmsg, sizeof r->errmsg, "%s:%llu: %s%s", r->name, (unsigned long long)line,
             no_nl ? "truncated last line: " : "", what);
    if (r->shown < MAX_SHOWN)
        rt_log(&r->log, RT_LOG_WARN, "%s:%llu: %s%s", r->name, (unsigned long long)line,
               no_nl ? "truncated last line: " : "", what);
    else if (r->shown == MAX_SHOWN)
        rt_log(&r->log, RT_LOG_WARN, "%s: further malformed lines are not shown", r->name);
    r->shown++;
}

/* Why the read ends (an error, not a line skipped): kept as the reader's message and logged as
 * an error. Returns -2, next_line's code for it. */
__attribute__((format(printf, 2, 3))) static int fatal(rt_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->errmsg, sizeof r->errmsg, fmt, ap);
    va_end(ap);
    rt_log(&r->log, RT_LOG_ERROR, "%s", r->errmsg);
    return -2;
}

/* Line r->lineno + 1 is longer than max_line: the read ends there. Returns -2. */
static int too_long(rt_reader *r)
{
    r->lineno++;
    if (r->max_line % (1u << 20) == 0)
        return fatal(r, "%s:%llu: a line longer than %zu MiB, which no recorded run has: not read further", r->name,
                     (unsigned long long)r->lineno, r->max_line >> 20);
    return fatal(r, "%s:%llu: a line longer than %zu bytes, which no recorded run has: not read further", r->name,
                 (unsigned long long)r->lineno, r->max_line);
}

/* Reads more input after end, first moving the unread part to the front and growing the
 * buffer (up to max_line + chunk) when a line fills it. Returns 0, -1 on a read error (logged
 * with the file's name and the reason, errno kept), or -3 when out of memory. A gzip stream that
 * is corrupt or cut short ends the input there: the line it was in is counted as malformed. */
static int fill(rt_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->scan -= r->start;
        r->start = 0;
    }
    if (r->end == r->cap) { /* a line fills the buffer (next_line ends it past max_line) */
        size_t most = r->max_line + r->chunk, ncap = r->cap * 2 > most ? most : r->cap * 2;
        char *nb = ncap > r->cap ? realloc(r->buf, ncap) : NULL;
        if (!nb) {
            snprintf(r->errmsg, sizeof r->errmsg, "%s:%llu: out of memory for a line", r->name,
                     (unsigned long long)r->lineno + 1);
            return -3;
        }
        r->buf = nb;
        r->data = nb;
        r->cap = ncap;
    }
    size_t room = r->cap - r->end;
    if (room > r->chunk)
        room = r->chunk;
    ssize_t k;
    do
        k = r->gz ? rt_gunzip_stream_read(r->gz, r->buf + r->end, room) : read(r->fd, r->buf + r->end, room);
    while (k < 0 && !r->gz && errno == EINTR);
    if (k == -2) { /* the gzip stream broke: what came before stands, the line it cut is dropped */
        r->gz_broken = true;
        malformed(r, r->lineno + 1, "gzip stream corrupt or cut short here: nothing further is read", false);
        r->end = r->scan = r->start;
        k = 0;
    }
    if (k < 0) {
        int err = errno;
        snprintf(r->errmsg, sizeof r->errmsg, "%s: cannot read: %s", r->name, strerror(err));
        rt_log(&r->log, RT_LOG_ERROR, "%s", r->errmsg);
        errno = err;
        return -1;
    }
    if (k == 0)
        r->eof = true;
    r->end += (size_t)k;
    return 0;
}

/* The next line, without its newline and a trailing '\r'. Returns 1 with *line / *n set and
 * *no_nl telling whether it ended at the end of the input without a newline, 0 at the end,
 * -1 on a read error, -2 for a line longer than max_line (logged: the read ends), -3 out of
 * memory. */
static int next_line(rt_reader *r, const char **line, size_t *n, bool *no_nl)
{
    if (r->pending) {
        *line = r->pending;
        *n = r->pending_len;
        *no_nl = r->pending_no_nl;
        r->pending = NULL;
        return 1;
    }
    for (;;) {
        const char *nl = r->end > r->scan ? memchr(r->data + r->scan, '\n', r->end - r->scan) : NULL;
        bool at_eof = !nl && r->eof;
        if (nl || at_eof) {
            if (at_eof && r->start == r->end)
                return 0;
            const char *s = r->data + r->start;
            size_t len = nl ? (size_t)(nl - s) : r->end - r->start;
            if (len > r->max_line)
                return too_long(r);
            r->start = r->scan = nl ? (size_t)(nl - r->data) + 1 : r->end;
            r->lineno++;
            if (len && s[len - 1] == '\r')
                len--;
            *line = s;
            *n = len;
            *no_nl = !nl;
            return 1;
        }
        r->scan = r->end;
        if (r->end - r->start > r->max_line) /* no newline yet, and already too long */
            return too_long(r);
        if (!r->buf) { /* a caller's buffer: nothing more to read */
            r->eof = true;
            continue;
        }
        int k = fill(r);
        if (k < 0)
            return k;
    }
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

/* The line's GPUs one by one into the reader's own list for record slot k (uuid and the
 * figures; the rest null), pointed at by rec. */
static void json_gpus(rt_reader *r, const rt_jline *jl, rt_record *rec, int k)
{
    for (size_t i = 0; i < jl->ngpu; i++) {
        const rt_jl_gpu *g = &jl->gpu[i];
        rt_gpu *o = &r->gpus[k][i];
        memset(o, 0, sizeof *o);
        memcpy(r->uuids[k][i], g->uuid, sizeof g->uuid);
        o->uuid = g->named ? r->uuids[k][i] : NULL;
        o->utilization_pct = g->util;
        o->vram_used_bytes = isfinite(g->used) && g->used >= 0 && g->used < 1.8e19 ? (uint64_t)g->used : RT_NULL_U64;
        o->vram_total_bytes = isfinite(g->total) && g->total >= 0 && g->total < 1.8e19 ? (uint64_t)g->total
                                                                                       : RT_NULL_U64;
        o->vram_used_pct = o->temperature_celsius = o->power_watts = o->frequency_mhz = NAN;
        o->power_throttled_secs = o->thermal_throttled_secs = NAN; /* not read back */
        o->core_count = RT_NULL_I64;
        o->nvml_index = RT_NULL_I64;
        o->work = g->work;
        o->vram_reserved_bytes = RT_NULL_U64;
        r->gpu_ptrs[k][i] = o;
    }
    rec->gpu = jl->ngpu ? r->gpu_ptrs[k] : NULL;
    rec->gpu_n = jl->ngpu;
}

/* The rows of rt_record_fields[] that come from a struct of the sample (the tree, its group, a part
 * of its split) out of the line's slots of that struct: the members record.c copies from a
 * sample, the same way. group: the group's slots (NULL: none), tree: the line with a tree (NULL:
 * none); rows without their struct stay as they are (NaN). */
_Static_assert(RT_RF_DESCENDANTS - RT_RF_MAIN == RT_JL_DESCENDANTS && RT_RF_COMBINED - RT_RF_MAIN == RT_JL_COMBINED,
               "the split's parts in one order");
static void json_rows(rt_record *rec, const double *group, const rt_jline *tree)
{
    const double *const base[] = {
        [RT_RF_MADE] = NULL,
        [RT_RF_PROCESS] = tree ? tree->proc : NULL,
        [RT_RF_GROUP] = group,
        [RT_RF_MAIN] = tree ? tree->part[RT_JL_MAIN] : NULL,
        [RT_RF_DESCENDANTS] = tree ? tree->part[RT_JL_DESCENDANTS] : NULL,
        [RT_RF_COMBINED] = tree ? tree->part[RT_JL_COMBINED] : NULL,
    };
    for (size_t i = 0; i < rt_record_field_count; i++) {
        const rt_record_field *f = &rt_record_fields[i];
        const double *v = base[f->from];
        if (v) {
            double x = v[f->src_off / 4]; /* RT_JL_SLOT */
            rt_record_set(rec, f, f->div != 0 ? x / f->div : x);
        }
    }
}

/* The record's GPU work (record.c's rule): the tree's gpu_* figures and scope, else without a
 * tree the mean over the line's GPUs. */
_Static_assert(RT_JL_NWORK == RT_RECORD_NWORK, "the GPU work figures in one count");
static void json_gpu_work(const rt_jline *jl, rt_record *rec)
{
    double v[RT_RECORD_NWORK];
    if (jl->has_process) {
        rt_gpu_work w = rt_jline_work(jl->proc, offsetof(rt_process, gpu_work));
        rt_record_work_of(&w, v);
        rec->gpu_work_shared = jl->proc_work_scope < 0 ? NAN : jl->proc_work_scope;
    } else {
        for (size_t k = 0; k < RT_RECORD_NWORK; k++)
            v[k] = jl->gpu_work_n[k] ? jl->gpu_work_sum[k] / jl->gpu_work_n[k] : NAN;
    }
    rt_record_set_gpu_work(rec, v);
}

/* ---- JSON --------------------------------------------------------------------------------- */

/* Bytes moved in the interval by one counter: the difference from the previous record's
 * total (prev, NULL when that record is not where this interval starts), else the rate x
 * interval (a counter that went back, after a reboot, or a device new in this record). NaN
 * when neither is known; never negative. */
static double counter_bytes(double total, const double *prev, double rate, double interval)
{
    if (!isnan(total) && prev && !isnan(*prev) && total >= *prev)
        return total - *prev;
    if (rate >= 0 && isfinite(rate) && interval > 0 && isfinite(interval))
        return round(rate * interval);
    return NAN;
}

/* Sums a disk or interface list into *a / *b: 0 for an empty list (nothing to move data),
 * NaN when the line had no such list or no entry's bytes are known. prev: the previous
 * record's list when this record's interval starts at it, else NULL. */
static void list_bytes(const rt_jl_list *l, const rt_jl_list *prev, double interval, double *a, double *b)
{
    *a = *b = l->present && l->n == 0 ? 0 : NAN;
    if (!l->present)
        return;
    for (size_t i = 0; i < l->n; i++) {
        const rt_jl_dev *d = &l->dev[i], *pd = NULL;
        for (size_t c = 0, k = i; prev && d->named && c < prev->n; c++, k = k + 1 < prev->n ? k + 1 : 0)
            if (k < prev->n && prev->dev[k].named && strcmp(prev->dev[k].name, d->name) == 0) {
                pd = &prev->dev[k];
                break;
            }
        *a = rt_add_known(*a, counter_bytes(d->total_a, pd ? &pd->total_a : NULL, d->rate_a, interval));
        *b = rt_add_known(*b, counter_bytes(d->total_b, pd ? &pd->total_b : NULL, d->rate_b, interval));
    }
    *a = rt_add_known(*a, counter_bytes(NAN, NULL, l->rest_rate_a, interval));
    *b = rt_add_known(*b, counter_bytes(NAN, NULL, l->rest_rate_b, interval));
}

/* Filesystem space over the distinct mount points (NaN when none had figures); the mounts
 * without a point (ZFS pools with no dataset mounted, 0.17) each count. */
static void disk_space(const rt_jline *jl, double *total, double *used)
{
    *total = jl->rest_space_total;
    *used = jl->rest_space_used;
    for (size_t i = 0; i < jl->nmount; i++) {
        const rt_jl_mount *m = &jl->mount[i];
        if (isnan(m->total))
            continue;
        bool dup = false;
        for (size_t k = 0; m->named && m->point[0] && k < i && !dup; k++) /* "": a pool not mounted */
            dup = jl->mount[k].named && strcmp(jl->mount[k].point, m->point) == 0;
        if (dup)
            continue;
        *total = isnan(*total) ? m->total : *total + m->total;
        if (!isnan(m->used))
            *used = isnan(*used) ? m->used : *used + m->used;
    }
}

/* A process counter's bytes in the interval: the difference from the last total seen (*last,
 * which becomes total), or the total itself for the first one, a new tree or a total that
 * went back (a second run in the file: tracking counts from zero). NaN when total is. */
static double process_bytes(double total, double *last, bool new_tree)
{
    if (isnan(total))
        return NAN;
    double prev = *last;
    *last = total;
    return isnan(prev) || new_tree || total < prev ? total : total - prev;
}

/* The pressure percentages of a line: per resource the group's when it has pressure (its
 * some_pct or some_avg10 is known), else the machine's (record.c's rule for a sample). */
static void json_pressure(const rt_jline *jl, rt_record *rec)
{
    double *const dst[3][2] = {{&rec->pressure_cpu_some_pct, NULL},
                               {&rec->pressure_memory_some_pct, &rec->pressure_memory_full_pct},
                               {&rec->pressure_io_some_pct, &rec->pressure_io_full_pct}};
    bool any = false, all_group = true;
    for (size_t i = 0; i < 3; i++) {
        bool group = jl->cg.present &&
                     (!isnan(RT_JL_PSI(&jl->cg.psi, i, some_pct)) || !isnan(RT_JL_PSI(&jl->cg.psi, i, some_avg10)));
        const rt_jl_psi *src = group ? &jl->cg.psi : &jl->psi;
        *dst[i][0] = RT_JL_PSI(src, i, some_pct);
        if (dst[i][1])
            *dst[i][1] = RT_JL_PSI(src, i, full_pct);
        if (!isnan(*dst[i][0])) {
            any = true;
            all_group = all_group && group;
        }
    }
    rec->pressure_group = any ? (all_group ? 1 : 0) : NAN;
}

/* Maps the scanned line r->jl (with r->jl_prev when have_prev) to rec, job name in job. */
static void json_record(rt_reader *r, rt_record *rec, char *job)
{
    const rt_jline *jl = r->jl, *pv = r->have_prev ? r->jl_prev : NULL;
    /* the interval, from the timestamps when the line has none; machine counters are
     * differenced only with the record the interval starts at (not across a skipped line, a
     * gap between two runs in one file, or timestamps out of order) */
    double interval = RT_JL_TOP(jl, interval_secs), ts = RT_JL_TOP(jl, timestamp_secs);
    double iv = interval >= 0 && interval <= MAX_INTERVAL ? interval : NAN;
    double since = pv ? ts - r->prev_ts : NAN;
    bool adjacent = pv && (isnan(iv) ? since > 0 : fabs(since - iv) <= 0.25 * iv + 0.005);
    if (isnan(iv))
        iv = since;
    const rt_jline *pc = adjacent ? pv : NULL;
    rt_record_null(rec);
    rec->phases = jl->ph && jl->ph->present ? &jl->ph->view : NULL; /* the line's own */
    rec->request = jl->rq_present ? &jl->rq.r : NULL; /* the line's own */
    rec->member = jl->mb.set ? &jl->mb.m : NULL;      /* the line's own */
    if (jl->en && jl->en->present) { /* the line's own: a figure only with its method */
        const rt_energy *e = &jl->en->view;
        rec->energy = e;
        rec->energy_method = e->method;
        rec->process_energy_method = e->process_method;
        rec->energy_joules = e->method ? e->energy_joules : NAN;
        rec->process_energy_joules = e->process_method ? e->process_energy_joules : NAN;
        rec->idle_power_watts = e->idle_power_watts;
    }
    rec->gpu_power_throttled_secs = jl->gpu_power_throttled;
    rec->gpu_thermal_throttled_secs = jl->gpu_thermal_throttled;
    rec->timestamp_secs = ts;
    rec->interval_secs = iv; /* NaN: from the timestamps, below */
    rec->clock_step_secs = jl->clock[0];
    rec->sampling_gap_secs = jl->clock[1];
    if (jl->has_job) {
        memcpy(job, jl->job, strlen(jl->job) + 1);
        rec->job_name = job;
    }
    rec->cpu_cores = RT_JL_CPU(jl, utilization_pct);
    rec->cpu_count = jl->cpu_cores_listed > 0 ? jl->cpu_cores_listed : NAN;
    rec->memory_used_mib = RT_JL_MEM(jl, used_mib);
    rec->memory_total_mib = RT_JL_MEM(jl, total_mib);
    list_bytes(&jl->disk, pc ? &pc->disk : NULL, iv, &rec->disk_read_bytes, &rec->disk_write_bytes);
    list_bytes(&jl->net, pc ? &pc->net : NULL, iv, &rec->net_recv_bytes, &rec->net_sent_bytes);
    if (jl->disk.present)
        disk_space(jl, &rec->disk_space_total_bytes, &rec->disk_space_used_bytes);
    if (jl->gpu_present) {
        rec->gpu_count = jl->gpu_count;
        if (jl->gpu_count == 0) { /* no GPU: a true zero, as record.c */
            rec->gpu_usage = rec->gpu_vram_mib = rec->gpu_vram_total_mib = rec->gpu_utilized = 0;
        } else {
            rec->gpu_usage = jl->gpu_usage;
            rec->gpu_vram_mib = jl->gpu_vram_mib;
            rec->gpu_vram_total_mib = jl->gpu_vram_total_mib;
            rec->gpu_utilized = jl->gpu_known ? jl->gpu_utilized : NAN;
        }
        json_gpus(r, jl, rec, rec == &r->rec[0] ? 0 : 1);
    }
    json_pressure(jl, rec);
    /* the 0.6 figures of the tree's cgroup, else (without one) of the top-level "cgroup", the
     * group the tracker ran in (record.c's rule for a sample); NaN without either */
    const rt_jl_cgroup *g = jl->has_process && jl->cg.present ? &jl->cg : &jl->self_cg;
    json_rows(rec, g->present ? g->f : NULL, jl->has_process ? jl : NULL);
    json_gpu_work(jl, rec);
    if (!jl->has_process)
        return;
#define P(m) RT_JL_PROC(jl, m)
    rec->process_memory_peak_mib = P(memory_peak_mib);
    double pid = P(pid);
    bool new_tree = !isnan(pid) && !isnan(r->last_pid) && pid != r->last_pid;
    if (new_tree)
        r->last_read = r->last_write = NAN;
    if (!isnan(pid))
        r->last_pid = pid;
    rec->process_cpu_secs = P(utime_secs) + P(stime_secs);
    /* the interval's bytes from the totals since tracking began; the Rust tool's line has only
     * the interval's (the table's read_bytes, write_bytes) */
    double read = process_bytes(P(read_bytes_total), &r->last_read, new_tree);
    double written = process_bytes(P(write_bytes_total), &r->last_write, new_tree);
    if (!isnan(P(read_bytes_total)) || !isnan(P(write_bytes_total))) {
        rec->process_read_bytes = read;
        rec->process_write_bytes = written;
    }
#undef P
    if (jl->cg.present) { /* as record.c: the group's figures are the job's when it holds only the tree */
        double own = RT_JL_CG(&jl->cg, own), exclusive = RT_JL_CG(&jl->cg, exclusive);
        bool whole = own == 1 || exclusive == 1;
        bool known = !isnan(own) || !isnan(exclusive);
        rec->process_cgroup_exclusive = known ? (whole ? 1 : 0) : NAN;
        rec->process_unreclaimable_peak_mib = whole ? RT_JL_CG(&jl->cg, memory_unreclaimable_peak_mib) : NAN;
        rec->process_unreclaimable_unsure_mib = whole ? RT_JL_CG(&jl->cg, memory_unreclaimable_unsure_mib) : NAN;
    }
}

/* ---- records ------------------------------------------------------------------------------ */

/* Reads lines until one makes a record in rec (job name storage job). Returns 1, 0 at the
 * end, or next_line's error: -1 (read), -2 (a line too long), -3 (memory). */
static int read_record(rt_reader *r, rt_record *rec, char *job)
{
    const char *line;
    size_t n;
    bool no_nl;
    int k;
    while ((k = next_line(r, &line, &n, &no_nl)) == 1) {
        if (blank(line, n))
            continue;
        const char *bad;
        if (r->format == F_JSON) {
            bad = rt_jline_scan(line, n, r->c_locale, r->jl);
            if (!bad && isnan(RT_JL_TOP(r->jl, interval_secs)) && rt_jline_rs(line, n, r->c_locale, r->jl))
                r->rs = true;
            if (!bad && !rt_unix_time(RT_JL_TOP(r->jl, timestamp_secs)))
                bad = "timestamp_secs is no Unix time in seconds";
            if (!bad) {
                json_record(r, rec, job);
                rt_jline *t = r->jl_prev;
                r->jl_prev = r->jl;
                r->jl = t;
                r->have_prev = true;
            }
        } else {
            bad = rt_reader_csv_row(r, line, n, rec);
        }
        if (bad) {
            malformed(r, r->lineno, bad, no_nl);
            continue;
        }
        if (isnan(rec->interval_secs) && !isnan(r->prev_ts))
            rec->interval_secs = rec->timestamp_secs - r->prev_ts;
        r->prev_ts = rec->timestamp_secs;
        return 1;
    }
    return k;
}

/* The error of read_record's code k (< 0). */
static rt_error read_error(int k)
{
    return k == -2 ? RT_ERR_PARSE : k == -3 ? RT_ERR_NOMEM : RT_ERR_IO;
}

rt_error rt_reader_next(rt_reader *r, const rt_record **out)
{
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    if (!r)
        return RT_ERR_INVALID;
    if (!r->started) {
        r->started = true;
        int k = read_record(r, &r->rec[r->ci], r->job[r->ci]);
        if (k < 0)
            return r->ahead_err = read_error(k);
        r->have_cur = k == 1;
    } else if (r->have_cur) {
        r->have_cur = r->have_ahead;
        if (r->have_cur)
            r->ci ^= 1;
    }
    if (!r->have_cur)
        return r->ahead_err;
    int ahead = r->ci ^ 1;
    int k = read_record(r, &r->rec[ahead], r->job[ahead]);
    r->have_ahead = k == 1;
    r->ahead_err = k < 0 ? read_error(k) : RT_OK; /* reported after the record in hand */
    rt_record *c = &r->rec[r->ci];
    if (isnan(c->interval_secs) && r->records == 0 && r->have_ahead)
        c->interval_secs = r->rec[ahead].timestamp_secs - c->timestamp_secs;
    r->records++;
    *out = c;
    return RT_OK;
}

/* ---- opening -------------------------------------------------------------------------------- */

/* Allocates a reader named name (copied) with the options' logger. NULL when out of memory. */
static rt_reader *reader_new(const char *name, const rt_reader_options *opts)
{
    rt_reader_options o = RT_READER_OPTIONS_INIT;
    if (rt_struct_copy(&o, sizeof o, opts) < 0)
        return NULL;
    rt_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fd = -1;
    r->log.fn = o.log;
    r->log.user = o.log_user;
    lines_init(r);
    r->prev_ts = r->last_pid = r->last_read = r->last_write = NAN;
    r->name = rt_strdup(name);
    r->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!r->name) {
        rt_reader_close(r);
        return NULL;
    }
    return r;
}

/* Recognises the format from the first non-blank line. Returns RT_OK, RT_ERR_PARSE (logged),
 * RT_ERR_IO or RT_ERR_NOMEM. */
static rt_error detect(rt_reader *r)
{
    const char *line;
    size_t n;
    bool no_nl;
    int k;
    while ((k = next_line(r, &line, &n, &no_nl)) == 1 && blank(line, n))
        ;
    if (k < 0)
        return read_error(k);
    if (k == 0 && r->gz_broken) {
        rt_err_log(&r->log, RT_LOG_ERROR, "%s: a gzip stream corrupt or cut short before its first line", r->name);
        return RT_ERR_PARSE;
    }
    if (k == 0) {
        rt_err_log(&r->log, RT_LOG_ERROR, "%s: empty, not a resource-tracker JSON lines or CSV file", r->name);
        return RT_ERR_PARSE;
    }
    if (r->lineno == 1 && n >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) { /* a UTF-8 byte order mark */
        line += 3;
        n -= 3;
    }
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i < n && line[i] == '{') {
        r->format = F_JSON;
        r->jl = malloc(sizeof *r->jl);
        r->jl_prev = malloc(sizeof *r->jl_prev);
        if (r->jl) /* the phases and the energy are made at the first line with some */
            r->jl->ph = NULL, r->jl->en = NULL;
        if (r->jl_prev)
            r->jl_prev->ph = NULL, r->jl_prev->en = NULL;
        if (!r->jl || !r->jl_prev)
            return RT_ERR_NOMEM;
        r->pending = line;
        r->pending_len = n;
        r->pending_no_nl = no_nl;
        return RT_OK;
    }
    if (rt_reader_csv_header(r, line, n))
        return RT_OK;
    rt_err_log(&r->log, RT_LOG_ERROR, "%s:%llu: not a resource-tracker JSON lines or CSV file", r->name,
               (unsigned long long)r->lineno);
    return RT_ERR_PARSE;
}

/* Finishes opening: detects the format; frees r on failure. */
static rt_error finish_open(rt_reader *r, rt_reader **out)
{
    rt_error e = detect(r);
    if (e != RT_OK) {
        if (e == RT_ERR_IO || (e == RT_ERR_PARSE && r->errmsg[0])) /* the reader's own words */
            rt_err_set("%s", r->errmsg);
        rt_reader_close(r);
        return e;
    }
    *out = r;
    return RT_OK;
}

/* Reads the input's first bytes (up to PEEK) and, when they are gzip's magic, reads the rest
 * through a gunzip stream (the bytes read so far handed to it). RT_OK, RT_ERR_IO (logged),
 * RT_ERR_UNSUPPORTED (gzip without zlib: logged), RT_ERR_NOMEM. */
static rt_error gzip_or_plain(rt_reader *r)
{
    size_t want = r->cap < PEEK ? r->cap : PEEK;
    while (r->end < 2 && !r->eof) {
        ssize_t k = read(r->fd, r->buf + r->end, want - r->end);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int err = errno;
            rt_err_log(&r->log, RT_LOG_ERROR, "%s: cannot read: %s", r->name, strerror(err));
            errno = err;
            return RT_ERR_IO;
        }
        r->end += (size_t)k;
        r->eof = k == 0;
    }
    if (r->end < 2 || (unsigned char)r->buf[0] != 0x1f || (unsigned char)r->buf[1] != 0x8b)
        return RT_OK;
    rt_error e = rt_gunzip_stream_new(r->fd, r->buf, r->end, &r->gz);
    if (e == RT_ERR_UNSUPPORTED) {
        char why[320] = "";
        rt_gzip_available(why, sizeof why);
        rt_err_log(&r->log, RT_LOG_ERROR, "%s: gzipped, and zlib could not be loaded: %s", r->name, why);
    }
    r->end = 0;
    r->eof = false;
    return e;
}

rt_error rt_reader_open(const char *path, const rt_reader_options *opts, rt_reader **out)
{
    rt_err_clear();
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    if (!path)
        return RT_ERR_INVALID;
    bool is_stdin = strcmp(path, "-") == 0;
    rt_reader *r = reader_new(is_stdin ? "<stdin>" : path, opts);
    if (!r)
        return RT_ERR_NOMEM;
    if (is_stdin) {
        r->fd = STDIN_FILENO;
    } else {
        r->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (r->fd < 0) {
            int err = errno;
            rt_err_log(&r->log, RT_LOG_ERROR, "%s: cannot open: %s", path, strerror(err));
            rt_reader_close(r);
            errno = err;
            return err == ENOENT || err == ENOTDIR ? RT_ERR_NOT_FOUND : RT_ERR_IO;
        }
        r->own_fd = true;
    }
    r->cap = r->chunk < 2 ? 2 : r->chunk; /* room for gzip's magic */
    r->buf = malloc(r->cap);
    if (!r->buf) {
        rt_reader_close(r);
        return RT_ERR_NOMEM;
    }
    r->data = r->buf;
    rt_error e = gzip_or_plain(r);
    if (e != RT_OK) {
        rt_reader_close(r);
        return e;
    }
    return finish_open(r, out);
}

rt_error rt_reader_open_buffer(const char *name, const char *buf, size_t len, const rt_reader_options *opts,
                               rt_reader **out)
{
    rt_err_clear();
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    if (!buf && len)
        return RT_ERR_INVALID;
    rt_reader *r = reader_new(name ? name : "<buffer>", opts);
    if (!r)
        return RT_ERR_NOMEM;
    r->data = buf ? buf : "";
    r->end = len;
    r->eof = true;
    return finish_open(r, out);
}

const char *rt_reader_format(const rt_reader *r)
{
    if (r && r->format == F_JSON && r->rs)
        return "json-rs";
    return r ? fmt_names[r->format] : NULL;
}

uint64_t rt_reader_records(const rt_reader *r)
{
    return r ? r->records : 0;
}

uint64_t rt_reader_skipped(const rt_reader *r)
{
    return r ? r->skipped : 0;
}

const char *rt_reader_errmsg(const rt_reader *r)
{
    return r ? r->errmsg : "";
}

void rt_reader_free(rt_reader *r)
{
    rt_reader_close(r);
}

void rt_reader_close(rt_reader *r)
{
    if (!r)
        return;
    rt_gunzip_stream_free(r->gz);
    if (r->own_fd)
        close(r->fd);
    if (r->c_locale != (locale_t)0)
        freelocale(r->c_locale);
    free(r->buf);
    if (r->jl) {
        rt_jline_phases_free(r->jl->ph);
        free(r->jl->en);
    }
    if (r->jl_prev) {
        rt_jline_phases_free(r->jl_prev->ph);
        free(r->jl_prev->en);
    }
    free(r->jl);
    free(r->jl_prev);
    free(r->name);
    free(r);
}
