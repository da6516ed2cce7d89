/* marks.c - the phase marks of a tracked command (docs/contracts.md §18): the listener made
 * before the command starts, in a directory of the user's alone ($XDG_RUNTIME_DIR/resource-tracker,
 * else /tmp/resource-tracker-UID, checked as the spill directory is) or else in the abstract
 * namespace, its address put in TRACKER_PHASE_SOCKET for the command (replacing an outer
 * tracker's: the inner one owns its job's marks); drains of the listener, each with one peek
 * of the tree's counters shared by its marks, handed to the pipeline with the listener's
 * refusals; and the run's last word on refused marks. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "status.h"
#include "marks.h"

#define BATCH 64 /* marks one drain takes (a flood never starves the clock) */

typedef struct held {
    rt_phase_mark m;
    char name[256];
} held;

struct cli_marks {
    rt_phase_listener *l;
    char addr[160];
    char *outer;            /* TRACKER_PHASE_SOCKET as it was (NULL: unset) */
    held batch[BATCH];
    size_t n;
    rt_phase_counts forwarded; /* the listener's refusals handed to the pipeline so far */
    double last_secs;          /* the newest mark's time: marks go in time order */
};

/* Whether dir is a directory of ours alone (made 0700 when missing): no link, owned by the euid,
 * no access for the group or others. */
static bool private_dir(const char *dir)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return false;
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 077) == 0;
}

/* The socket's address into m->addr: a path in a private directory, else abstract. */
static void choose_address(cli_marks *m)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    char dir[128];
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf(dir, sizeof dir, "%s/resource-tracker", xdg);
    else
        n = snprintf(dir, sizeof dir, "/tmp/resource-tracker-%lu", (unsigned long)geteuid());
    if (n > 0 && (size_t)n < sizeof dir && private_dir(dir)) {
        n = snprintf(m->addr, sizeof m->addr, "%s/phase-%ld.sock", dir, (long)getpid());
        if (n > 0 && (size_t)n < 108) /* sun_path */
            return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(m->addr, sizeof m->addr, "@resource-tracker-%ld-%08lx", (long)getpid(),
             (unsigned long)(ts.tv_nsec ^ (ts.tv_sec << 20)) & 0xffffffffUL);
}

static rt_phase_listener *listen_at(const char *addr)
{
    rt_phase_listener_options lo = RT_PHASE_LISTENER_OPTIONS_INIT;
    lo.address = addr;
    rt_phase_listener *l = NULL;
    return rt_phase_listener_new(&lo, &l) == RT_OK ? l : NULL;
}

cli_marks *cli_marks_start(void)
{
    cli_marks *m = calloc(1, sizeof *m);
    if (!m) {
        cli_say("warning: no phase marks for this run (out of memory)");
        return NULL;
    }
    const char *outer = getenv("TRACKER_PHASE_SOCKET");
    if (outer && !(m->outer = strdup(outer))) {
        free(m);
        cli_say("warning: no phase marks for this run (out of memory)");
        return NULL;
    }
    choose_address(m);
    m->l = listen_at(m->addr);
    if (!m->l && m->addr[0] != '@') { /* the directory would not do: the abstract namespace */
        snprintf(m->addr, sizeof m->addr, "@resource-tracker-%ld-%lx", (long)getpid(), (unsigned long)time(NULL));
        m->l = listen_at(m->addr);
    }
    if (!m->l || setenv("TRACKER_PHASE_SOCKET", m->addr, 1) < 0) {
        cli_say("warning: no phase marks for this run (cannot listen: %s)", strerror(errno));
        rt_phase_listener_free(m->l);
        free(m->outer);
        free(m);
        return NULL;
    }
    return m;
}

int cli_marks_fd(const cli_marks *m)
{
    return m ? rt_phase_listener_poll_fd(m->l) : -1;
}

const char *cli_marks_address(const cli_marks *m)
{
    return m ? m->addr : NULL;
}

static void collect(void *user, const rt_phase_mark *mk)
{
    cli_marks *m = user;
    if (m->n >= BATCH)
        return;
    held *h = &m->batch[m->n++];
    h->m = *mk;
    snprintf(h->name, sizeof h->name, "%s", mk->name);
    h->m.name = h->name;
}

