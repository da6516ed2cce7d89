/* notes.c - notes a person can act on, one line each, made from a run's statistics (an OOM
 * kill, accounting that may be incomplete, a memory need unknown or only sampled, a limit far
 * above the need, idle GPUs, CPU throttling, pressure stalls, work left behind; 0.16: cores,
 * memory or GPUs asked for and not used, a time limit nearly hit; 0.19: what the job's GPUs did:
 * busy but idle, tensor cores idle, memory-bound, starved by the CPU, held and never used; 0.20:
 * a run stopped at a limit, its need above it unknown, and the ask that learns it; files read back
 * after a memory limit evicted them) and from a recommendation (few runs, and why it is above
 * what the runs used). */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "cores.h"
#include "efficiency.h"
#include "floors.h"
#include "need.h"
#include "rereads.h"

/* A run throttled in at least this share of its quota periods (percent) was held back
 * (recommend.c's rule too). */
#define THROTTLED_PCT 10.0
/* Pressure means (percent of the time) from which stalls are worth a note. */
#define PRESSURE_CPU_PCT 20.0
#define PRESSURE_MEMORY_PCT 10.0
#define PRESSURE_IO_PCT 20.0
/* A limit is far above the need from this factor and this many MiB above the recommendation. */
#define OVERSIZED_FACTOR 2.0
#define OVERSIZED_MIB 1024.0
/* Asked for and not used: an efficiency below this percent, with the recommendation at
 * most half (memory) or a core below (CPU) what was asked for, is worth a note. */
#define OVER_REQUESTED_PCT 50.0
/* A run that used this share of its time limit came near it (percent). */
#define TIME_LIMIT_PCT 90.0

const char *rt_note_kind_name(int kind)
{
    static const char *const names[] = {
        [RT_NOTE_OOM_KILLED] = "oom_killed",       [RT_NOTE_ACCOUNTING_INCOMPLETE] = "accounting_incomplete",
        [RT_NOTE_MEMORY_UNKNOWN] = "memory_unknown", [RT_NOTE_MEMORY_SAMPLED] = "memory_sampled",
        [RT_NOTE_MEMORY_OVERSIZED] = "memory_oversized", [RT_NOTE_GPU_IDLE] = "gpu_idle",
        [RT_NOTE_CPU_THROTTLED] = "cpu_throttled",  [RT_NOTE_PRESSURE] = "pressure",
        [RT_NOTE_LEFT_BEHIND] = "left_behind",      [RT_NOTE_FEW_RUNS] = "few_runs",
        [RT_NOTE_PHASE_MARKS] = "phase_marks",      [RT_NOTE_CPU_OVER_REQUESTED] = "cpu_over_requested",
        [RT_NOTE_MEMORY_OVER_REQUESTED] = "memory_over_requested", [RT_NOTE_GPU_UNUSED] = "gpu_unused",
        [RT_NOTE_TIME_LIMIT] = "time_limit",        [RT_NOTE_MEMORY_SAFE_SIDE] = "memory_safe_side",
        [RT_NOTE_CPU_RUNS] = "cpu_runs",           [RT_NOTE_GPU_BUSY_IDLE] = "gpu_busy_idle",
        [RT_NOTE_GPU_TENSOR_IDLE] = "gpu_tensor_idle", [RT_NOTE_GPU_MEMORY_BOUND] = "gpu_memory_bound",
        [RT_NOTE_GPU_STARVED] = "gpu_starved",     [RT_NOTE_GPU_HELD_UNUSED] = "gpu_held_unused",
        [RT_NOTE_MEMORY_HIGH] = "memory_high",     [RT_NOTE_TIME_ENDED] = "time_ended",
        [RT_NOTE_MEMORY_REREAD] = "memory_reread",
        [RT_NOTE_CPU_SHARED] = "cpu_shared",
        [RT_NOTE_CPU_UNWAITED] = "cpu_unwaited",
        [RT_NOTE_CLOCK_JUMP] = "clock_jump",
        [RT_NOTE_SAMPLING_GAP] = "sampling_gap",
    };
    return kind > 0 && (size_t)kind < sizeof names / sizeof names[0] && names[kind] ? names[kind] : "note";
}

/* Where notes are written. */
typedef struct notes {
    rt_note *out;
    size_t cap, n;
} notes;

