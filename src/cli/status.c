/* status.c - the human view of a tracking run on the terminal, and the log view's lines
 * (status.h): the view a run gets, the start line (what is tracked, the interval, where samples
 * go, how to stop; broken at the terminal's width), the log view's progress line a minute and at
 * each phase mark, and the status
 * line (elapsed time, cores and memory now and at their peak, GPU once one was seen) redrawn at
 * most once a second from the sample just taken: no file read, no allocation (and not while a
 * program of the job has the terminal in raw or no-echo mode: an editor's screen is left alone).
 * As apt's progress bar: the terminal's last row is kept for the line (a scroll region of the
 * rows above it, where the job's own output scrolls, never mixed with the line), each drawing
 * one write (the kernel keeps a write to a terminal whole: the job's output comes before or
 * after it, never inside); the end gives the row back. A terminal of under 4 rows gets the line
 * redrawn in place ("\r", erase), erased before the tool's other lines (status_say: cli_say's
 * taker while the line is live, say.h). The summary comes after cli_status_end. */
#define _GNU_SOURCE
#include "status.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "say.h"
#include "settings.h"

#define ERASE "\r\033[K" /* to the line's start, and erase to its end */
#define REDRAW_SECS 1.0
#define LOG_SECS 60.0 /* the log view's progress line: at most once a minute, and at each phase */

static bool status_say(const char *line, size_t n);

/* The clock of the line's drawings and elapsed time (cli_status_test_clock: the unit tests'). */
static double (*status_clock)(void) = cli_mono_secs;

void cli_status_test_clock(double (*now)(void))
{
    status_clock = now ? now : cli_mono_secs;
}

/* The one status line of the process (one run per process). */
static struct {
    pthread_mutex_t mu; /* the terminal's line: drawn, and the tool's lines that erase it */
    bool live;          /* drawn on each second's sample */
    bool log;           /* the log view: a line of its own a minute and at each phase mark */
    char marks[240];    /* the log view: " | phase load ended, train started", the marks since the
                         * last line */
    bool drawn;         /* something of it is on the terminal now */
    int fd;             /* the terminal, written without blocking (a stopped terminal never holds
                         * up sampling: a line that cannot go is skipped) */
    bool job;           /* figures of the tracked tree, else of the machine */
    double start, next; /* CLOCK_MONOTONIC: the start, the next drawing's earliest time */
    double cores_peak, mib_peak;
    bool gpu_seen;
    int rows;           /* the terminal's rows when its last row was kept for the line; 0: none kept
                         * (drawn in place) */
    bool taken;         /* a program of the job had the screen at the last drawing's time */
    char line[512];
    char out[700];      /* a drawing as written: the moves around the line */
} st = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

#define SAVE "\0337"    /* DECSC: the cursor (and its attributes) saved */
#define RESTORE "\0338" /* DECRC */

cli_view cli_view_resolve(const cli_options *o)
{
    if (o->quiet)
        return CLI_VIEW_SAMPLES;
    if (o->view != CLI_VIEW_AUTO)
        return o->view;
    bool format_given = cli_setting_from(o, cli_setting_by_flag("format")) != CLI_FROM_DEFAULT;
    if (!o->output && format_given) /* samples asked for, on stderr */
        return CLI_VIEW_SAMPLES;
    if (isatty(STDERR_FILENO)) /* human, unless the samples come to the terminal on stdout */
        return o->output && strcmp(o->output, "-") == 0 && isatty(STDOUT_FILENO) ? CLI_VIEW_SAMPLES : CLI_VIEW_HUMAN;
    return cli_log_place(NULL) ? CLI_VIEW_LOG : CLI_VIEW_SAMPLES;
}

int cli_term_width(int fd)
{
    struct winsize ws;
    if (!isatty(fd) || ioctl(fd, TIOCGWINSZ, &ws) < 0 || ws.ws_col == 0)
        return 0;
    return ws.ws_col;
}

/* The command as typed (an argument with blanks quoted), on one line (control characters
 * shown as spaces), cut to about 60 characters (at a character's start), into buf. */
