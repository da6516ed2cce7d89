/* marks.c - the embedded tracker's phase marks: rt_tracker_phase_start/stop queue a mark in a
 * bounded lock-free ring of fixed slots (many producers, the tracker's thread the one consumer:
 * the name copied, no allocation, no lock, no wake-up, async-signal-safe), and the thread drains
 * it: one reading of the tree for the marks queued (rt_sampler_peek), then, under the tracker's
 * lock, each mark to the pipeline, which carries it with the next sample.
 *
 * The ring: slot i holds the marks of tickets i, i + N, i + 2N, ...; its turn says which lap it
 * is at: 2 x lap free for the lap's producer, 2 x lap + 1 written and ready for the consumer.
 * A producer takes a ticket (compare-and-swap on head) only when its slot's turn is its lap's;
 * a turn behind means the slot's previous mark is not taken yet: the ring is full, and the mark
 * is dropped (counted) rather than waited for.
 *
 * CPU (see rt_tracker_phase_start in the header): a tracker of the caller's own process stamps
 * the caller's exact CPU at the call (CLOCK_PROCESS_CPUTIME_ID + RUSAGE_CHILDREN), and the mark
 * carries RT_PHASE_CPU_MARKER: stamp - the stamp at start + the tree's other processes' CPU
 * (the peek's walk total less the root's own and reaped time, in ticks) read at the drain. Both
 * ends of a phase marked by this process therefore share the source, and their difference is
 * the process's exact CPU within it plus the others' (to within phase_check_secs).
 *
 * The marks taken are also kept (up to RT_MARK_LOG_MAX, names interned) with the index of the
 * sample they came before, for the snapshot (snapshot.c saves them, snapshot_load.c marks them
 * again before the same rows). */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../core/core.h"
#include "../phase/phase.h"
#include "../pipeline/pipeline.h"
#include "../sample/peek.h"
#include "tracker_int.h"

#define RING_SLOTS 4096u /* a power of two */

typedef struct mark_slot {
    atomic_uint_fast64_t turn;
    int kind;
    int64_t pid;
    double real;     /* Unix time of the call */
    int64_t cpu_ns;  /* the caller's stamp; -1: none */
    char name[RT_PHASE_NAME_MAX + 1];
} mark_slot;

struct rt_mark_ring {
    _Alignas(64) atomic_uint_fast64_t head; /* the next ticket */
    _Alignas(64) uint64_t tail;             /* the next ticket to take (the thread's) */
    atomic_uint_fast64_t malformed, dropped; /* refused since the last drain */
    atomic_int used;                         /* a mark was queued */
    mark_slot slots[RING_SLOTS];
};

/* The caller's CPU now in ns: its own (all threads), plus what it reaped when children is set;
 * -1 when a clock cannot be read. */
static int64_t stamp_now(bool children)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return -1;
    int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    if (children) {
        struct rusage ru;
        if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
            return -1;
        ns += ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
              ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    }
    return ns;
}