/* Appends a note of kind (printf-style text, cut to fit without splitting a UTF-8 character). */
static void add(notes *ns, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(notes *ns, int kind, const char *fmt, ...)
{
    if (ns->n >= ns->cap || ns->n >= RT_NOTES_MAX)
        return;
    rt_note *note = &ns->out[ns->n++];
    note->kind = kind;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(note->text, sizeof note->text, fmt, ap);
    va_end(ap);
    if (len < 0) {
        note->text[0] = '\0';
        return;
    }
    size_t end = strlen(note->text);
    if ((size_t)len >= sizeof note->text) { /* cut: back over a split multi-byte character */
        size_t k = end;
        while (k > 0 && ((unsigned char)note->text[k - 1] & 0xC0) == 0x80)
            k--;
        if (k > 0 && ((unsigned char)note->text[k - 1] & 0x80)) {
            unsigned char lead = (unsigned char)note->text[k - 1];
            size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
            if (end - (k - 1) < want)
                note->text[k - 1] = '\0';
        }
    }
    for (char *c = note->text; *c; c++) /* one line */
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

/* MiB for people into b: "604 MiB", "8 GiB", "1.5 GiB" (whole GiB within 0.05 without a
 * fraction), as the tool's recommend says them. */
static const char *mib_text(double mib, char *b, size_t cap)
{
    if (!isfinite(mib))
        snprintf(b, cap, "?");
    else if (mib < 1024)
        snprintf(b, cap, "%.0f MiB", mib);
    else if (fabs(mib / 1024.0 - round(mib / 1024.0)) < 0.05)
        snprintf(b, cap, "%.0f GiB", mib / 1024.0);
    else
        snprintf(b, cap, "%.1f GiB", mib / 1024.0);
    return b;
}

/* Cores for people: "1", "1.5". */
static const char *cores_text(double v, char *b, size_t cap)
{
    snprintf(b, cap, v == round(v) ? "%.0f" : "%.2f", v);
    size_t n = strlen(b);
    if (strchr(b, '.'))
        while (n > 1 && b[n - 1] == '0') /* "0.90": "0.9" */
            b[--n] = '\0';
    return b;
}

/* "s" unless n is 1. */
static const char *plural(double n)
{
    return n == 1 ? "" : "s";
}

/* Seconds for people: "12.3 s", "4.0 min", "2.1 h". */
static const char *secs_text(double s, char *b, size_t cap)
{
    if (!isfinite(s))
        snprintf(b, cap, "?");
    else if (s < 120)
        snprintf(b, cap, "%.1f s", s);
    else if (s < 7200)
        snprintf(b, cap, "%.1f min", s / 60.0);
    else
        snprintf(b, cap, "%.1f h", s / 3600.0);
    return b;
}

/* What the ask does about a need above the limit f was stopped at, after "...: ": "its need is
 * above that, unknown; asking for 2 GiB (at least 2x the limit, 1.5 GiB) to learn it" ("(2x the
 * limit)" where the ask is that exactly); a need another run showed: "a run under more memory
 * finished: asking for 10 GiB". */
static void learn_words(const rt_mem_floor *f, const rt_recommendation *rec, const char *what, char *b, size_t cap)
{
    char a[32], c[32];
    const char *ask = rec->memory_mib > 0 ? mib_text((double)rec->memory_mib, a, sizeof a) : "?";
    double twice = 2.0 * (isnan(f->limit_mib) ? f->reached_mib : f->limit_mib);
    if (f->learned)
        snprintf(b, cap, "a run under more memory finished: asking for %s", ask);
    else if ((double)rec->memory_mib == twice)
        snprintf(b, cap, "its need is above that, unknown; asking for %s (2x %s) to learn it", ask, what);
    else
        snprintf(b, cap, "its need is above that, unknown; asking for %s (at least 2x %s, %s) to learn it", ask,
                 what, mib_text(twice, c, sizeof c));
}

/* An OOM kill: where (the most the run was seen to hold, its limit) and the floor the ask takes
 * (rec: the run's own recommendation; NULL without a tree). */
static void oom_note(notes *ns, const rt_summary *s, const rt_recommendation *rec)
{
    if (!(s->oom_kills > 0))
        return;
    char a[32], b[32], lim[64] = "";
    if (!isnan(s->memory_limit_mib))
        snprintf(lim, sizeof lim, " (limit %s)", mib_text(s->memory_limit_mib, b, sizeof b));
    if (!s->has_process) {
        add(ns, RT_NOTE_OOM_KILLED, "the OOM killer killed %.0f task%s in the cgroup the tracker ran in%s",
            s->oom_kills, plural(s->oom_kills), lim);
        return;
    }
    double peak = isnan(s->process_memory_peak_mib) ? s->memory_need.mib : s->process_memory_peak_mib;
    char at[64] = "", then[200] = ": the next run needs more than that";
    if (!isnan(peak))
        snprintf(at, sizeof at, " at %s", mib_text(peak, a, sizeof a));
    rt_mem_floor f;
    rt_mem_floor_of(&s, 1, 0, &f);
    if (rec && !isnan(f.floor_mib)) {
        char w[160];
        learn_words(&f, rec, isnan(f.limit_mib) ? "that" : "the limit", w, sizeof w);
        snprintf(then, sizeof then, "%s: %s", isnan(f.limit_mib) ? ", with no memory limit of its own" : "", w);
    }
    add(ns, RT_NOTE_OOM_KILLED, "the OOM killer killed %.0f task%s of the job%s%s%s", s->oom_kills,
        plural(s->oom_kills), at, lim, then);
}

/* Held at its memory.high with reclaim stalls: the need above it unknown, and the ask to learn it. */
static void memory_high_note(notes *ns, const rt_mem_floor *f, const rt_recommendation *rec)
{
    if (f->why != RT_FLOOR_HIGH || isnan(f->floor_mib))
        return;
    char a[32], w[160];
    learn_words(f, rec, "memory.high", w, sizeof w);
    add(ns, RT_NOTE_MEMORY_HIGH,
        "the job was held at its memory.high of %s with reclaim stalls (memory pressure full %.0f%% of the time): %s",
        mib_text(f->limit_mib, a, sizeof a), f->stall_pct, w);
}

/* Ran to its time limit: its duration a floor, and the time the ask takes (rec's). True when
 * given (the note of a time limit nearly hit is then not: one fact, one note). */
static bool time_ended_note(notes *ns, const rt_summary *s, const rt_recommendation *rec)
{
    double floor = rt_time_floor_of(s);
    if (isnan(floor))
        return false;
    char a[32], b[32], c[96] = ""; /* 96: "; asking for " + a time of 32 + " (2x the run) to learn it" */
    if (rec->time_limit_secs > 0)
        snprintf(c, sizeof c, "; asking for %s (2x the run) to learn it", secs_text(rec->time_limit_secs, b, sizeof b));
    char d[32];
    if (rt_time_floor_why(s) == RT_TIME_FLOOR_SIGNAL) {
        int sig = (int)s->end_signal;
        add(ns, RT_NOTE_TIME_ENDED,
            "the job was ended by %s after %s (%s): it needs more than that, unknown how much%s",
            sig == SIGTERM ? "SIGTERM" : sig == SIGXCPU ? "SIGXCPU" : "SIGKILL", secs_text(floor, d, sizeof d),
            sig == SIGXCPU ? "its CPU time limit" : "a scheduler's time limit or a preemption", c);
        return true;
    }
    add(ns, RT_NOTE_TIME_ENDED,
        "the job ran to its time limit (%s, %s): it needs more than the %s it ran, unknown how much%s",
        secs_text(s->time_limit_secs, a, sizeof a), s->time_limit_from ? s->time_limit_from : "?",
        secs_text(floor, d, sizeof d), c);
    return true;
}

static void accounting_note(notes *ns, const rt_summary *s, const rt_notes_options *o)
{
    if (!s->has_process || s->process_cgroup_exclusive == 1)
        return;
    const char *why = o && o->cgroup_why && *o->cgroup_why ? o->cgroup_why
                      : s->process_cgroup_exclusive == 0 ? "the cgroup it ran in holds other processes too"
                                                         : "no cgroup was read";
    /* as root the kernel's exit records count their CPU (proctree_exits.c), not their I/O */
    add(ns, RT_NOTE_ACCOUNTING_INCOMPLETE,
        "accounting may be incomplete: no cgroup of the job's own (%s): %s of children the kernel reaps for a parent "
        "that ignores SIGCHLD %s",
        why, isfinite(s->process_exits_counted) ? "the I/O" : "CPU and I/O",
        isfinite(s->process_exits_counted) ? "is not counted (their CPU is, from the kernel's exit records)"
                                           : "are not counted");
}

/* Whether a requested figure came from what the job asked for (a scheduler's request), not
 * from a cgroup limit or the machine of a runner. */
static bool asked_for(const char *from)
{
    return from && strncmp(from, "cgroup ", 7) != 0 && strcmp(from, "runner") != 0;
}

/* Memory asked for and not used: the notes' answer to "used 6% of the memory requested". */
static bool memory_request_note(notes *ns, const rt_summary *s, const rt_recommendation *rec)
{
    if (!asked_for(s->requested_memory_from) || !(s->memory_efficiency_pct < OVER_REQUESTED_PCT) ||
        !(rec->memory_mib > 0) || !(s->requested_memory_mib >= 2.0 * (double)rec->memory_mib) || s->oom_kills > 0)
        return false;
    char a[32], b[32], c[32];
    char pct[16];
    add(ns, RT_NOTE_MEMORY_OVER_REQUESTED, "the job used %s of the memory it asked for (%s of %s, %s): %s would do",
        rt_share_text(s->memory_efficiency_pct, pct, sizeof pct),
        mib_text(s->memory_need.mib, a, sizeof a), mib_text(s->requested_memory_mib, b, sizeof b),
        s->requested_memory_from, mib_text((double)rec->memory_mib, c, sizeof c));
    return true;
}

/* What the runs say of the processes born and gone between samples: every run counted them from
 * the kernel's exit records (exits), and the longest mean interval between samples (the seconds
 * the records cover over their count; NaN: not known), which a process or a peak must outlive to
 * be seen without them. */
static void unseen_of(const rt_summary *const *runs, size_t n, bool *exits, double *every)
{
    *exits = n > 0;
    *every = NAN;
    for (size_t i = 0; i < n; i++) {
        const rt_summary *s = runs[i];
        *exits = *exits && s && isfinite(s->process_exits_counted);
        double e = s && s->samples > 0 && s->duration_secs > 0 ? s->duration_secs / (double)s->samples : NAN;
        if (isfinite(e) && !(e <= *every))
            *every = e;
    }
}

/* The note of a memory need that is a lower bound (rt_need.sampled), in words that fit its
 * source; whole: with how a cgroup would see it (a run's notes; recommend's are shorter). runs:
 * the runs it is of (the processes born and gone between samples: unseen_of). */
static void sampled_note(notes *ns, double mib, int source, bool whole, const rt_summary *const *runs, size_t n)
{
    char a[32], apart[64] = "";
    const char *cg = whole ? " (a cgroup of the job's own with the memory controller would see it)" : "";
    bool exits;
    double every;
    unseen_of(runs, n, &exits, &every);
    if (isfinite(every))
        snprintf(apart, sizeof apart, " (about %.2g s apart)", every);
    if (source == RT_NEED_PROCESS_PEAKS && exits)
        add(ns, RT_NOTE_MEMORY_SAMPLED,
            "memory %s is each process at its own peak, all at once, those born and gone between samples too (the "
            "kernel's counts and exit records): more than the job held if they peaked apart, yet a lower bound (no "
            "kernel memory)%s",
            mib_text(mib, a, sizeof a), cg);
    else if (source == RT_NEED_PROCESS_PEAKS)
        add(ns, RT_NOTE_MEMORY_SAMPLED,
            "memory %s is each process at its own peak, all at once: more than the job held if they peaked apart, "
            "yet a lower bound: one born and gone between samples%s is missed unless the tracker reaped it (as root "
            "it is counted)%s",
            mib_text(mib, a, sizeof a), apart, cg);
    else if (source == RT_NEED_PROCESS_PEAK)
        add(ns, RT_NOTE_MEMORY_SAMPLED,
            "memory %s is a lower bound (%s): what other processes held at the same moment, and memory no "
            "process maps (tmpfs and /dev/shm files, kernel memory), are not in it%s",
            mib_text(mib, a, sizeof a), rt_need_source_text(source), cg);
    else
        add(ns, RT_NOTE_MEMORY_SAMPLED, "memory %s is a lower bound from samples (%s): a peak between %s%s is not seen%s%s",
            mib_text(mib, a, sizeof a), rt_need_source_text(source), whole ? "them" : "samples", apart,
            exits ? "" : ", nor a process born and gone (as root it is counted)", cg);
}

static void memory_notes(notes *ns, const rt_summary *s, const rt_recommendation *rec)
{
    char a[32], b[32], c[32];
    const rt_need *m = &s->memory_need;
    if (m->source == RT_NEED_UNKNOWN) {
        add(ns, RT_NOTE_MEMORY_UNKNOWN, "memory unknown: the run has no memory figure (no PSS, RSS or cgroup peak)");
        return;
    }
    if (m->sampled)
        sampled_note(ns, m->mib, m->source, true, &s, 1);
    /* the safe side taken at a peak the readings could not place, where it made the ask larger */
    double unsure = s->process_unreclaimable_unsure_mib;
    if (m->source == RT_NEED_CGROUP && unsure > 0 && rec->memory_mib != RT_NULL_I64 &&
        rt_round_memory_mib((m->mib - unsure) * (1 + rec->headroom_pct / 100)) < rec->memory_mib &&
        rt_round_memory_mib(m->mib * (1 + rec->headroom_pct / 100)) == rec->memory_mib) /* the ask is the need's */
        add(ns, RT_NOTE_MEMORY_SAFE_SIDE,
            "memory %s may count %s of page cache as held: a peak and a rise of the cache came within one reading "
            "of the job's cgroup, and which came first is not known (the safe side; the ask would be %s without "
            "it)",
            mib_text(m->mib, a, sizeof a), mib_text(unsure, b, sizeof b),
            mib_text((double)rt_round_memory_mib((m->mib - unsure) * (1 + rec->headroom_pct / 100)), c,
                     sizeof c));
    if (memory_request_note(ns, s, rec) || s->oom_kills > 0 || rec->memory_learn || isnan(s->memory_limit_mib))
        return; /* never "too much" for a run stopped at a limit (0.20: memory_learn, memory.high) */
    double want = (double)rt_round_memory_mib(m->mib * 1.2);
    if (s->memory_limit_mib >= OVERSIZED_FACTOR * want && s->memory_limit_mib - want >= OVERSIZED_MIB)
        add(ns, RT_NOTE_MEMORY_OVERSIZED, "the memory limit of %s is %.0fx what the job needed (%s): %s would do",
            mib_text(s->memory_limit_mib, a, sizeof a), floor(s->memory_limit_mib / fmax(m->mib, 1)),
            mib_text(m->mib, b, sizeof b), mib_text(want, c, sizeof c));
}

/* The limit's words: "memory limit" (memory.max, memory.limit_in_bytes) or "memory.high". */
static const char *limit_word(const rt_summary *s, const rt_rereads *rr)
{
    return rr->limit_mib == s->memory_limit_mib ? "memory limit" : "memory.high";
}

/* Files read back after the limit evicted them (docs/answers.md, "Re-reads"): how much, as a
 * share of the reads, the waits the run had (no speed is claimed: the waits bound what a cache
 * saves), and the limit that keeps them cached; whether the ask does. Not after an OOM kill
 * (its own note). */
static void reread_note(notes *ns, const rt_summary *s, const rt_recommendation *rec)
{
    rt_rereads rr;
    if (s->oom_kills > 0 || !rt_rereads_of(s, s->memory_need.mib, &rr))
        return;
    char a[32], b[32], c[32], d[32], e[32], f[32], share[64] = "", waits[96] = "";
    if (!isnan(rr.share_pct))
        snprintf(share, sizeof share, ", %.0f%% of its %s of storage reads", rr.share_pct,
                 mib_text(rr.read_mib, e, sizeof e));
    double io = s->pressure_io_some_pct.mean, mem = s->pressure_memory_some_pct.mean;
    if (io >= 0.5 || mem >= 0.5)
        snprintf(waits, sizeof waits, "; tasks waited for I/O %.0f%%, memory %.0f%% of the time%s", isnan(io) ? 0 : io,
                 isnan(mem) ? 0 : mem, s->pressure_group == 1 ? "" : " (the machine's)");
    double grow = rec->memory_mib > 0 ? 1 + rec->headroom_pct / 100 : 1.2;
    int64_t keep = rt_round_memory_mib(rr.keep_mib * grow);
    add(ns, RT_NOTE_MEMORY_REREAD,
        "the job read back %s of files its %s %s had evicted%s%s: its need (%s) and those files (%s at most) "
        "take %s, a limit of %s keeps them cached%s",
        mib_text(rr.reread_mib, a, sizeof a), mib_text(rr.limit_mib, b, sizeof b), limit_word(s, &rr), share, waits,
        mib_text(rr.need_mib, c, sizeof c), mib_text(rr.files_mib, d, sizeof d),
        mib_text(rr.keep_mib, e, sizeof e), mib_text((double)keep, f, sizeof f),
        rec->memory_mib >= keep ? " (the ask)" : rr.large ? "" : " (not asked: the re-reads were small)");
}

/* Cores asked for and not used (the request's, or a cgroup quota's). */
static void cpu_request_note(notes *ns, const rt_summary *s, const rt_recommendation *rec)
{
    const char *from = s->requested_cpu_from;
    if (!from || strcmp(from, "runner") == 0 || !(s->cpu_efficiency_pct < OVER_REQUESTED_PCT) || rec->cpu <= 0 ||
        !(s->requested_cpu_cores >= (double)rec->cpu + 1))
        return;
    char a[32], b[32];
    add(ns, RT_NOTE_CPU_OVER_REQUESTED,
        "the job used %s of the %s core%s it %s (CPU efficiency %.0f%%, %s): %lld core%s would do",
        cores_text(round(s->process_cores.mean * 100) / 100, a, sizeof a), cores_text(s->requested_cpu_cores, b, sizeof b),
        plural(s->requested_cpu_cores), asked_for(from) ? "asked for" : "was given", s->cpu_efficiency_pct, from,
        (long long)rec->cpu, plural((double)rec->cpu));
}

/* GPUs asked for and left unused (the most the job used at once against the request); true
 * when a note was given. */
static bool gpu_request_note(notes *ns, const rt_summary *s)
{
    if (!(s->requested_gpus > 0) || isnan(s->process_gpus_used) || !(s->process_gpus_used < s->requested_gpus))
        return false;
    if (s->process_gpus_used == 0)
        add(ns, RT_NOTE_GPU_UNUSED, "the job asked for %.0f GPU%s (%s) and used none: ask for none", s->requested_gpus,
            plural(s->requested_gpus), s->requested_gpus_from);
    else
        add(ns, RT_NOTE_GPU_UNUSED, "the job asked for %.0f GPUs (%s) and used at most %.0f at once: ask for %.0f",
            s->requested_gpus, s->requested_gpus_from, s->process_gpus_used, s->process_gpus_used);
    return true;
}

/* A time limit nearly hit: the next run may be killed by it. */
static void time_limit_note(notes *ns, const rt_summary *s)
{
    if (!(s->time_limit_used_pct >= TIME_LIMIT_PCT))
        return;
    char a[32], b[32];
    double used = s->time_limit_used_pct / 100.0 * s->time_limit_secs;
    add(ns, RT_NOTE_TIME_LIMIT, "the job used %.0f%% of its time limit (%s of %s, %s): ask for more time",
        round(s->time_limit_used_pct), secs_text(used, a, sizeof a), secs_text(s->time_limit_secs, b, sizeof b),
        s->time_limit_from);
}

/* ---- what the job's GPUs did (0.19: NVML GPM, Hopper and newer) ----------------------------
 * The thresholds come from what one H200 measured (issue 65; ../shared/gpu-check's table):
 *   load                    utilization  SM active  tensor  DRAM  FP32
 *   bf16 8192x8192 matmuls   99          95.1       92.4    16.0  0
 *   2 GiB device copy        100         98.9       0       88.3  0
 *   256x256 fp32 matmuls     33-42       13-16      0       0     2.3
 * Every rule reads the run's time-weighted means and needs its figures: one NaN (no GPM, an
 * older file) and no note. They speak of the job: a tracked tree only. */

/* Busy but idle: NVML's utilization (a kernel was running) per GPU the job used from this
 * percent: the small matmuls showed 33-42, room left for a run's idle start and end ... */
#define GPU_BUSY_PCT 25.0
/* ... with the SMs active under this share of it: the small matmuls 0.38-0.39 (13-16 of 33-42),
 * the bf16 matmul and the copy 0.96-0.99. */
#define GPU_SM_PER_BUSY 0.5
/* Tensor cores idle under this percent (the loads without tensor work: 0; bf16 matmuls 92.4) ... */
#define GPU_TENSOR_IDLE_PCT 1.0
/* ... while the FP32 units did math from this percent (the small fp32 matmuls 2.3; the bf16
 * matmuls and the copy 0). */
#define GPU_FP32_MATH_PCT 1.0
/* Memory-bound: device memory bandwidth from this percent (the copy 88.3; bf16 matmuls 16.0) ... */
#define GPU_DRAM_BOUND_PCT 50.0
/* ... with the busiest math unit (tensor, FP32, FP16, FP64) under this share of it (the copy: 0
 * of 88.3; bf16 matmuls: tensor 92.4 against 16.0). */
#define GPU_MATH_PER_DRAM 0.5
/* Starved: the job's GPUs idle while its CPU was busy (rt_summary.gpu_idle_cpu_busy_secs)
 * for this share of the run (percent). */
#define GPU_STARVED_PCT 30.0
/* Held, never used: SM activity at its peak under this percent (an idle GPU reads 0). */
#define GPU_UNUSED_SM_PCT 1.0

/* A GPU figure in percent for people: "16%", "2.3%", "0%" (tenths under 10). */
static const char *gpu_pct_text(double pct, char *b, size_t cap)
{
    double r = round(pct * 10) / 10;
    snprintf(b, cap, r >= 10 || r == round(r) ? "%.0f%%" : "%.1f%%", r);
    return b;
}

/* The NVML utilization of the GPUs the job used, percent of each (its GPU usage, in GPUs,
 * over the most it used at once); NaN when unknown. */
static double job_busy_pct(const rt_summary *s)
{
    if (!(s->process_gpus_used > 0) || isnan(s->process_gpu_usage.mean))
        return NAN;
    return 100.0 * s->process_gpu_usage.mean / s->process_gpus_used;
}

/* Busy but idle: kernels ran much of the time while the SMs did little (small kernels, launch
 * gaps). With the GPU shared the SM activity is the device's, never below the job's own: the
 * job's SMs were still less active, so the note stands, said to be the device's figure. */
static void gpu_busy_idle_note(notes *ns, const rt_summary *s)
{
    double busy = job_busy_pct(s), sm = s->gpu_sm_active_pct.mean;
    if (!(busy >= GPU_BUSY_PCT) || !(sm < GPU_SM_PER_BUSY * busy))
        return;
    char a[16], b[16];
    add(ns, RT_NOTE_GPU_BUSY_IDLE,
        "the GPU was busy %s of the time (a kernel running) but its SMs were active %s%s: many small kernels; batch "
        "them or use CUDA graphs",
        gpu_pct_text(busy, a, sizeof a), gpu_pct_text(sm, b, sizeof b),
        s->gpu_work_shared == 1 ? " (the device's figure: other processes shared it; the job's own is at most that)"
                                : "");
}

/* Tensor cores idle while the FP32 units did the math, FP32 the busiest of the math units (an
 * FP64 code is no case for mixed precision). SM activity alone is no FP32 math: the copy keeps
 * the SMs 99% active with every math unit idle. Held back when other processes shared the GPU:
 * the FP32 work may be theirs. */
static void gpu_tensor_note(notes *ns, const rt_summary *s)
{
    double tensor = s->gpu_tensor_active_pct.mean, fp32 = s->gpu_fp32_active_pct.mean;
    if (s->gpu_work_shared == 1 || !(tensor < GPU_TENSOR_IDLE_PCT) || !(fp32 >= GPU_FP32_MATH_PCT) ||
        fp32 < s->gpu_fp64_active_pct.mean || fp32 < s->gpu_fp16_active_pct.mean || !(s->process_gpu_usage.peak > 0))
        return;
    char a[16], b[16], c[32] = "";
    if (!isnan(s->gpu_sm_active_pct.mean)) {
        char d[16];
        snprintf(c, sizeof c, ", SMs %s active", gpu_pct_text(s->gpu_sm_active_pct.mean, d, sizeof d));
    }
    add(ns, RT_NOTE_GPU_TENSOR_IDLE,
        "tensor cores idle (%s) while the SMs did FP32 math (FP32 units %s busy%s): mixed precision (bf16/fp16 "
        "autocast, TF32) would use them",
        gpu_pct_text(tensor, a, sizeof a), gpu_pct_text(fp32, b, sizeof b), c);
}

/* Memory-bound: device memory bandwidth high while the math units stay well below it. Not SM
 * activity, which the words name: a kernel waiting on memory keeps its SM active, so
 * the plain device copy (DRAM 88%, SMs 99%, every math unit 0) is memory-bound by this rule, as
 * are the elementwise kernels fusion helps; bf16 matmuls (DRAM 16%, tensor 92%) are not. Held
 * back when other processes shared the GPU: the bandwidth may be theirs. */
static void gpu_memory_bound_note(notes *ns, const rt_summary *s)
{
    double dram = s->gpu_dram_active_pct.mean, tensor = s->gpu_tensor_active_pct.mean,
           fp32 = s->gpu_fp32_active_pct.mean;
    if (s->gpu_work_shared == 1 || !(dram >= GPU_DRAM_BOUND_PCT) || isnan(tensor) || isnan(fp32))
        return;
    double math = fmax(tensor, fp32); /* fmax: FP16 and FP64 only where known */
    math = fmax(math, s->gpu_fp16_active_pct.mean);
    math = fmax(math, s->gpu_fp64_active_pct.mean);
    if (!(math < GPU_MATH_PER_DRAM * dram))
        return;
    char a[16], b[16];
    add(ns, RT_NOTE_GPU_MEMORY_BOUND,
        "device memory bandwidth at %s with the math units at most %s busy (tensor cores, FP32, FP16, FP64): "
        "memory-bound; fuse kernels, use larger batches, or a GPU with more bandwidth",
        gpu_pct_text(dram, a, sizeof a), gpu_pct_text(math, b, sizeof b));
}

/* Starved: a job that used its GPU left it idle for much of the run while its CPU was busy (the
 * input pipeline: a quarter of a core or more). The seconds are the records' where the job's own
 * GPU usage was under 0.05 GPU and the SM activity under 5% where known: a shared GPU's device
 * figures can only take records out (another's work is no idle GPU), so the share is never
 * overstated. */
static void gpu_starved_note(notes *ns, const rt_summary *s)
{
    double idle = s->gpu_idle_cpu_busy_secs, run = s->duration_secs;
    bool used = isnan(s->process_gpus_busy) ? s->process_gpu_usage.peak > 0 : s->process_gpus_busy > 0;
    if (!used || !(run > 0) || !(100.0 * idle / run >= GPU_STARVED_PCT))
        return;
    char a[32], b[32];
    bool many = s->process_gpus_used > 1;
    add(ns, RT_NOTE_GPU_STARVED,
        "the job's GPU%s idled %.0f%% of the run (%s of %s) while its CPU was busy (a quarter of a core or more): the "
        "input pipeline starves %s (more DataLoader workers, pin_memory, prefetch)",
        many ? "s" : "", 100.0 * idle / run, secs_text(idle, a, sizeof a), secs_text(run, b, sizeof b),
        many ? "them" : "it");
}

/* Held, never used: the job held VRAM on GPUs (a CUDA context, tensors moved there) and its
 * GPU usage stayed 0 the whole run, and the SM activity too where it is the job's own (a shared
 * GPU's is other processes' work: the job's usage alone says it). True when given: the notes
 * of GPUs asked for and of GPUs on the machine are then not given (one fact, one note). */
static bool gpu_held_note(notes *ns, const rt_summary *s)
{
    double vram = s->process_gpu_vram_mib.peak;
    if (!(s->process_gpus_used > 0) || !(vram > 0) || !(s->process_gpu_usage.peak == 0) || s->process_gpus_busy > 0)
        return false;
    bool sm_known = s->gpu_work_shared != 1 && !isnan(s->gpu_sm_active_pct.peak);
    if (sm_known && !(s->gpu_sm_active_pct.peak < GPU_UNUSED_SM_PCT))
        return false;
    bool many = s->process_gpus_used > 1, asked = s->requested_gpus > 0;
    char a[32], on[32] = "a GPU", ask[96] = "";
    if (many)
        snprintf(on, sizeof on, "%.0f GPUs", s->process_gpus_used);
    if (asked) /* the GPUs asked for: none is the ask (gpu_unused's fact too) */
        snprintf(ask, sizeof ask, " asked for %.0f GPU%s (%s) and", s->requested_gpus, plural(s->requested_gpus),
                 s->requested_gpus_from ? s->requested_gpus_from : "?");
    const char *fix = asked ? "ask for none" : many ? "drop the GPUs" : "drop the GPU";
    add(ns, RT_NOTE_GPU_HELD_UNUSED,
        "the job%s held %s of VRAM on %s and never used %s (GPU usage%s 0 all run): %s (or the CUDA init in a "
        "process that needs none)",
        ask, mib_text(vram, a, sizeof a), on, many ? "them" : "it", sm_known ? " and SM activity" : "", fix);
    return true;
}

/* The job's GPUs: held and never used; else asked for and left unused; else on the machine and
 * none used (each of them one fact, one note). Then what the GPUs it used did. */
static void gpu_notes(notes *ns, const rt_summary *s)
{
    if (!s->has_process)
        return;
    if (!gpu_held_note(ns, s) && !gpu_request_note(ns, s) && s->gpu_count > 0 && s->process_gpus_used == 0)
        add(ns, RT_NOTE_GPU_IDLE, "%.0f GPU%s on the machine and the job used none: ask for none", s->gpu_count,
            plural(s->gpu_count));
    gpu_busy_idle_note(ns, s);
    gpu_tensor_note(ns, s);
    gpu_memory_bound_note(ns, s);
    gpu_starved_note(ns, s);
}

static void throttle_note(notes *ns, const rt_summary *s)
{
    double pct = s->cpu_periods > 0 ? 100.0 * s->cpu_throttled_periods / s->cpu_periods : NAN;
    if (!(pct >= THROTTLED_PCT) || !(s->cpu_quota_cores > 0))
        return;
    char q[32], t[32];
    add(ns, RT_NOTE_CPU_THROTTLED, "a CPU quota of %s core%s throttled %s in %.0f%% of its periods (%s held back)%s",
        cores_text(s->cpu_quota_cores, q, sizeof q), plural(s->cpu_quota_cores),
        s->has_process ? "the job" : "the cgroup the tracker ran in", pct,
        secs_text(s->cpu_throttled_secs, t, sizeof t), s->has_process ? ": it wants more cores" : "");
}

/* What CPU waits mean for an ask by the table, after the pressure note's text: the waits
 * are part of the run's own duration the ask is predicted from, and more cores than the run had
 * would save at most its waits (never a contradiction between "tasks waited" and the cores
 * asked). Empty without a table or an ask by it. */
static void waits_and_ask(const rt_summary *s, const rt_recommendation *rec, char *b, size_t cap)
{
    b[0] = '\0';
    const rt_cores_table *t = s->cores;
    if (!t || t->n == 0 || !rec->cpu_basis || strcmp(rec->cpu_basis, "mean") == 0 || rec->cpu < 1)
        return;
    char own[32], at[32], save[32], had[32];
    bool tasks = t->wait_from && strcmp(t->wait_from, "tasks") == 0;
    if (tasks) { /* 0.20: the demand model: the job's own time, other work's waits left out */
        snprintf(b, cap, ": the job's own time is %s, from which %lld core%s %s predicted at %s",
                 secs_text(t->own_secs, own, sizeof own), (long long)rec->cpu, rec->cpu == 1 ? "" : "s",
                 rec->cpu == 1 ? "is" : "are", secs_text(rt_cores_duration_at(t, rec->cpu), at, sizeof at));
        return;
    }
    int k = snprintf(b, cap, ": the waits are in the run's own %s, from which %lld core%s %s predicted at %s",
                     secs_text(t->duration_secs, own, sizeof own), (long long)rec->cpu, rec->cpu == 1 ? "" : "s",
                     rec->cpu == 1 ? "is" : "are", secs_text(rt_cores_duration_at(t, rec->cpu), at, sizeof at));
    if (k > 0 && (size_t)k < cap && t->wait_secs > 0 && isfinite(t->cores_had))
        snprintf(b + k, cap - (size_t)k, "; more cores than the %s it had would save %s at most%s",
                 cores_text(t->cores_had, had, sizeof had), secs_text(t->wait_secs, save, sizeof save),
                 t->wait_from && strcmp(t->wait_from, "machine") == 0 ? " (the machine's waits: fewer)" : "");
}

static void pressure_note(notes *ns, const rt_summary *s, const rt_recommendation *rec)
{
    const struct {
        const char *what;
        double pct, from;
    } r[] = {{"CPU", s->pressure_cpu_some_pct.mean, PRESSURE_CPU_PCT},
             {"memory", s->pressure_memory_some_pct.mean, PRESSURE_MEMORY_PCT},
             {"I/O", s->pressure_io_some_pct.mean, PRESSURE_IO_PCT}};
    char text[200] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        if (!(r[i].pct >= r[i].from))
            continue;
        int k = snprintf(text + len, sizeof text - len, "%s%s %.0f%%", len ? ", for " : "", r[i].what, r[i].pct);
        if (k > 0 && (size_t)k < sizeof text - len)
            len += (size_t)k;
    }
    char ask[240] = "";
    if (s->has_process && r[0].pct >= r[0].from)
        waits_and_ask(s, rec, ask, sizeof ask);
    if (len)
        add(ns, RT_NOTE_PRESSURE, "tasks waited for %s of the time (pressure stalls)%s", text, ask);
}

/* The run shared its machine: the CPU answer's times are the job's own. */
static void shared_note(notes *ns, const rt_summary *s)
{
    char words[96];
    if (s->has_process && rt_cores_shared_words(s->cores, words, sizeof words) > 0)
        add(ns, RT_NOTE_CPU_SHARED, "%s beside the job: the CPU answer's times are the job's own (its waits for that "
                                    "work left out), a quiet machine may be faster",
            words);
}

/* Processes of the job ignored SIGCHLD (the kernel reaped their children without a wait) where no
 * exit records counted those children's CPU (not root) and no group of the job's own did. */
static void unwaited_note(notes *ns, const rt_summary *s)
{
    if (!s->has_process || !(s->process_unwaited_parents > 0) || isfinite(s->process_exits_counted) ||
        s->process_cgroup_exclusive == 1)
        return;
    char every[32] = "";
    if (s->samples > 0 && s->duration_secs > 0)
        secs_text(s->duration_secs / (double)s->samples, every, sizeof every);
    add(ns, RT_NOTE_CPU_UNWAITED,
        "the CPU is a lower bound: %.0f process%s of the job ignored SIGCHLD, so the kernel reaps %s children "
        "without a wait: such a child counts to its last sample, one born and gone between two samples%s%s%s not "
        "at all (as root the kernel's exit records count them)",
        s->process_unwaited_parents, s->process_unwaited_parents == 1 ? "" : "es",
        s->process_unwaited_parents == 1 ? "its" : "their", every[0] ? " (about " : "", every, every[0] ? " apart)" : "");
}

static void left_note(notes *ns, const rt_summary *s)
{
    char a[32], held[64] = "";
    if (s->left_behind > 0 && isfinite(s->left_behind_mib))
        snprintf(held, sizeof held, ", holding %s at the end", mib_text(s->left_behind_mib, a, sizeof a));
    if (s->has_process && s->left_behind > 0)
        add(ns, RT_NOTE_LEFT_BEHIND,
            "%.0f process%s of the job still ran after the command exited (left behind%s): what %s used after it "
            "is in no figure, and the ask covers the command only; --wait-all waits for %s and counts it",
            s->left_behind, s->left_behind == 1 ? "" : "es", held, s->left_behind == 1 ? "it" : "they",
            s->left_behind == 1 ? "it" : "them");
}

/* Phase marks refused (how many and why), and phases still open at the end (closed there). */
static void phase_note(notes *ns, const rt_summary *s)
{
    const rt_phase_counts *c = s->phase_counts;
    if (!c)
        return;
    const struct {
        uint64_t n;
        const char *why;
    } k[] = {{c->unknown_stop, "a stop with no open phase of its name"},
             {c->too_long, "a line over 512 bytes"},
             {c->malformed, "malformed (bad verb or name)"},
             {c->flood, "over the rate limit"},
             {c->dropped, "no room to queue"},
             {c->too_many_names, "past 1024 names"},
             {c->too_deep, "256 phases already open"},
             {c->refused, "a refused connection"}};
    char text[320];
    size_t len = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        if (!k[i].n)
            continue;
        total += k[i].n;
        int w = snprintf(text + len, sizeof text - len, "%s%llu %s", len ? ", " : "", (unsigned long long)k[i].n,
                         k[i].why);
        if (w > 0)
            len += (size_t)w < sizeof text - len ? (size_t)w : sizeof text - len - 1;
    }
    if (total && c->unterminated)
        add(ns, RT_NOTE_PHASE_MARKS, "%llu phase mark%s refused (%s); %llu phase%s left open at the end, closed there",
            (unsigned long long)total, total == 1 ? "" : "s", text, (unsigned long long)c->unterminated,
            c->unterminated == 1 ? "" : "s");
    else if (total)
        add(ns, RT_NOTE_PHASE_MARKS, "%llu phase mark%s refused (%s)", (unsigned long long)total,
            total == 1 ? "" : "s", text);
    else if (c->unterminated)
        add(ns, RT_NOTE_PHASE_MARKS, "%llu phase%s left open at the end, closed there",
            (unsigned long long)c->unterminated, c->unterminated == 1 ? "" : "s");
}