static void command_text(char *const *argv, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; argv[i] && at < cap; i++) {
        bool quote = strpbrk(argv[i], " \t\n'") != NULL || !argv[i][0];
        int n = snprintf(buf + at, cap - at, "%s%s%s%s", i ? " " : "", quote ? "\"" : "", argv[i], quote ? "\"" : "");
        if (n < 0)
            break;
        at += (size_t)n;
    }
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = ' ';
    size_t cut = 57;
    if (at > 60 && cap > 64) {
        while (cut > 0 && ((unsigned char)buf[cut] & 0xC0) == 0x80)
            cut--;
        memcpy(buf + cut, "...", 4);
    }
}

void cli_status_start(const cli_options *o, cli_view view, bool live)
{
    char what[200], to[600], cmd[128], said[160];
    bool log = view == CLI_VIEW_LOG;
    if (o->command) {
        command_text(o->command, cmd, sizeof cmd);
        snprintf(what, sizeof what, "tracking `%s` and the processes it starts", cmd);
    } else if (o->pid) {
        snprintf(what, sizeof what, "tracking PID %ld's process tree", o->pid);
    } else {
        snprintf(what, sizeof what, "tracking the whole machine (no command given)");
    }
    if (!o->output)
        snprintf(to, sizeof to, "samples not kept (-o FILE keeps them)");
    else if (strcmp(o->output, "-") == 0)
        snprintf(to, sizeof to, "samples to stdout");
    else
        snprintf(to, sizeof to, "samples to %.500s%s", o->output, o->output_gzip ? " (gzipped at the end)" : "");
    const char *how = o->command ? "Ctrl-C stops the command" : o->pid ? "Ctrl-C stops tracking and prints the summary"
                                                                       : "Ctrl-C stops and prints the summary";
    if (log) {
        const char *place = cli_log_place(NULL);
        how = "a line a minute and at each phase, the answer at the end";
        if (place) {
            snprintf(said, sizeof said, "%s (the log of %s: --view samples writes the samples here)", how, place);
            how = said;
        }
    }
    char line[1200], wrapped[1400];
    snprintf(line, sizeof line, "%s, every %.10g s; %s; %s", what, o->interval, to, how);
    /* broken at the terminal's width at spaces, after "resource-tracker: " (a log is left to
     * its viewer) */
    rt_text_wrap(line, 18, 2, live ? (size_t)cli_term_width(STDERR_FILENO) : 0, wrapped, sizeof wrapped);
    cli_say("%s", wrapped);
    pthread_mutex_lock(&st.mu);
    st.job = o->command || o->pid;
    st.start = st.next = status_clock();
    st.cores_peak = st.mib_peak = NAN; /* none yet */
    st.gpu_seen = st.drawn = false;
    if (log) {
        st.log = true;
        st.next = st.start + LOG_SECS;
        st.marks[0] = '\0';
    }
    pthread_mutex_unlock(&st.mu);
    if (!live)
        return;
    /* a descriptor of the terminal's own that does not block; else stderr itself */
    int fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    pthread_mutex_lock(&st.mu);
    st.fd = fd >= 0 ? fd : STDERR_FILENO;
    st.live = true;
    pthread_mutex_unlock(&st.mu);
    cli_say_install(CLI_SAY_STATUS, status_say);
}

/* A memory figure in MiB as "512 MiB" or "1.2 GiB"; "-" when unknown. */
static const char *mem_text(double mib, char *buf, size_t cap)
{
    if (!isfinite(mib))
        snprintf(buf, cap, "-");
    else if (mib < 10)
        snprintf(buf, cap, "%.1f MiB", mib);
    else if (mib < 1024)
        snprintf(buf, cap, "%.0f MiB", mib);
    else
        snprintf(buf, cap, "%.1f GiB", mib / 1024);
    return buf;
}

/* A number of cores as "1.25"; "-" when unknown. */
static const char *cores_text(double cores, char *buf, size_t cap)
{
    if (isfinite(cores))
        snprintf(buf, cap, "%.2f", cores);
    else
        snprintf(buf, cap, "-");
    return buf;
}

/* The terminal's columns (80 when it does not say) and rows (0 when it does not say): one query. */
static void term_size(int fd, int *cols, int *rows)
{
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) < 0)
        ws.ws_col = ws.ws_row = 0;
    *cols = ws.ws_col ? ws.ws_col : 80;
    *rows = ws.ws_row;
}

