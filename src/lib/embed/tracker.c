/* tracker.c - the embedded background tracker: a thread that samples a process tree and the
 * machine on a monotonic grid, keeps the samples in the store and hands them through its
 * pipeline to the statistics and the report; the public calls that read them while it runs; stop,
 * free, and fork safety (a forked child holds a stopped copy). The grid and the waits read a
 * clock (core/clock.h: the real one, or a test's). Saving and loading a run live in snapshot.c. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/core.h"
#include "../core/job.h"
#include "../analysis/phases.h"
#include "../pipeline/pipeline.h"
#include "tracker_int.h"

#define DEFAULT_MAX_SAMPLES 604800u /* a week at 1 s */
#define LAST_SAMPLE_MIN_SECS 0.010  /* stop takes a last sample when this much time passed */
/* The thread's stack. Measured (bench-embed: the stack mapping's resident pages after 500
 * samples of a 50-process tree) at 16 KiB; NVML's calls run on it too (not measured here: no
 * GPU), so keep a wide margin. It is address space: only the pages touched become memory. */
#define THREAD_STACK_BYTES (512u * 1024u)

/* Every tracker (running, stopped or loaded), for the fork handlers. Lock order: live_mu, then
 * a tracker's mu; nothing takes live_mu while holding a tracker's mu. */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static rt_tracker *live_head;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* ---- fork safety -------------------------------------------------------------------------- */

/* Whether the calling thread is t's own (under t->mu). */
static bool on_own_thread(const rt_tracker *t)
{
    return t->running && pthread_equal(t->self, pthread_self());
}

/* Before fork: no tracker may be half-way through an update, and no thread in its sampler (the
 * child's copy of the sampler is then whole, and freeing it there is safe). A fork from the
 * tracker's own thread (a log callback during a sample) does not wait for itself. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&live_mu);
    for (rt_tracker *t = live_head; t; t = t->next_live) {
        pthread_mutex_lock(&t->mu);
        while (t->sampling && !on_own_thread(t))
            pthread_cond_wait(&t->cv, &t->mu);
    }
}

static void atfork_parent(void)
{
    for (rt_tracker *t = live_head; t; t = t->next_live)
        pthread_mutex_unlock(&t->mu);
    pthread_mutex_unlock(&live_mu);
}

static void init_sync(rt_tracker *t)
{
    pthread_mutex_init(&t->mu, NULL);
    rt_clock_cond_init(&t->cv);
}

/* In the child: only the forking thread exists. Every tracker becomes a stopped copy with no
 * thread (stop and free will not join), keeping the samples taken before the fork, on the real
 * clock (a test clock's lock may have been held by a thread the child does not have). */
static void atfork_child(void)
{
    for (rt_tracker *t = live_head; t; t = t->next_live) {
        init_sync(t);
        if (t->running && t->stop_time == 0)
            t->stop_time = rt_real_secs();
        t->running = false;
        t->thread_started = false;
        t->stop_asked = true;
        t->sampling = false;
        atomic_store(&t->marks_open, 0); /* the child's marks are not this run's */
        t->waiters = 0; /* their threads are not in the child */
        t->clock = NULL;
    }
    pthread_mutex_init(&live_mu, NULL);
}