/* The clocks (docs/answers.md "Clocks"): the wall clock's steps, the sampling's gaps; first, as
 * they qualify every figure of the run. */
static void clock_notes(notes *ns, const rt_summary *s)
{
    double big = s->clock_step_largest_secs;
    const char *way = big < 0 ? "back" : "forward";
    const char *rest = "the samples' timestamps follow it; the duration, and the end as the start plus it, are "
                       "the monotonic clock's";
    if (s->clock_steps == 1)
        add(ns, RT_NOTE_CLOCK_JUMP, "the wall clock was set %s %.1f s during the run: %s", way, fabs(big), rest);
    else if (s->clock_steps > 1)
        add(ns, RT_NOTE_CLOCK_JUMP, "the wall clock was set %.0f times during the run (the largest %s %.1f s, %+.1f s "
            "in all): %s", s->clock_steps, way, fabs(big), s->clock_step_secs, rest);
    const char *why = "stopped, frozen or starved, or the machine suspended";
    if (s->sampling_gaps == 1)
        add(ns, RT_NOTE_SAMPLING_GAP, "the tracker took no sample for %.1f s (%s): that stretch's figures are its "
            "averages", s->sampling_gap_secs, why);
    else if (s->sampling_gaps > 1)
        add(ns, RT_NOTE_SAMPLING_GAP, "the tracker took no sample %.0f times, %.1f s in all, the longest %.1f s (%s): "
            "those stretches' figures are their averages", s->sampling_gaps, s->sampling_gap_secs,
            s->sampling_gap_longest_secs, why);
}