/* " | GPU 45%, 2.1 GiB": the job's GPU use (p; NULL: the machine's, the GPUs' mean utilization
 * and their memory used) into buf; " | GPU -" without a figure (no made-up zero). */
static void gpu_text(const rt_process *p, const rt_sample *s, char *buf, size_t cap)
{
    double util = NAN, vram = NAN;
    if (p) {
        util = p->gpu_utilization_pct;
        if (p->gpu_vram_used_bytes != RT_NULL_U64)
            vram = (double)p->gpu_vram_used_bytes;
    } else if (s->gpu_count > 0) {
        util = vram = 0;
        for (size_t i = 0; i < s->gpu_count; i++) {
            util += s->gpu[i]->utilization_pct / (double)s->gpu_count;
            vram += s->gpu[i]->vram_used_bytes == RT_NULL_U64 ? NAN : (double)s->gpu[i]->vram_used_bytes;
        }
    }
    char v[32];
    if (isfinite(util))
        snprintf(buf, cap, " | GPU %.0f%%, %s", util, mem_text(vram / 1048576.0, v, sizeof v));
    else
        snprintf(buf, cap, " | GPU -");
}

/* Keeps the last of rows rows for the line: a scroll region of the rows above (setting it moves
 * the cursor home: saved and restored around it). A newline first, then the cursor back up: a
 * cursor on the last row would be left outside the region, where output no longer scrolls. */
static void keep_last_row(int rows)
{
    char b[64];
    int n = snprintf(b, sizeof b, "\n" SAVE "\033[1;%dr" RESTORE "\033[1A", rows - 1);
    if (n > 0 && write(st.fd, b, (size_t)n) == n)
        st.rows = rows;
}

/* Whether a program of the job has the terminal to itself now (an editor, a pager, a password
 * prompt: line editing or echo turned off): then no status line is drawn into its screen. */
static bool screen_taken(int fd)
{
    struct termios t;
    return tcgetattr(fd, &t) == 0 && (!(t.c_lflag & ICANON) || !(t.c_lflag & ECHO));
}

void cli_status_mark(const rt_phase_mark *m)
{
    if (!st.log || !m || !m->name || (m->kind != RT_PHASE_START && m->kind != RT_PHASE_STOP))
        return;
    pthread_mutex_lock(&st.mu);
    size_t at = strlen(st.marks);
    if (at + 1 < sizeof st.marks) {
        int n = snprintf(st.marks + at, sizeof st.marks - at, "%s%.80s %s", at ? ", " : " | phase ", m->name,
                         m->kind == RT_PHASE_START ? "started" : "ended");
        if (n > 0 && at + (size_t)n >= sizeof st.marks) /* more than fit: said so */
            memcpy(st.marks + sizeof st.marks - 4, "...", 4);
    }
    pthread_mutex_unlock(&st.mu);
}