rt_error rt_tracker_marks_open(rt_tracker *t, bool stamp_cpu, bool stamp_children)
{
    /* its own zeroed mapping: the slots' pages (1.2 MiB) take no memory until marks reach them
     * (a calloc may come from the heap and clear it) */
    void *p = mmap(NULL, sizeof *t->ring, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return RT_ERR_NOMEM;
    t->ring = p;
    t->owner_pid = (int64_t)getpid();
    t->stamp_cpu = stamp_cpu;
    t->stamp_children = stamp_children;
    t->stamp_base_ns = stamp_cpu ? stamp_now(stamp_children) : -1;
    if (t->stamp_base_ns < 0)
        t->stamp_cpu = false;
    atomic_store(&t->marks_open, 1);
    return RT_OK;
}

void rt_tracker_marks_close(rt_tracker *t)
{
    if (t->ring)
        munmap(t->ring, sizeof *t->ring);
    t->ring = NULL;
    for (size_t i = 0; i < t->marks.nnames; i++)
        free(t->marks.names[i]);
    free(t->marks.names);
    free(t->marks.e);
    t->marks = (rt_mark_log){0};
}

/* The index of name in the log's names, added when new; -1 when there is no room. */
static long intern(rt_mark_log *l, const char *name)
{
    for (size_t i = l->nnames; i-- > 0;)
        if (strcmp(l->names[i], name) == 0)
            return (long)i;
    if (!l->names && !(l->names = calloc(RT_PHASE_MAX_NAMES, sizeof *l->names)))
        return -1;
    if (l->nnames >= RT_PHASE_MAX_NAMES || !(l->names[l->nnames] = strdup(name)))
        return -1;
    return (long)l->nnames++;
}

rt_error rt_tracker_mark_locked(rt_tracker *t, const rt_phase_mark *m)
{
    rt_error err = rt_pipeline_mark(t->pipe, m);
    rt_mark_log *l = &t->marks;
    if (err != RT_OK || l->n >= RT_MARK_LOG_MAX)
        return err;
    long name = intern(l, m->name);
    if (name < 0 || rt_grow(&l->e, &l->cap, l->n + 1, sizeof *l->e) < 0)
        return err; /* not kept for the snapshot: the statistics have it */
    l->e[l->n++] = (rt_mark_entry){m->kind, m->cpu_source, (unsigned)name, m->pid, m->timestamp_secs,
                                   m->cpu_secs_total, m->read_bytes_total, m->write_bytes_total, m->rss_mib,
                                   m->memory_peak_mib, m->reading_lag_secs, rt_store_count(t->store)};
    return err;
}

bool rt_tracker_marks_used(const rt_tracker *t)
{
    return t->ring && atomic_load_explicit(&t->ring->used, memory_order_relaxed);
}

static rt_error push(rt_tracker *t, int kind, const char *name)
{
    if (!t)
        return RT_ERR_INVALID;
    struct rt_mark_ring *r = t->ring;
    if (!r || !atomic_load_explicit(&t->marks_open, memory_order_acquire))
        return RT_ERR_DISABLED;
    double real = rt_real_secs();
    size_t n = name ? strnlen(name, RT_PHASE_NAME_MAX + 1) : 0;
    if (!rt_phase_name_ok(name, n)) {
        atomic_fetch_add_explicit(&r->malformed, 1, memory_order_relaxed);
        return RT_ERR_INVALID;
    }
    uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    mark_slot *slot;
    uint64_t lap;
    for (;;) {
        slot = &r->slots[pos & (RING_SLOTS - 1)];
        lap = pos / RING_SLOTS * 2;
        uint64_t turn = atomic_load_explicit(&slot->turn, memory_order_acquire);
        if (turn == lap) {
            if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
                break; /* the slot is ours */
        } else if (turn < lap) {
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return RT_ERR_NOMEM; /* its mark of the lap before is not taken yet: full */
        } else {
            pos = atomic_load_explicit(&r->head, memory_order_relaxed); /* taken: try the next */
        }
    }
    /* stamped once the slot is ours: a full ring costs no CPU reading */
    slot->cpu_ns = t->stamp_cpu ? stamp_now(t->stamp_children) : -1;
    slot->kind = kind;
    slot->pid = t->owner_pid;
    slot->real = real;
    memcpy(slot->name, name, n);
    slot->name[n] = '\0';
    atomic_store_explicit(&slot->turn, lap + 1, memory_order_release);
    if (!atomic_load_explicit(&r->used, memory_order_relaxed))
        atomic_store_explicit(&r->used, 1, memory_order_relaxed);
    return RT_OK;
}

rt_error rt_tracker_phase_start(rt_tracker *t, const char *name)
{
    return push(t, RT_PHASE_START, name);
}

rt_error rt_tracker_phase_stop(rt_tracker *t, const char *name)
{
    return push(t, RT_PHASE_STOP, name);
}

/* The slot of ticket pos when its mark is written and not yet taken, else NULL. */
static mark_slot *ready(struct rt_mark_ring *r, uint64_t pos)
{
    mark_slot *slot = &r->slots[pos & (RING_SLOTS - 1)];
    uint64_t turn = atomic_load_explicit(&slot->turn, memory_order_acquire);
    return turn == pos / RING_SLOTS * 2 + 1 ? slot : NULL;
}

void rt_tracker_marks_drain_locked(rt_tracker *t)
{
    struct rt_mark_ring *r = t->ring;
    if (!r)
        return;
    uint64_t bad = atomic_exchange_explicit(&r->malformed, 0, memory_order_relaxed);
    uint64_t full = atomic_exchange_explicit(&r->dropped, 0, memory_order_relaxed);
    if (bad)
        rt_pipeline_mark_refused(t->pipe, RT_PHASE_REFUSED_MALFORMED, bad);
    if (full)
        rt_pipeline_mark_refused(t->pipe, RT_PHASE_REFUSED_DROPPED, full);
    /* the marks written now; those that come during the reading wait for the next drain, so
     * no mark gets a reading taken before it */
    uint64_t n = 0;
    while (n < RING_SLOTS && ready(r, r->tail + n))
        n++;
    if (n == 0)
        return;
    rt_phase_mark reading = RT_PHASE_MARK_INIT;
    double others = NAN;
    rt_error err = RT_ERR_INVALID;
    if (t->sampler) {
        t->sampling = true; /* a fork waits: the sampler is in use */
        pthread_mutex_unlock(&t->mu);
        err = rt_sampler_peek_split(t->sampler, &reading, &others);
        pthread_mutex_lock(&t->mu);
        t->sampling = false;
        rt_clock_broadcast(t->clock, &t->cv);
    }
    double read_real = rt_real_secs();
    for (uint64_t i = 0; i < n; i++, r->tail++) {
        mark_slot *slot = ready(r, r->tail);
        rt_phase_mark m = reading;
        m.kind = slot->kind;
        m.name = slot->name;
        m.timestamp_secs = slot->real;
        m.pid = slot->pid;
        m.reading_lag_secs = err == RT_OK ? fmax(read_real - slot->real, 0.0) : NAN;
        if (slot->cpu_ns >= 0) {
            /* the caller's exact CPU since the start, and the others' as read now */
            bool ok = err == RT_OK && isfinite(others);
            m.cpu_secs_total = ok ? (double)(slot->cpu_ns - t->stamp_base_ns) / 1e9 + others : NAN;
            m.cpu_source = ok ? RT_PHASE_CPU_MARKER : RT_PHASE_CPU_NONE;
        }
        rt_tracker_mark_locked(t, &m); /* a refusal is counted in the pipeline */
        t->marks_pending = true;
        atomic_store_explicit(&slot->turn, r->tail / RING_SLOTS * 2 + 2, memory_order_release);
    }
}