size_t rt_summary_notes(const rt_summary *s, const rt_notes_options *opts, rt_note *out, size_t cap)
{
    if (!s || !out)
        return 0;
    rt_notes_options o = RT_NOTES_OPTIONS_INIT;
    if (opts && rt_struct_copy(&o, sizeof o, opts) < 0)
        opts = NULL;
    notes ns = {out, cap, 0};
    rt_recommendation rec = {.struct_size = sizeof rec};
    if (!s->has_process || rt_recommend(&s, 1, &rec) != RT_OK)
        rec.cpu = 0, rec.memory_mib = 0;
    clock_notes(&ns, s);
    oom_note(&ns, s, s->has_process ? &rec : NULL);
    if (s->has_process) {
        rt_mem_floor f;
        rt_mem_floor_of(&s, 1, 0, &f);
        memory_high_note(&ns, &f, &rec);
    }
    if (!time_ended_note(&ns, s, &rec))
        time_limit_note(&ns, s);
    accounting_note(&ns, s, opts ? &o : NULL);
    if (s->has_process) {
        memory_notes(&ns, s, &rec);
        reread_note(&ns, s, &rec);
        cpu_request_note(&ns, s, &rec);
    }
    gpu_notes(&ns, s);
    throttle_note(&ns, s);
    pressure_note(&ns, s, &rec);
    shared_note(&ns, s);
    unwaited_note(&ns, s);
    left_note(&ns, s);
    phase_note(&ns, s);
    return ns.n;
}