/* Hands the listener's new refusals to the pipeline. */
static void forward_refusals(cli_marks *m, rt_pipeline *pipe)
{
    rt_phase_counts c;
    if (rt_phase_listener_counts(m->l, &c, sizeof c) != RT_OK)
        return;
    rt_pipeline_mark_refused(pipe, RT_PHASE_REFUSED_TOO_LONG, c.too_long - m->forwarded.too_long);
    rt_pipeline_mark_refused(pipe, RT_PHASE_REFUSED_MALFORMED, c.malformed - m->forwarded.malformed);
    rt_pipeline_mark_refused(pipe, RT_PHASE_REFUSED_FLOOD, c.flood - m->forwarded.flood);
    rt_pipeline_mark_refused(pipe, RT_PHASE_REFUSED_CONNECTION, c.refused - m->forwarded.refused);
    m->forwarded = c;
}

/* One drain of at most BATCH lines; returns how many marks came. */
static size_t drain_once(cli_marks *m, rt_sampler *s, rt_pipeline *pipe, double not_before)
{
    m->n = 0;
    size_t got = rt_phase_listener_drain(m->l, BATCH, collect, m);
    if (m->n > 0) {
        /* one reading of the tree for the whole batch: each mark gets it, and its lag */
        rt_phase_mark probe = RT_PHASE_MARK_INIT;
        probe.timestamp_secs = cli_real_secs();
        bool read = s && rt_sampler_peek(s, &probe) == RT_OK;
        double read_at = probe.timestamp_secs + (read && probe.reading_lag_secs >= 0 ? probe.reading_lag_secs : 0);
        if (not_before < m->last_secs)
            not_before = m->last_secs;
        for (size_t i = 0; i < m->n; i++) {
            rt_phase_mark *mk = &m->batch[i].m;
            if (mk->timestamp_secs < not_before) /* in time order, never before the last sample */
                mk->timestamp_secs = not_before;
            if (mk->timestamp_secs > read_at)
                mk->timestamp_secs = read_at;
            not_before = mk->timestamp_secs;
            if (read) {
                mk->cpu_secs_total = probe.cpu_secs_total;
                mk->cpu_source = probe.cpu_source;
                mk->read_bytes_total = probe.read_bytes_total;
                mk->write_bytes_total = probe.write_bytes_total;
                mk->rss_mib = probe.rss_mib;
                mk->memory_peak_mib = i == 0 ? probe.memory_peak_mib : RT_PHASE_NAN;
                mk->reading_lag_secs = read_at - mk->timestamp_secs;
            }
            if (pipe)
                rt_pipeline_mark(pipe, mk); /* a refusal is counted there */
            cli_status_mark(mk); /* the log view's next line says it */
        }
        m->last_secs = not_before;
    }
    if (pipe)
        forward_refusals(m, pipe);
    return got;
}

void cli_marks_drain(cli_marks *m, rt_sampler *s, rt_pipeline *pipe, double not_before, size_t most)
{
    if (!m)
        return;
    struct pollfd p = {.fd = rt_phase_listener_poll_fd(m->l), .events = POLLIN};
    size_t turns = 0;
    do
        drain_once(m, s, pipe, not_before);
    while (++turns < most && poll(&p, 1, 0) == 1);
}

void cli_marks_say(const rt_pipeline *pipe)
{
    rt_phase_counts c;
    if (!pipe || rt_pipeline_phase_counts(pipe, &c, sizeof c) != RT_OK)
        return;
    struct {
        uint64_t n;
        const char *one, *many;
    } parts[] = {
        {c.unknown_stop, "stop of no open phase", "stops of no open phase"},
        {c.unterminated, "phase open at the end", "phases open at the end"},
        {c.too_long, "line too long", "lines too long"},
        {c.malformed, "malformed", "malformed"},
        {c.flood, "dropped (flood)", "dropped (flood)"},
        {c.dropped, "dropped (queue full)", "dropped (queue full)"},
        {c.too_many_names, "past 1024 names", "past 1024 names"},
        {c.too_deep, "past 256 open phases", "past 256 open phases"},
        {c.refused, "connection refused", "connections refused"},
    };
    char line[512];
    size_t n = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (parts[i].n == 0)
            continue;
        int w = snprintf(line + n, sizeof line - n, "%s%llu %s", n ? ", " : "", (unsigned long long)parts[i].n,
                         parts[i].n == 1 ? parts[i].one : parts[i].many);
        if (w < 0 || (size_t)w >= sizeof line - n)
            break;
        n += (size_t)w;
    }
    if (n > 0)
        cli_say("warning: phase marks: %s", line);
}

void cli_marks_free(cli_marks *m, bool restore)
{
    if (!m)
        return;
    rt_phase_listener_free(m->l);
    if (restore) {
        if (m->outer)
            setenv("TRACKER_PHASE_SOCKET", m->outer, 1);
        else
            unsetenv("TRACKER_PHASE_SOCKET");
    }
    free(m->outer);
    free(m);
}