static void register_atfork(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static void live_remove(rt_tracker *t)
{
    pthread_mutex_lock(&live_mu);
    for (rt_tracker **pp = &live_head; *pp; pp = &(*pp)->next_live)
        if (*pp == t) {
            *pp = t->next_live;
            break;
        }
    pthread_mutex_unlock(&live_mu);
}

/* ---- the store, the statistics and the report, one row at a time ---------------------------- */

/* Under t->mu: the row, made what the store keeps (rt_store_keep), into the store (-1 when it
 * has no memory for it) and through the pipeline to the statistics and the report (live: the
 * sample the row was made of, whose GPU list the usage's choice of GPUs reads; NULL for a loaded
 * row), and a wake-up for the waiters. The statistics see the figures as the store keeps them
 * (ratios and counts as floats), as the tool's do: a run saved and loaded again, whose rows come
 * back as kept, gives the same summary to the last digit and the same percentiles (a double and
 * its float can fall either side of a sketch's bucket edge). */
static int add_row_locked(rt_tracker *t, double row[RT_NCOLS], const rt_sample *live)
{
    rt_store_keep(row);
    int rc = rt_store_append(t->store, row);
    rt_pipeline_add_row(t->pipe, live, row);
    rt_clock_broadcast(t->clock, &t->cv);
    return rc;
}

int rt_tracker_add_row(rt_tracker *t, const double row[RT_NCOLS])
{
    double kept[RT_NCOLS];
    memcpy(kept, row, sizeof kept);
    pthread_mutex_lock(&t->mu);
    int rc = add_row_locked(t, kept, NULL);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

rt_error rt_tracker_new_stopped(uint64_t max_samples, const rt_job *job, rt_tracker **out)
{
    pthread_once(&atfork_once, register_atfork);
    *out = NULL;
    rt_tracker *t = calloc(1, sizeof *t);
    if (!t)
        return RT_ERR_NOMEM;
    t->max_samples = max_samples ? max_samples : DEFAULT_MAX_SAMPLES;
    t->store = rt_store_new(t->max_samples);
    rt_error err = t->store ? RT_OK : RT_ERR_NOMEM;
    if (err == RT_OK)
        err = rt_stats_new_with(NULL, &t->stats);
    if (err == RT_OK)
        err = rt_report_new_with(NULL, &t->report);
    if (err == RT_OK && job)
        err = rt_job_dup(job, &t->job, &t->job_block);
    if (err == RT_OK)
        err = rt_pipeline_new(job, &t->pipe);
    rt_sink *sink = NULL;
    if (err == RT_OK && (err = rt_stats_sink_new(t->stats, &sink)) == RT_OK)
        err = rt_pipeline_attach(t->pipe, sink);
    if (err == RT_OK && (err = rt_report_sink_new(t->report, &sink)) == RT_OK)
        err = rt_pipeline_attach(t->pipe, sink);
    if (err != RT_OK) {
        rt_pipeline_free(t->pipe);
        rt_store_free(t->store);
        rt_stats_free(t->stats);
        rt_report_free(t->report);
        free(t->job_block);
        free(t);
        return err;
    }
    init_sync(t);
    pthread_mutex_lock(&live_mu);
    t->next_live = live_head;
    live_head = t;
    pthread_mutex_unlock(&live_mu);
    *out = t;
    return RT_OK;
}

/* ---- the thread ------------------------------------------------------------------------------ */

/* Sample k is due at mono_start + k x interval of t->clock. A late sample does not move the
 * grid; ticks missed while a sample ran late are skipped. The wait is a condition wait to an
 * absolute deadline (so that stop wakes it at once, however long the interval). Once the run
 * has had a phase mark, the wait also ends every phase_check_secs to take the queued marks
 * (marks.c), and they are taken before each sample too, so no sample overtakes a mark. */
static void *tracker_thread(void *arg)
{
    rt_tracker *t = arg;
    double row[RT_NCOLS];
    uint64_t k = 1;
    pthread_mutex_lock(&t->mu);
    t->self = pthread_self();
    for (;;) {
        double due = t->mono_start + (double)k * t->interval_secs;
        bool reached = rt_clock_now(t->clock) >= due;
        while (!t->stop_asked && !reached) {
            bool phases = rt_tracker_marks_used(t);
            double until = phases ? fmin(due, rt_clock_now(t->clock) + t->phase_check_secs) : due;
            reached = rt_clock_wait(t->clock, &t->cv, &t->mu, until);
            if (reached && until < due) {
                rt_tracker_marks_drain_locked(t);
                reached = rt_clock_now(t->clock) >= due;
            }
        }
        rt_tracker_marks_drain_locked(t);
        bool last = t->stop_asked;
        double now = rt_clock_now(t->clock);
        if (last && now - t->mono_last < LAST_SAMPLE_MIN_SECS && !t->marks_pending)
            break; /* (marks waiting for a sample get their last one however short) */
        t->sampling = true;
        pthread_mutex_unlock(&t->mu);
        const rt_sample *s = NULL;
        if (last)
            rt_sampler_read_counters(t->sampler); /* the GPUs' energy to the counter's figure */
        rt_sampler_sample(t->sampler, &s);
        rt_row_from_sample(s, row);
        pthread_mutex_lock(&t->mu);
        t->sampling = false;
        t->mono_last = now;
        bool kept = add_row_locked(t, row, s) == 0;
        t->marks_pending = false;
        uint64_t count = rt_store_count(t->store);
        if (last)
            t->stop_time = row[RT_COL_TIMESTAMP];
        if (t->on_sample || !kept) { /* callbacks without the lock: they may call rt_tracker_* */
            pthread_mutex_unlock(&t->mu);
            if (!kept)
                rt_log(&(rt_logger){t->log, t->log_user}, RT_LOG_WARN,
                       "tracker: no memory to keep sample %llu (the statistics still count it)",
                       (unsigned long long)count);
            if (t->on_sample)
                t->on_sample(t->on_sample_user, s);
            pthread_mutex_lock(&t->mu);
        }
        if (last)
            break;
        uint64_t next = (uint64_t)((rt_clock_now(t->clock) - t->mono_start) / t->interval_secs) + 1;
        k = next > k + 1 ? next : k + 1;
    }
    t->running = false;
    if (t->stop_time == 0)
        t->stop_time = rt_real_secs();
    rt_clock_broadcast(t->clock, &t->cv);
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* ---- starting ------------------------------------------------------------------------------ */

rt_error rt_tracker_start(const rt_tracker_options *opts, rt_tracker **out)
{
    return rt_tracker_start_clock(opts, NULL, out);
}

rt_error rt_tracker_start_clock(const rt_tracker_options *opts, rt_clock *clock, rt_tracker **out)
{
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    rt_tracker_options o = RT_TRACKER_OPTIONS_INIT;
    if (rt_struct_copy(&o, sizeof o, opts) < 0)
        return RT_ERR_INVALID;
    if (o.interval_secs == 0)
        o.interval_secs = 1.0;
    if (o.phase_check_secs == 0)
        o.phase_check_secs = 0.01;
    if (!(o.interval_secs >= 0.01 && o.interval_secs <= 86400) || o.max_samples == 1 || o.pid < -1 ||
        !(o.phase_check_secs > 0 && o.phase_check_secs <= 86400) ||
        !(o.pss_max_age_secs >= 0) || !(o.expected_cores >= 0) || !isfinite(o.expected_cores) ||
        (o.gpu_uuid_count && !o.gpu_uuids))
        return RT_ERR_INVALID;
    rt_usage_options uo = RT_USAGE_OPTIONS_INIT;
    uo.expected_cores = o.expected_cores;
    uo.gpu_uuids = o.gpu_uuids;
    uo.gpu_uuid_count = o.gpu_uuid_count;
    rt_sampler_options so = RT_SAMPLER_OPTIONS_INIT;
    so.proc_root = o.proc_root;
    so.sys_root = o.sys_root;
    so.log = o.log;
    so.log_user = o.log_user;
    so.pid = o.pid == 0 ? (int64_t)getpid() : o.pid < 0 ? 0 : o.pid;
    so.root_only = o.no_children != 0;
    so.nvml_library = o.nvml_library;
    so.pss_max_age_secs = o.pss_max_age_secs;
    so.interval_secs = o.interval_secs;

    rt_tracker *t = NULL;
    rt_error err = rt_tracker_new_stopped(o.max_samples, o.job, &t);
    if (err != RT_OK)
        return err;
    err = rt_stats_set_usage(t->stats, &uo);
    double mono0 = rt_clock_now(clock);
    if (err == RT_OK)
        err = rt_sampler_new(&so, &t->sampler);
    /* a tracker of the caller's own process stamps the caller's exact CPU at each mark */
    if (err == RT_OK)
        err = rt_tracker_marks_open(t, so.pid == (int64_t)getpid(), !so.root_only);
    if (err != RT_OK) {
        rt_tracker_free(t);
        return err;
    }
    t->pid = so.pid;
    t->children = so.pid > 0 && !o.no_children;
    t->interval_secs = o.interval_secs;
    t->phase_check_secs = o.phase_check_secs;
    t->start_time = rt_real_secs();
    t->log = o.log;
    t->log_user = o.log_user;
    t->on_sample = o.on_sample;
    t->on_sample_user = o.on_sample_user;
    t->clock = clock;
    t->mono_start = t->mono_last = mono0;

    /* the thread blocks every signal (they are the program's) and has a small stack */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    size_t stack = THREAD_STACK_BYTES;
#ifdef PTHREAD_STACK_MIN
    if (stack < (size_t)PTHREAD_STACK_MIN)
        stack = (size_t)PTHREAD_STACK_MIN;
#endif
    pthread_attr_setstacksize(&attr, stack);
    sigset_t all, old;
    sigfillset(&all);
    /* live_mu held: a fork now waits until the thread exists and the flags say so */
    pthread_mutex_lock(&live_mu);
    pthread_mutex_lock(&t->mu);
    t->running = t->thread_started = true;
    pthread_mutex_unlock(&t->mu);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&t->thread, &attr, tracker_thread, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_mutex_lock(&t->mu);
        t->running = t->thread_started = false;
        pthread_mutex_unlock(&t->mu);
    }
    pthread_mutex_unlock(&live_mu);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        rt_tracker_free(t);
        return RT_ERR_SYSTEM;
    }
    *out = t;
    return RT_OK;
}

/* ---- stopping and freeing ------------------------------------------------------------------ */

rt_error rt_tracker_stop(rt_tracker *t)
{
    if (!t)
        return RT_ERR_INVALID;
    pthread_mutex_lock(&t->mu);
    if (on_own_thread(t)) { /* from a callback: joining itself would leave the thread unjoined */
        pthread_mutex_unlock(&t->mu);
        return RT_ERR_INVALID;
    }
    if (!t->thread_started) { /* stopped, loaded, forked, or another caller is joining */
        t->waiters++;
        while (t->running)
            pthread_cond_wait(&t->cv, &t->mu);
        t->waiters--;
        rt_clock_broadcast(t->clock, &t->cv);
        pthread_mutex_unlock(&t->mu);
        return RT_OK;
    }
    atomic_store(&t->marks_open, 0); /* marks from now on are refused; those queued are taken */
    t->thread_started = false; /* this caller joins (a waiter too: free waits for the join) */
    t->stop_asked = true;
    t->waiters++;
    pthread_t th = t->thread;
    rt_clock_broadcast(t->clock, &t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(th, NULL);
    pthread_mutex_lock(&t->mu);
    t->waiters--;
    rt_clock_broadcast(t->clock, &t->cv);
    pthread_mutex_unlock(&t->mu);
    return RT_OK;
}

void rt_tracker_free(rt_tracker *t)
{
    if (!t)
        return;
    rt_tracker_stop(t);
    pthread_mutex_lock(&t->mu); /* callers still in rt_tracker_wait or stop leave first */
    while (t->waiters)
        pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
    live_remove(t);
    rt_sampler_free(t->sampler); /* in a forked child: its own copy */
    rt_tracker_marks_close(t);
    rt_pipeline_free(t->pipe); /* before the statistics and the report its sinks add to */
    rt_store_free(t->store);
    rt_stats_free(t->stats);
    rt_phase_copy_free(t->phase_copy);
    rt_report_free(t->report);
    rt_free_all(t->cores_rows, t->job_block, t->saved_info);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

/* ---- reading ------------------------------------------------------------------------------- */

static void lock(const rt_tracker *t)
{
    pthread_mutex_lock(&((rt_tracker *)t)->mu);
}

static void unlock(const rt_tracker *t)
{
    pthread_mutex_unlock(&((rt_tracker *)t)->mu);
}

int rt_tracker_running(const rt_tracker *t)
{
    if (!t)
        return 0;
    lock(t);
    int r = t->running;
    unlock(t);
    return r;
}

/* The store's count (first: false) or first kept index (true), under the lock. */
static uint64_t store_index(const rt_tracker *t, bool first)
{
    if (!t)
        return 0;
    lock(t);
    uint64_t n = first ? rt_store_first(t->store) : rt_store_count(t->store);
    unlock(t);
    return n;
}

uint64_t rt_tracker_count(const rt_tracker *t)
{
    return store_index(t, false);
}

uint64_t rt_tracker_first(const rt_tracker *t)
{
    return store_index(t, true);
}

uint64_t rt_tracker_wait(rt_tracker *t, uint64_t n, double timeout_secs)
{
    if (!t)
        return 0;
    pthread_mutex_lock(&t->mu);
    t->waiters++;
    double until = timeout_secs < 0 ? INFINITY : rt_clock_now(t->clock) + (timeout_secs > 0 ? timeout_secs : 0);
    while (rt_store_count(t->store) < n && t->running && timeout_secs != 0)
        if (rt_clock_wait(t->clock, &t->cv, &t->mu, until))
            break;
    uint64_t c = rt_store_count(t->store);
    t->waiters--;
    rt_clock_broadcast(t->clock, &t->cv); /* rt_tracker_free may wait for this */
    pthread_mutex_unlock(&t->mu);
    return c;
}

size_t rt_tracker_column(rt_tracker *t, int col, uint64_t first, size_t n, double *out)
{
    if (!t || (!out && n))
        return 0;
    pthread_mutex_lock(&t->mu);
    size_t got = rt_store_column(t->store, col, first, n, out);
    pthread_mutex_unlock(&t->mu);
    return got;
}

rt_error rt_tracker_record(rt_tracker *t, uint64_t index, rt_record *out, size_t out_size)
{
    if (!t || !out || out_size == 0)
        return RT_ERR_INVALID;
    double row[RT_NCOLS];
    pthread_mutex_lock(&t->mu);
    int rc = rt_store_row(t->store, index, row);
    pthread_mutex_unlock(&t->mu);
    if (rc < 0)
        return RT_ERR_NOT_FOUND;
    rt_record rec;
    rt_row_to_record(row, &rec);
    rec.job_name = t->job.job_name;
    memcpy(out, &rec, out_size < sizeof rec ? out_size : sizeof rec);
    return RT_OK;
}

/* Points the summary copy's table under other core counts at a copy of its own (the stats'
 * rows move with the next sample); none when there is no room for it. */
static void copy_cores(rt_tracker *t)
{
    const rt_cores_table *c = t->summary_copy.cores;
    t->summary_copy.cores = NULL;
    if (!c)
        return;
    if (c->n > t->cap_cores_rows) {
        rt_cores_row *rows = realloc(t->cores_rows, c->n * sizeof *rows);
        if (!rows)
            return;
        t->cores_rows = rows;
        t->cap_cores_rows = c->n;
    }
    memcpy(t->cores_rows, c->rows, c->n * sizeof *c->rows);
    t->cores_copy = *c;
    t->cores_copy.rows = t->cores_rows;
    t->summary_copy.cores = &t->cores_copy;
}

const rt_summary *rt_tracker_summary(rt_tracker *t)
{
    if (!t)
        return NULL;
    pthread_mutex_lock(&t->mu);
    t->summary_copy = *rt_stats_summary(t->stats);
    t->usage_copy = *t->summary_copy.usage; /* the stats' own changes with the next sample */
    t->summary_copy.usage = &t->usage_copy;
    rt_phase_copy_into(&t->phase_copy, &t->summary_copy);
    copy_cores(t);
    rt_energy_parts_copy_into(&t->parts_copy, &t->summary_copy);
    pthread_mutex_unlock(&t->mu);
    return &t->summary_copy;
}

rt_error rt_tracker_set_grid(rt_tracker *t, const rt_grid *grid)
{
    if (!t)
        return RT_ERR_INVALID;
    pthread_mutex_lock(&t->mu);
    rt_error err = rt_stats_set_grid(t->stats, grid);
    pthread_mutex_unlock(&t->mu);
    return err;
}

rt_error rt_tracker_set_request(rt_tracker *t, const rt_request *req)
{
    if (!t)
        return RT_ERR_INVALID;
    pthread_mutex_lock(&t->mu);
    rt_error err = rt_stats_set_request(t->stats, req);
    pthread_mutex_unlock(&t->mu);
    return err;
}

rt_error rt_tracker_recommend(rt_tracker *t, rt_recommendation *out)
{
    if (!t || !out)
        return RT_ERR_INVALID;
    pthread_mutex_lock(&t->mu);
    rt_summary s = *rt_stats_summary(t->stats);
    pthread_mutex_unlock(&t->mu);
    const rt_summary *runs[1] = {&s};
    return rt_recommend(runs, 1, out);
}

static rt_error tracker_report(rt_tracker *t, const rt_report_info *info, int fd, rt_write_fn fn, void *user);

rt_error rt_tracker_report(rt_tracker *t, const rt_report_info *info, int fd)
{
    return tracker_report(t, info, fd, NULL, NULL);
}

rt_error rt_tracker_report_cb(rt_tracker *t, const rt_report_info *info, rt_write_fn write, void *user)
{
    return write ? tracker_report(t, info, -1, write, user) : RT_ERR_INVALID;
}

static rt_error tracker_report(rt_tracker *t, const rt_report_info *info, int fd, rt_write_fn fn, void *user)
{
    if (!t)
        return RT_ERR_INVALID;
    rt_report_info i = RT_REPORT_INFO_INIT;
    if (rt_struct_copy(&i, sizeof i, info) < 0)
        return RT_ERR_INVALID;
    pthread_mutex_lock(&t->mu);
    rt_summary s = *rt_stats_summary(t->stats);
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    if (!i.summary)
        i.summary = &s;
    if (!i.recommendation) {
        const rt_summary *runs[1] = {i.summary};
        if (rt_recommend(runs, 1, &rec) == RT_OK)
            i.recommendation = &rec;
    }
    if (!i.job && t->job.struct_size)
        i.job = &t->job;
    rt_error err = fn ? rt_report_write_cb(t->report, &i, fn, user) : rt_report_write(t->report, &i, fd);
    pthread_mutex_unlock(&t->mu);
    return err;
}