/* Of several runs with tables, how many ask for the cores of the recommendation on their own
 * (the same slowdown bound): the ask covers the slowest, and a person sees whether the runs
 * agree. */
static void runs_agree(notes *ns, const rt_summary *const *runs, size_t n, const rt_recommendation *rec)
{
    if (n < 2 || !rec->cpu_basis || strcmp(rec->cpu_basis, "mean") == 0)
        return;
    rt_recommend_options o = RT_RECOMMEND_OPTIONS_INIT;
    o.max_slowdown_pct = rec->max_slowdown_pct;
    size_t same = 0, fewer = 0;
    for (size_t i = 0; i < n; i++) {
        rt_recommendation own = RT_RECOMMENDATION_INIT;
        if (rt_recommend_with(&o, &runs[i], 1, &own) != RT_OK || !own.cpu_basis || strcmp(own.cpu_basis, "mean") == 0)
            return; /* a run without a table: the ask is the mean rule's */
        same += own.cpu == rec->cpu;
        fewer += own.cpu < rec->cpu;
    }
    if (same == n)
        add(ns, RT_NOTE_CPU_RUNS, "all %zu runs ask for %lld core%s on their own (predicted within %.0f%% of each run)",
            n, (long long)rec->cpu, rec->cpu == 1 ? "" : "s", rec->max_slowdown_pct);
    else
        add(ns, RT_NOTE_CPU_RUNS,
            "%zu of the %zu runs ask for %lld core%s on their own, %zu for fewer: the ask keeps every run within %.0f%% "
            "of its own duration",
            same, n, (long long)rec->cpu, rec->cpu == 1 ? "" : "s", fewer, rec->max_slowdown_pct);
}