void cli_status_sample(const rt_sample *s)
{
    /* read without the lock: set before sampling starts, cleared by this thread */
    if (!st.live && !st.log)
        return;
    const rt_process *p = st.job ? s->process : NULL;
    double cores = p ? p->cores_used : s->cpu ? s->cpu->utilization_pct : NAN;
    double mib = p ? (isfinite(p->pss_mib) ? p->pss_mib : p->rss_mib) : s->memory ? s->memory->used_mib : NAN;
    if (isfinite(cores) && !(cores <= st.cores_peak))
        st.cores_peak = cores;
    if (isfinite(mib) && !(mib <= st.mib_peak))
        st.mib_peak = mib;
    if (s->gpu_count > 0)
        st.gpu_seen = true;
    double now = status_clock();
    char phase[sizeof st.marks] = "";
    if (st.log) { /* the marks since the last line, taken */
        pthread_mutex_lock(&st.mu);
        memcpy(phase, st.marks, sizeof phase);
        st.marks[0] = '\0';
        pthread_mutex_unlock(&st.mu);
    }
    if (now < st.next && !phase[0])
        return;
    st.next = now + (st.log ? LOG_SECS : REDRAW_SECS);
    long secs = (long)(now - st.start);
    char mnow[32], mpeak[32], gpu[64] = "";
    if (st.gpu_seen)
        gpu_text(p, s, gpu, sizeof gpu);
    char cnow[24], cpeak[24], when[32];
    if (secs < 3600)
        snprintf(when, sizeof when, "%ld:%02ld", secs / 60, secs % 60);
    else
        snprintf(when, sizeof when, "%ld:%02ld:%02ld", secs / 3600, secs / 60 % 60, secs % 60);
    int n = snprintf(st.line, sizeof st.line, "resource-tracker %s%s | %s %s cores, %s | peak %s cores, %s%s", when,
                     phase, st.job ? "job" : "machine", cores_text(cores, cnow, sizeof cnow), mem_text(mib, mnow, sizeof mnow),
                     cores_text(st.cores_peak, cpeak, sizeof cpeak), mem_text(st.mib_peak, mpeak, sizeof mpeak), gpu);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof st.line ? (size_t)n : sizeof st.line - 2;
    if (st.log) { /* a line of its own in the log, whole (one write) */
        st.line[len++] = '\n';
        if (write(STDERR_FILENO, st.line, len) < 0) {
            /* the log gone: nothing to report it to */
        }
        return;
    }
    pthread_mutex_lock(&st.mu);
    int cols, rows;
    term_size(st.fd, &cols, &rows);
    /* shorter than the terminal: a line as wide as it would wrap (or scroll) on some terminals */
    if (len > (size_t)(cols - 1))
        len = (size_t)(cols - 1);
    if (screen_taken(st.fd)) {
        st.taken = true;
        pthread_mutex_unlock(&st.mu);
        return;
    }
    if (rows >= 4 && (rows != st.rows || st.taken)) /* first, resized, or after an editor's screen */
        keep_last_row(rows);
    st.taken = false;
    int m;
    if (st.rows >= 4 && st.rows == rows) /* on the kept row; the cursor, where the job's output goes, as it was */
        m = snprintf(st.out, sizeof st.out, SAVE "\033[%d;1H\033[K%.*s" RESTORE, rows, (int)len, st.line);
    else /* in place */
        m = snprintf(st.out, sizeof st.out, ERASE "%.*s", (int)len, st.line);
    if (m > 0 && (size_t)m < sizeof st.out && write(st.fd, st.out, (size_t)m) > 0)
        st.drawn = true;
    pthread_mutex_unlock(&st.mu);
}

void cli_status_end(void)
{
    pthread_mutex_lock(&st.mu);
    if (st.live && st.rows >= 4) {
        /* the kept row erased and given back (the whole screen scrolls again) */
        char b[64];
        int n = snprintf(b, sizeof b, SAVE "\033[%d;1H\033[2K\033[r" RESTORE, st.rows);
        if (n > 0 && write(st.fd, b, (size_t)n) < 0) {
            /* a terminal gone: nothing to give back */
        }
        st.rows = 0;
    } else if (st.live && st.drawn && write(st.fd, ERASE, sizeof ERASE - 1) < 0) {
        /* nothing more to do: the summary follows on a line of its own anyway */
    }
    st.drawn = false;
    st.live = false;
    st.log = false;
    if (st.fd > STDERR_FILENO)
        close(st.fd);
    st.fd = -1;
    pthread_mutex_unlock(&st.mu);
    cli_say_install(CLI_SAY_STATUS, NULL);
}

/* cli_say's taker while the line is live: writes the tool's line (n bytes) to stderr, the status
 * line erased first (it is drawn again with the next sample). Returns true when written here,
 * false when no status line is live (cli_say writes it). Thread-safe. */
static bool status_say(const char *line, size_t n)
{
    pthread_mutex_lock(&st.mu);
    if (!st.live) {
        pthread_mutex_unlock(&st.mu);
        return false;
    }
    char buf[2400];
    size_t at = 0;
    if (st.drawn && st.rows == 0) { /* drawn in place: erased first (on its kept row it stays) */
        memcpy(buf, ERASE, sizeof ERASE - 1);
        at = sizeof ERASE - 1;
        st.drawn = false;
    }
    if (n > sizeof buf - at)
        n = sizeof buf - at;
    memcpy(buf + at, line, n);
    if (write(STDERR_FILENO, buf, at + n) < 0) {
        /* nowhere left to report */
    }
    pthread_mutex_unlock(&st.mu);
    return true;
}