/* The runs stopped at a limit: of the OOM-killed runs, and of those held at their memory.high,
 * the one whose floor is the highest (the ask's), where it was stopped and what the ask does
 * about it; of the runs that ran to their time limit, the longest. */
static void stopped_notes(notes *ns, const rt_summary *const *runs, size_t n, const rt_recommendation *rec)
{
    rt_mem_floor top[3] = {{.why = RT_FLOOR_NONE}, {.why = RT_FLOOR_NONE}, {.why = RT_FLOOR_NONE}};
    const rt_summary *time_run = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!runs[i])
            continue;
        rt_mem_floor f;
        rt_mem_floor_of(runs, n, i, &f);
        rt_mem_floor *t = &top[f.why];
        if (f.why != RT_FLOOR_NONE && (t->why == RT_FLOOR_NONE || f.floor_mib > t->floor_mib ||
                                       (isnan(t->floor_mib) && !isnan(f.floor_mib))))
            *t = f;
        double secs = rt_time_floor_of(runs[i]);
        if (!isnan(secs) && (!time_run || secs > rt_time_floor_of(time_run)))
            time_run = runs[i];
    }
    const rt_mem_floor *k = &top[RT_FLOOR_OOM];
    if (k->why == RT_FLOOR_OOM) {
        char a[32], b[32], at[96] = "", w[160];
        if (!isnan(k->limit_mib) && !isnan(k->reached_mib))
            snprintf(at, sizeof at, "at its %s limit (peak %s)", mib_text(k->limit_mib, a, sizeof a),
                     mib_text(k->reached_mib, b, sizeof b));
        else if (!isnan(k->limit_mib))
            snprintf(at, sizeof at, "at its %s limit", mib_text(k->limit_mib, a, sizeof a));
        else
            snprintf(at, sizeof at, "at %s with no memory limit of its own", mib_text(k->reached_mib, a, sizeof a));
        if (isnan(k->floor_mib))
            snprintf(w, sizeof w, "asking for %s", rec->memory_mib == RT_NULL_I64 ? "?" : mib_text((double)rec->memory_mib, b, sizeof b));
        else
            learn_words(k, rec, isnan(k->limit_mib) ? "that" : "the limit", w, sizeof w);
        add(ns, RT_NOTE_OOM_KILLED, "the job was OOM-killed %s: %s", at, w);
    }
    memory_high_note(ns, &top[RT_FLOOR_HIGH], rec);
    if (time_run)
        time_ended_note(ns, time_run, rec);
}

/* The ask raised to keep the files a run read back (rt_recommendation.memory_reread_files_mib):
 * which run, how much it re-read under which limit. */
static void reread_ask_note(notes *ns, const rt_summary *const *runs, size_t n, const rt_recommendation *rec)
{
    if (!isfinite(rec->memory_reread_files_mib))
        return;
    for (size_t i = 0; i < n; i++) {
        rt_rereads rr;
        if (!runs[i] || !rt_rereads_of(runs[i], runs[i]->memory_need.mib, &rr) || !rr.large ||
            rr.files_mib != rec->memory_reread_files_mib)
            continue;
        char a[32], b[32], c[32], d[32];
        add(ns, RT_NOTE_MEMORY_REREAD,
            "%s read back %s of files its %s %s had evicted: the ask (%s) keeps them cached (%s of files at most, "
            "above the need)",
            n == 1 ? "the run" : "a run", mib_text(rr.reread_mib, a, sizeof a), mib_text(rr.limit_mib, b, sizeof b),
            limit_word(runs[i], &rr), rec->memory_mib == RT_NULL_I64 ? "?" : mib_text((double)rec->memory_mib, c, sizeof c),
            mib_text(rr.files_mib, d, sizeof d));
        return;
    }
}

size_t rt_recommend_notes(const rt_summary *const *runs, size_t n, const rt_recommendation *rec, rt_note *out,
                          size_t cap)
{
    if (!runs || !rec || !out || rec->struct_size < sizeof *rec)
        return 0;
    notes ns = {out, cap, 0};
    char a[32];
    if (n < 3)
        add(&ns, RT_NOTE_FEW_RUNS,
            "based on %zu run%s: %.0f%% headroom (10%% + 10%% / runs: less as more runs agree)", n, n == 1 ? "" : "s",
            rec->headroom_pct);
    if (rec->memory_source == RT_NEED_UNKNOWN)
        add(&ns, RT_NOTE_MEMORY_UNKNOWN, "memory unknown: no run has a memory figure%s",
            rec->memory_mib != RT_NULL_I64 ? " (the figure is the floor an OOM kill set)" : "");
    else if (rec->memory_sampled)
        sampled_note(&ns, rec->memory_need_mib, rec->memory_source, false, runs, n);
    size_t left = 0; /* runs that left processes running: what those used later is in no run */
    for (size_t i = 0; i < n; i++)
        left += runs[i] && runs[i]->has_process && runs[i]->left_behind > 0;
    if (left == 1 && n == 1)
        add(&ns, RT_NOTE_LEFT_BEHIND,
            "the run left processes running after its command exited: the ask covers the command only, not what "
            "they used after it (run with --wait-all to count them in)");
    else if (left)
        add(&ns, RT_NOTE_LEFT_BEHIND,
            "%zu of the %zu runs left processes running after the command exited: the ask covers the command only, "
            "not what they used after it (run with --wait-all to count them in)",
            left, n);
    stopped_notes(&ns, runs, n, rec);
    reread_ask_note(&ns, runs, n, rec);
    if (!isnan(rec->cpu_quota_cores))
        add(&ns, RT_NOTE_CPU_THROTTLED,
            "the CPU quota of %s core%s held the job back: throttled in %.0f%% of periods; asking for %lld",
            cores_text(rec->cpu_quota_cores, a, sizeof a), plural(rec->cpu_quota_cores), rec->cpu_throttled_pct,
            (long long)rec->cpu);
    runs_agree(&ns, runs, n, rec);
    return ns.n;
}
