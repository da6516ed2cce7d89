/* main.c - the resource-tracker tool: reads options and config, then samples on an absolute
 * monotonic grid (sample k at t0 + k*interval) and hands each sample on at once. Without a
 * command it runs until SIGINT or SIGTERM; with one (wrapper mode) it starts the command at
 * once (in a cgroup of its own where one can be made), passes terminating signals on, reaps
 * the whole tree as a child subreaper, and exits with the command's status after one last
 * sample for the partial interval (with --wait-all: once the whole job is over). The command's
 * phase marks (TRACKER_PHASE_SOCKET: marks.c) are drained as they come and before each sample,
 * and ride with the next sample. Each sample
 * goes through one pipeline to the output, the exporters, the stream and the run's answers
 * (sinks.c). A guardian process (guardian.c) kills the job's group should the tracker itself be
 * killed. Once the job's status is settled, a terminating signal cuts the end of the run short
 * and the status stays the job's (finish.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "exec.h"
#include "fdlimit.h"
#include "marks.h"
#include "outq.h"
#include "outshare.h"
#include "status.h"
#include "resource_tracker.h"

/* Opens where samples go: stderr by default, stdout for "-", else the file (appended to, and
 * emptied first unless another tracker writes it now: outshare.c; mode 0666 less the umask; a
 * symlink planted in a shared directory is refused: cli_open_create).
 * Never blocks: a FIFO with no reader is an error here, before anything starts (its reader is
 * to be started first). Returns the descriptor, or -1 once it has said why (one line). */
static int open_output(const char *path)
{
    if (!path)
        return STDERR_FILENO;
    if (strcmp(path, "-") == 0)
        return STDOUT_FILENO;
    bool refused = false;
    int fd = cli_open_create(path, O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK, 0666, &refused);
    if (fd < 0) {
        int e = errno;
        char msg[1024];
        if (e == ENXIO && cli_is_fifo(path))
            cli_say("--output: '%s' is a FIFO with no reader (start its reader first)", path);
        else
            cli_say("%s", cli_path_message(msg, sizeof msg, "output", path, refused, e));
        errno = e;
        return -1;
    }
    /* as it always was: the queue writes through a descriptor of its own that never blocks */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    cli_outshare_open(fd); /* another tracker may write it too: each line whole */
    return fd;
}

/* secs as a timespec (nanoseconds normalised). */
static struct timespec ts_of(double secs)
{
    struct timespec t;
    t.tv_sec = (time_t)floor(secs);
    t.tv_nsec = (long)((secs - floor(secs)) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

typedef struct run_state {
    /* the clock and the signals: every signal acted on arrives through sfd */
    int sfd, tfd;
    sigset_t orig_mask; /* the mask before ours: the command's */
    int out_fd;         /* where samples are written; -1: nowhere (--quiet, or the human view
                         * without -o) */
    cli_view view;      /* CLI_VIEW_HUMAN, LOG or SAMPLES (status.c): the human and the log views
                         * have a start line, their status or progress lines and the answer */
    bool human;         /* the human or the log view */
    int guard_fd;       /* the guardian's pipe: the job's group is killed if we die; -1: none */
    double start_secs;  /* Unix time of the start */
    char run_uuid[33];  /* the run's own id, made at its start (the history's run_uuid) */
    double finish_by;   /* CLOCK_MONOTONIC: the end's bound (TRACKER_FINISH_TIMEOUT after it began) */
    double start_mono;  /* CLOCK_MONOTONIC then: the end is start_secs plus the monotonic time
                         * since (a wall clock set meanwhile moves neither) */
    bool clock_told, gap_told; /* a wall clock's step, a sampling gap was said (once each) */
    double last_real;   /* CLOCK_REALTIME just after the newest sample */
    rt_sampler *sampler; /* NULL if sampling could not start: the job still runs */
    rt_pipeline *pipe;   /* where each sample goes (sinks.c); NULL: nowhere */
    rt_sink *prom;       /* the /metrics server, started before the command, until the pipeline
                          * takes it */
    pid_t child;       /* the wrapped command, 0 without one */
    double spawned_at; /* CLOCK_MONOTONIC of its start */
    rt_cloud_discovery *cloud;
    bool child_done;
    int child_status;
    /* what --summary, --report and --history need, kept only when asked for */
    rt_stats *stats;
    rt_report *report;
    rt_host *host;     /* the host's facts, read once when streaming or the run's answers need them */
    rt_job_cgroup *jcg; /* the group made for the command; NULL without one */
    bool jcg_entered;   /* the command runs in jcg (it may have failed to enter: then it is not
                         * the job's and only waits to be removed) */
    bool wait_all;      /* --wait-all: after the command, until the job is over */
    int wait_signal;    /* the signal that ended the wait for the rest of the job; 0: none */
    int passed_signal;  /* the last terminating signal passed on to the command (SIGTERM, SIGINT,
                         * SIGHUP, SIGQUIT); 0: none */
    const rt_sample *last; /* the newest sample (the sampler owns it); NULL before the first */
    bool left_behind;      /* processes of the job still run at the end: the group stays, and
                            * the library's word on that is not repeated as a warning */
    char cgroup_why[160];  /* why the command has no cgroup of its own ("" when it has one, or
                            * without a command) */
    bool cloud_tried;      /* cli_start_cloud was called (cloud may still be NULL: off or failed) */
    char untracked_why[128]; /* why the command must run in the tracker's place ("": it need not) */
    cli_marks *marks;        /* the command's phase marks (TRACKER_PHASE_SOCKET); NULL: none */
    bool no_sample_told;     /* a sample that could not be taken was said (once) */
    pid_t holder;            /* --per-node, local rank 0: the parent whose other children are the
                              * node's other tasks, tracked too and waited for; 0: none */
} run_state;

/* The first step of the wall clock and the first gap in the sampling, said once each (the
 * summary's notes count them all). */
static void clocks_say(run_state *rs, const rt_sample *s)
{
    if (s->clock_step_secs != 0 && !rs->clock_told) {
        rs->clock_told = true;
        cli_say("warning: the wall clock was set %s %.1f s: the samples' timestamps follow it, durations are the "
                "monotonic clock's",
                s->clock_step_secs < 0 ? "back" : "forward", fabs(s->clock_step_secs));
    }
    if (s->sampling_gap_secs > 0 && !rs->gap_told) {
        rs->gap_told = true;
        cli_say("warning: no sample for %.1f s (the tracker was stopped, frozen or starved, or the machine "
                "suspended)",
                s->sampling_gap_secs);
    }
}

/* Takes one sample and hands it to the pipeline. Returns false when output failed for good
 * (the only sink of the tool's pipeline whose add fails is the sample output). */
static bool emit(run_state *rs)
{
    /* the marks that came before this reading go with it (all of them once the command ended) */
    cli_marks_drain(rs->marks, rs->sampler, rs->pipe, rs->last ? rs->last->timestamp_secs : rs->start_secs,
                    rs->child_done ? CLI_MARKS_ALL : CLI_MARKS_SAMPLE);
    const rt_sample *s;
    rt_error err = rs->sampler ? rt_sampler_sample(rs->sampler, &s) : RT_OK;
    if (err != RT_OK && !rs->no_sample_told) {
        /* nothing of the machine could be read: said once, the job runs on */
        struct rlimit rl;
        rs->no_sample_told = true;
        if (cli_fds_free() == 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0)
            cli_say("warning: cannot take a sample (too few file descriptors: a limit of %llu, all in use): none "
                    "is written while none is free",
                    (unsigned long long)rl.rlim_cur);
        else
            cli_say("warning: cannot take a sample (%s): none is written while it cannot", rt_strerror(err));
    }
    if (!rs->sampler || err != RT_OK)
        return true;
    rs->last = s;
    rs->last_real = cli_real_secs();
    clocks_say(rs, s);
    if (rs->human)
        cli_status_sample(s); /* from this sample's figures: nothing read, nothing allocated */
    if (!rs->pipe || rt_pipeline_add(rs->pipe, s) == RT_OK)
        return true;
    int e = errno;
    if (e != EPIPE)
        cli_say("cannot write samples: %s", strerror(e));
    return false;
}

/* Reaps every exited child: through the sampler (closing its books) or plainly. */
static void reap_children(run_state *rs)
{
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
            return;
        int status = 0;
        if (rt_helper_reap(si.si_pid)) /* the static build's helper, not the job's (resource_tracker/helper.h) */
            continue;
        if (!rs->sampler || rt_sampler_reap(rs->sampler, si.si_pid, &status) != RT_OK) {
            pid_t r = waitpid(si.si_pid, &status, WNOHANG);
            if (r < 0 && errno == ECHILD)
                continue; /* reaped meanwhile (a helper by its owner): the others still wait */
            if (r <= 0)
                return;
        }
        if (si.si_pid == rs->child) {
            rs->child_done = true;
            rs->child_status = status;
        }
    }
}

/* --per-node: how many of the node's other tasks run still: children of the holder (the
 * tracker's parent) other than the tracker that are no zombies (a zombie's stat has its final
 * figures, and its parent may reap it only after ours ends, as a shell's `wait` in order does);
 * the zombies among them into *zombies (may be NULL; then it stops at the first one running).
 * Once the parent is gone (we were re-parented) there are none. */
typedef struct node_count {
    long self;
    int left, dead;
    bool all; /* count the zombies too (else stop at the first one running) */
} node_count;

static bool count_node_task(long pid, void *user)
{
    node_count *c = user;
    if (pid == c->self)
        return true;
    if (cli_proc_running(pid))
        c->left++;
    else
        c->dead++;
    return c->all || c->left == 0;
}

static int node_tasks(const run_state *rs, int *zombies)
{
    node_count c = {.self = (long)getpid(), .all = zombies != NULL};
    if (zombies)
        *zombies = 0;
    if (getppid() != rs->holder)
        return 0;
    cli_proc_children((long)rs->holder, count_node_task, &c);
    if (zombies)
        *zombies = c.dead;
    return c.left;
}

/* Whether the command's whole job is over (only asked after the command exited): with
 * --per-node, not while the node's other tasks run; with its group, when the group is empty;
 * else when the tracker (the child subreaper that adopts every orphan of the job) has no child
 * left. Without --wait-all the job ends with the command (and the node's tasks). */
static bool job_over(const run_state *rs)
{
    if (rs->holder && node_tasks(rs, NULL) > 0)
        return false;
    if (!rs->wait_all)
        return true;
    if (rs->jcg_entered) {
        int64_t n = rt_job_cgroup_procs(rs->jcg);
        if (n >= 0)
            return n == 0;
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD)
        return true;
    return rt_helper_only_left(); /* the static build's helpers are the tool's, not the job's */
}

/* Processes of the job still running after the end: the group's, else the tracker's
 * descendants that run now (the subreaper's: every orphan of the job is one; read anew, since
 * the last sample's count takes in zombies not reaped yet, and processes that were exiting), or
 * with --per-node the live descendants the last sample saw, less the node's tasks that ended
 * (zombies their parent has not reaped yet); -1 when none is known. */
static int64_t job_left(const run_state *rs)
{
    if (rs->jcg_entered) {
        int64_t n = rt_job_cgroup_procs(rs->jcg);
        if (n >= 0)
            return n;
    }
    if (!rs->holder) {
        int64_t n = cli_descendants_running();
        /* one that was exiting as the command ended (a child it did not wait for) is given
         * 0.1 s to be gone: a process still running is one that runs on */
        for (int i = 0; i < 10 && n > 0; i++) {
            struct timespec t = {0, 10000000L};
            nanosleep(&t, NULL);
            n = cli_descendants_running();
        }
        if (n >= 0)
            return n;
    }
    if (rs->last && rs->last->process && rs->last->process->child_count != RT_NULL_I64) {
        int zombies = 0;
        if (rs->holder)
            node_tasks(rs, &zombies);
        return rs->last->process->child_count > zombies ? rs->last->process->child_count - zombies : 0;
    }
    return -1;
}

/* The job cgroup's log: cli_log, except that once processes were said to be left behind
 * (user: the run_state), the group that cannot be removed because of them is no warning. */
static void job_cgroup_log(void *user, rt_log_level level, const char *msg)
{
    const run_state *rs = user;
    cli_log(NULL, rs->left_behind && level < RT_LOG_ERROR ? RT_LOG_DEBUG : level, msg);
}

/* Makes the command's cgroup (unless --cgroup off, or --per-node's node tracker: the node's
 * tasks are in no group of its making, and a guardian of its own would be one of the parent's
 * children, waited for as a task), logging through job_cgroup_log with rs.
 * Where none can be made the run goes on as before: RT_ERR_UNSUPPORTED (no hierarchy lets us)
 * is said by the library at debug level only; another failure (no memory) is one warning. */
static rt_job_cgroup *make_job_cgroup(const cli_options *o, run_state *rs)
{
    if (o->cgroup_off || rs->holder) {
        snprintf(rs->cgroup_why, sizeof rs->cgroup_why, "%s", rs->holder ? "--per-node" : "--cgroup off");
        return NULL;
    }
    rt_job_cgroup_options jo = RT_JOB_CGROUP_OPTIONS_INIT;
    jo.proc_root = o->proc_root;
    jo.sys_root = o->sys_root;
    jo.log = job_cgroup_log;
    jo.log_user = rs;
    jo.why = rs->cgroup_why;
    jo.why_cap = sizeof rs->cgroup_why;
    rt_job_cgroup *g = NULL;
    rt_error err = rt_job_cgroup_new(&jo, &g);
    if (err == RT_OK)
        return g;
    /* unsupported: the library said why at debug level; the summary's notes say it once */
    if (err != RT_ERR_UNSUPPORTED) {
        snprintf(rs->cgroup_why, sizeof rs->cgroup_why, "%s", rt_strerror(err));
        cli_say("warning: no cgroup of the job's own (%s): the command runs in the tracker's group",
                rt_strerror(err));
    }
    return NULL;
}

/* Descriptors kept for what a run needs after the job's cgroup: the command's report pipe, the
 * guardian's socket pair, and the sampler's roots with a few files read one at a time. */
#define FDS_AFTER_CGROUP 12
/* The group's counters the sampler keeps open first (memory's peak and charge, tasks' peak and
 * count, CPU time): a group without them is not worth its descriptors. Opening them takes the
 * directory they are in and one to spare on top (FDS_GROUP_OPENING). */
#define FDS_GROUP_COUNTERS 6
#define FDS_GROUP_OPENING 2
/* What the sampler keeps open (its roots, the machine-wide files) with one more to read the
 * tree's files through. */
#define FDS_SAMPLER 12
/* What making the job's cgroup opens for a moment on top of what it keeps. (The phase marks'
 * listener, made after the group and before the command, keeps CLI_MARKS_FDS more.) */
#define FDS_CGROUP_TRANSIENT 3

/* make_job_cgroup within the descriptors there are: what the group keeps open (a few per
 * hierarchy) must leave the rest of the run enough (FDS_AFTER_CGROUP), and a group that may
 * have run short while it was made (it may lack hierarchies) is removed again. Without one for
 * want of descriptors, one warning says so. */
static rt_job_cgroup *job_cgroup_within_fds(const cli_options *o, run_state *rs)
{
    int before = cli_fds_free();
    if (o->cgroup_off || rs->holder || before == INT_MAX)
        return make_job_cgroup(o, rs);
    rt_job_cgroup *g = NULL;
    if (before >= FDS_AFTER_CGROUP + FDS_GROUP_COUNTERS + FDS_CGROUP_TRANSIENT + 3) {
        g = make_job_cgroup(o, rs);
        if (!g || cli_fds_free() >= FDS_AFTER_CGROUP + FDS_GROUP_COUNTERS + FDS_CGROUP_TRANSIENT)
            return g; /* made in full, or not to be made for another reason (said) */
        rt_job_cgroup_free(g);
    }
    struct rlimit rl = {0, 0};
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        rl.rlim_cur = 0;
    snprintf(rs->cgroup_why, sizeof rs->cgroup_why, "too few file descriptors: a limit of %llu",
             (unsigned long long)rl.rlim_cur);
    cli_say("warning: no cgroup of the job's own (%s): the command runs in the tracker's group", rs->cgroup_why);
    return NULL;
}

/* The tool's exit status for the command's wait status: its code, 128+N for signal N, else 1. */
static int exit_status_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return EXIT_FAIL;
}

/* The run's end: its start plus the monotonic time since, less the time a last sample after a
 * gap was cut back to the command's end (the library's rt_sample.sampling_gap_secs: the
 * tracker woke after the job ended), so that the end is the job's. */
static double end_secs(const run_state *rs)
{
    double end = rs->start_secs + fmax(cli_mono_secs() - rs->start_mono, 0);
    const rt_sample *s = rs->last;
    double cut = s && s->sampling_gap_secs > 0 ? rs->last_real - s->timestamp_secs : 0;
    return cut > 0.5 ? fmax(end - cut, rs->start_secs) : end;
}

/* The end of a run with --summary, --report, --history or --benchmark: the host's facts, the cloud (waiting
 * at most for discovery's own bound), then each of them. Failures here are warnings: the job's
 * exit status stands. */
static void finish_run(cli_options *o, run_state *rs, int status)
{
    if (!rs->host && cli_read_host(o, &rs->host) != RT_OK)
        rs->host = NULL;
    const rt_cloud *cloud = rt_cloud_result(rs->cloud, 2.0);
    cli_grid_of_run(o, cloud); /* the carbon's grid: the user's, else the cloud region's */
    rt_stats_set_grid(rs->stats, &o->grid);
    if (rs->child && rs->child_done) /* how it ended: a scheduler's SIGTERM makes its time a floor */
        rt_stats_set_end_signal(rs->stats, WIFSIGNALED(rs->child_status) ? WTERMSIG(rs->child_status)
                                                                          : rs->passed_signal);
    const rt_summary *s = rt_stats_summary(rs->stats);
    rt_summary ended;
    if (s && rs->child && !rs->left_behind && s->left_behind > 0) {
        /* the end found none of them running (job_left): the last record's were exiting */
        ended = *s;
        ended.left_behind = 0;
        ended.left_behind_mib = NAN;
        s = &ended;
    }
    cli_gpuview_check(o->gpu_list, o->ngpus, rs->last);
    cli_run_result run = {.job = &o->job,
                          .command = o->command,
                          .pid = o->pid,
                          .exit_status = rs->child ? status : -1,
                          .start_secs = rs->start_secs,
                          .end_secs = end_secs(rs),
                          .host = rs->host,
                          .cloud = cloud,
                          .summary = s,
                          .cgroup_why = rs->cgroup_why[0] ? rs->cgroup_why : NULL};
    memcpy(run.run_uuid, rs->run_uuid, sizeof run.run_uuid);
    if (o->summary || rs->human) { /* once, also with both; the human view's alone is brief */
        FILE *err = cli_outq_stderr(); /* the output's queue when the samples go to stderr too */
        bool brief = !o->summary;
        fputs("resource-tracker: summary of the run\n", err);
        char more[1400], wrapped[1500];
        if (o->output && strcmp(o->output, "-") != 0)
            snprintf(more, sizeof more, "resource-tracker summary %.500s; resource-tracker report %.500s -o run.html",
                     o->output, o->output);
        else
            snprintf(more, sizeof more, "--summary (the tree, its parts, limits, the machine); --report FILE (charts)");
        rt_text_wrap(more, 12, 12, (size_t)cli_text_width(err), wrapped, sizeof wrapped);
        if (cli_summary_print(err, s, &run, NULL, NULL, brief) < 0)
            cli_say("warning: cannot print the summary");
        else if (brief)
            fprintf(err, "%-12s%s\n", "More", wrapped);
        cli_outq_stderr_done(err);
    }
    /* each of them left out once a signal cut the end short (finish.c) */
    cli_history_deadline(rs->finish_by); /* a PostgreSQL history's writes end by the run's end's bound */
    if (o->history && !cli_finish_cut() && cli_history_append(o->history, &run) == 0) {
        unsigned written, left; /* the rows of earlier runs kept for this history: written after ours */
        cli_history_deliver(o->history, &written, &left);
    }
    if (o->report && rs->report && !cli_finish_cut())
        cli_report_run(o, o->report, rs->report, &run);
    if (o->benchmark && !cli_finish_cut())
        cli_benchmark_write(o->benchmark, &run);
    if (rs->report && cli_step_summary_path(o) && !cli_finish_cut())
        cli_step_summary(o, rs->report, &run);
}

/* The output, and the signals: every one we act on arrives through a signalfd (in wrapper mode
 * the terminating ones are passed on to the command), the sampling clock through a timerfd.
 * Returns 0, or the tool's exit status after saying why. */
static int open_run(const cli_options *o, run_state *rs)
{
    rs->out_fd = rs->sfd = rs->tfd = rs->guard_fd = -1;
    rs->start_secs = cli_real_secs();
    rs->start_mono = cli_mono_secs();
    cli_run_uuid(rs->run_uuid);
    cli_nofile_raise(); /* before any setup: it all gets what the hard limit allows */
    /* -o FILE is written in every view, -q or not; stderr gets samples in the samples view only */
    if (o->output || (!o->quiet && !rs->human)) {
        rs->out_fd = open_output(o->output);
        if (rs->out_fd < 0 && o->command && cli_fds_short(errno)) {
            /* no samples can go anywhere: the command runs all the same (start_job) */
            snprintf(rs->untracked_why, sizeof rs->untracked_why, "no descriptor for the output (%s)",
                     strerror(errno));
            sigprocmask(SIG_BLOCK, NULL, &rs->orig_mask); /* the mask the command is to get */
            return 0;
        }
        if (rs->out_fd < 0)
            return EXIT_USAGE; /* open_output said why */
    }
    static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if (o->command) {
        for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
            sigaddset(&mask, forwarded[i]);
        sigaddset(&mask, SIGCHLD);
    }
    if (sigprocmask(SIG_BLOCK, &mask, &rs->orig_mask) < 0) {
        cli_say("cannot block signals: %s", strerror(errno));
        return EXIT_FAIL;
    }
    signal(SIGPIPE, SIG_IGN);
    rs->sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    if (rs->sfd < 0 && o->command) {
        /* no way to wait for the command's end and pass it signals: it runs in our place */
        snprintf(rs->untracked_why, sizeof rs->untracked_why, "no descriptor for the signals (%s)",
                 strerror(errno));
        return 0;
    }
    rs->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (rs->tfd < 0 && o->command) /* the command's end and status still come: a last sample */
        cli_say("warning: no sampling clock (%s): one sample only, at the command's end", strerror(errno));
    else if (rs->sfd < 0 || rs->tfd < 0) {
        cli_say("cannot set up the sampling clock: %s", strerror(errno));
        return EXIT_FAIL;
    }
    bool step = cli_step_summary_path(o) != NULL; /* GitHub Actions' job summary: a report's charts */
    if (o->summary || o->report || o->history || o->benchmark || rs->human || step) {
        if (rt_stats_new_with(NULL, &rs->stats) == RT_OK &&
            cli_gpuview_apply(o->expected_cores, o->gpu_list, o->ngpus, rs->stats) < 0)
            cli_say("warning: out of memory: the summary counts every core and GPU");
        if (rs->stats)
            rt_stats_set_max_slowdown(rs->stats, o->max_slowdown); /* in range: the settings checked it */
        if ((o->report || step) && rt_report_new_with(NULL, &rs->report) != RT_OK)
            rs->report = NULL;
        if (!rs->stats || ((o->report || step) && !rs->report))
            cli_say("warning: out of memory: no summary, report or history for this run");
    }
    return 0;
}

/* Frees what a run holds (the job's group after the sampler's last reading: one still in use
 * stays). */
static void close_run(run_state *rs)
{
    cli_guardian_release(rs->guard_fd);
    cli_marks_free(rs->marks, false);
    rt_sink_free(rs->prom);
    rt_pipeline_free(rs->pipe);
    rt_stats_free(rs->stats);
    rt_report_free(rs->report);
    rt_host_free(rs->host);
    rt_sampler_free(rs->sampler);
    rt_job_cgroup_free(rs->jcg);
    rt_cloud_free(rs->cloud);
    if (rs->tfd >= 0)
        close(rs->tfd);
    if (rs->sfd >= 0)
        close(rs->sfd);
    if (rs->out_fd > STDERR_FILENO)
        close(rs->out_fd);
}

/* The command in the tracker's place (cli_exec_here with mask). Returns only when exec failed:
 * the tool's exit status after saying why. */
static int exec_in_place(const cli_options *o, const sigset_t *mask)
{
    int e = cli_exec_here(o->command, mask, cli_nofile_given());
    cli_say("cannot run '%.256s%s': %s", o->command[0], strlen(o->command[0]) > 256 ? "..." : "", strerror(e));
    return e == ENOENT ? 127 : 126;
}

/* The last resort of wrapper mode when the tracker cannot have a child or wait for one (no
 * process, no descriptor to spare): the command replaces the tracker, untracked, so it still
 * runs and its status is the tool's; why is said in one warning. Whatever was set up for the job
 * is undone first (the guardian released, the group removed, the /metrics server stopped).
 * Returns only when exec failed: the tool's exit status after saying why. */
static int run_in_place(const cli_options *o, run_state *rs, const char *why)
{
    cli_say("warning: %s: the command runs in the tracker's place, untracked (no samples)", why);
    cli_guardian_release(rs->guard_fd);
    rs->guard_fd = -1;
    rt_job_cgroup_free(rs->jcg);
    rs->jcg = NULL;
    rt_sink_free(rs->prom);
    rs->prom = NULL;
    return exec_in_place(o, &rs->orig_mask);
}

/* --per-node (before anything is set up): a task of local rank above 0 runs its command in the
 * tracker's place, untracked and silent (the same pid, its own exit status, nothing written):
 * the node's tracker, local rank 0's, counts it. Sets *holder for local rank 0: the parent whose
 * other children are the node's other tasks. Without a local rank (or a parent to go by) one
 * warning, and the task's own command is tracked. Returns 0 to track, else the tool's exit
 * status once the command could not be run. */
static int per_node(const cli_options *o, pid_t *holder)
{
    *holder = 0;
    if (!o->per_node || !o->command)
        return 0;
    int64_t local = cli_per_node_rank(o);
    if (local > 0) {
        sigset_t mask;
        sigprocmask(SIG_BLOCK, NULL, &mask);
        return exec_in_place(o, &mask);
    }
    pid_t parent = getppid();
    if (local < 0)
        cli_say("warning: --per-node: no local rank to go by (SLURM_LOCALID, LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, "
                "...%s): this task's command alone is tracked",
                o->place_off ? "; --place off reads none" : "");
    else if (parent <= 1)
        cli_say("warning: --per-node: no parent whose children are the node's tasks (the tracker runs as a "
                "namespace's first process or its child): this task's command alone is tracked");
    else
        *holder = parent;
    return 0;
}

/* In wrapper mode: the command's group and its guardian (forked while no thread runs), the
 * /metrics server (a port that cannot be served is a usage error with nothing started), then
 * the command, as a child subreaper's. Returns 0, or the tool's exit status after saying why. */
static int start_job(const cli_options *o, run_state *rs)
{
    if (o->command && rs->untracked_why[0])
        return run_in_place(o, rs, rs->untracked_why);
    if (o->command) {
        cli_fds_hold(); /* the lowest descriptors, for the group's counters (cli_fds_release) */
        rs->jcg = job_cgroup_within_fds(o, rs);
        /* before we become a subreaper (the guardian must not be adopted by us), with no thread
         * yet; as a namespace's init, our death ends the job anyway (and an orphaned guardian
         * would be our child) */
        if (rs->jcg && getpid() != 1)
            rs->guard_fd = cli_guardian_start(rs->jcg, rs->out_fd > STDERR_FILENO ? rs->out_fd : -1);
    }
    if (o->otlp_warning[0])
        cli_say("warning: %s", o->otlp_warning);
    if (o->prom_on || o->otlp_url || o->textfile_dir) {
        rs->cloud = cli_start_cloud(o);
        rs->cloud_tried = true;
        if (cli_sinks_prom(o, rs->cloud, &rs->prom) < 0) {
            /* a port that cannot be served is a usage error; a server that cannot be had for want
             * of a thread, memory or a descriptor is a missing part: the command runs all the same */
            int e = errno;
            if (!o->command || !(e == EAGAIN || e == ENOMEM || cli_fds_short(e)))
                return EXIT_USAGE;
            cli_say("warning: no Prometheus metrics for this run (%s): the command runs all the same", strerror(e));
        }
    }
    if (rs->human) /* the command's own output comes after it */
        cli_status_start(o, rs->view, rs->view == CLI_VIEW_HUMAN && isatty(STDERR_FILENO));
    if (!o->command)
        return 0;
    /* descendants that daemonize are re-parented to us and stay in the job (while the command
     * lives; after it, with --wait-all) */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
        cli_say("warning: cannot become a child subreaper (%s): daemonized descendants may be missed",
                strerror(errno));
    rs->wait_all = o->wait_all;
    /* the phase marks' socket, named in the command's environment (a nested tracker's replaces
     * the outer one's: the inner tracker owns its job's marks) */
    int fds = cli_fds_free();
    if (fds != INT_MAX &&
        fds < FDS_AFTER_CGROUP + CLI_MARKS_FDS + (rs->jcg ? FDS_GROUP_COUNTERS + FDS_GROUP_OPENING : 0))
        cli_say("warning: no phase marks for this run (too few file descriptors)");
    else
        rs->marks = cli_marks_start();
    rs->spawned_at = cli_mono_secs();
    int e;
    rs->child = cli_spawn(o->command, &rs->orig_mask, cli_nofile_given(), rs->jcg,
                          &rs->jcg_entered, &e);
    if (rs->child == -2) { /* no child to be had (the process limit): the command runs all the same */
        cli_marks_free(rs->marks, true); /* untracked: no socket advertised */
        rs->marks = NULL;
        char why[96];
        snprintf(why, sizeof why, "cannot fork (%s)", strerror(e));
        return run_in_place(o, rs, why);
    }
    if (rs->child < 0) {
        rs->child = 0;
        /* a name of any length: the reason always fits in the line */
        cli_say("cannot run '%.256s%s': %s", o->command[0], strlen(o->command[0]) > 256 ? "..." : "",
                strerror(e));
        return e == ENOENT ? 127 : 126;
    }
    if (rs->jcg && !rs->jcg_entered)
        snprintf(rs->cgroup_why, sizeof rs->cgroup_why, "the command could not be moved into the group made for it");
    return 0;
}

/* The sampler (its baseline reading is the grid's origin, t0), the host's facts and the cloud
 * where something uses them, the pipeline, and the clock armed: sample k at t0 + k*interval, with
 * no drift, as the kernel's periodic timer keeps absolute expiry times. t0 is read just after the
 * baseline, never before the sampler's setup: a slow setup (many cgroup files, a GPU library)
 * would otherwise eat into the first interval. Returns 0, or the tool's
 * exit status after saying why (only without a command: a command runs on untracked). */
static int start_sampling(cli_options *o, run_state *rs)
{
    rt_sampler_options so = RT_SAMPLER_OPTIONS_INIT;
    so.log = cli_log;
    so.pid = rs->child ? rs->child : o->pid;
    so.own_children = rs->child != 0;
    so.tree_start_mono_secs = rs->spawned_at;
    so.proc_root = o->proc_root;
    so.sys_root = o->sys_root;
    so.nvml_library = o->nvml_library;
    so.pss_max_age_secs = o->pss_max_age_secs;
    so.walk_max_age_secs = o->walk_max_age_secs;
    so.job_cgroup = rs->jcg_entered ? rs->jcg : NULL;
    so.cgroup_off = o->cgroup_off;
    so.energy_off = o->energy_off;
    so.cpu_tdp_watts = o->cpu_tdp;
    so.request = o->request;
    so.member = o->member.job_id ? &o->member : NULL;
    so.siblings_of = rs->holder; /* --per-node: the node's other tasks (0: none) */
    so.interval_secs = o->interval; /* a gap in the sampling is told against it */
    cli_fds_release(); /* the lowest descriptors: the sampler opens the group's counters first */
    int fds = cli_fds_free(); /* the sampler keeps a dozen files open and reads the tree's */
    rt_error err = rt_sampler_new(&so, &rs->sampler);
    double t0 = cli_mono_secs(); /* the baseline's time, a few instructions late at most */
    if (err != RT_OK) {
        rs->sampler = NULL;
        if (!rs->child) {
            if (err == RT_ERR_NOT_FOUND && o->pid) {
                cli_say("--pid: there is no process %ld", o->pid);
                return EXIT_USAGE;
            }
            cli_say("cannot start sampling: %s", rt_strerror(err));
            return EXIT_FAIL;
        }
        /* never disturb the job: it runs on untracked, and we still return its status */
        struct rlimit rl;
        if (fds < FDS_SAMPLER && getrlimit(RLIMIT_NOFILE, &rl) == 0)
            cli_say("warning: cannot start sampling (too few file descriptors: a limit of %llu); running the "
                    "command untracked",
                    (unsigned long long)rl.rlim_cur);
        else
            cli_say("warning: cannot start sampling (%s); running the command untracked", rt_strerror(err));
    }
    /* where the job runs: found in the background, never waited for; kept for the run. Only
     * asked when something uses it (the stream, the summary, report or history; the exporters
     * asked in start_job): a plain run makes no network connection at all, nor does the human
     * view's summary without --summary (it has no cloud line) */
    if (!rs->cloud_tried && (o->sentinel_token || o->summary || o->report || o->history))
        rs->cloud = cli_start_cloud(o);
    if ((o->sentinel_token || o->prom_on || o->otlp_url || o->textfile_dir) && cli_read_host(o, &rs->host) != RT_OK)
        rs->host = NULL;
    cli_run_sinks in = {.prom = rs->prom,
                        .out_fd = rs->out_fd,
                        .stats = rs->stats,
                        .report = rs->report,
                        .host = rs->host,
                        .cloud = rs->cloud,
                        .start_secs = rs->start_secs};
    rs->prom = NULL; /* the pipeline's from here */
    rs->pipe = cli_sinks_pipeline(o, &in);
    struct itimerspec its = {.it_value = ts_of(t0 + o->interval), .it_interval = ts_of(o->interval)};
    if (rs->tfd >= 0 && timerfd_settime(rs->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        cli_say("warning: cannot start the sampling clock: %s", strerror(errno));
    return 0;
}

/* Reads a bounded batch of signals (a flood never starves the sampling clock: the rest waits for
 * the next turn of the loop). Returns true when tracking is to stop. */
static bool on_signals(run_state *rs)
{
    bool stop = false;
    struct signalfd_siginfo si;
    for (int batch = 0; batch < 64 && read(rs->sfd, &si, sizeof si) == (ssize_t)sizeof si; batch++) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            reap_children(rs);
        } else if (rs->child && !rs->child_done) {
            kill(rs->child, sig); /* the command decides; we wait for it to exit */
            if (sig != SIGUSR1 && sig != SIGUSR2)
                rs->passed_signal = sig; /* what ended it, whatever it exits with */
        } else if (rs->child) { /* the command is gone */
            if (rs->wait_all)
                rs->wait_signal = sig; /* a signal ends the wait; the rest runs on */
            stop = true;
        } else {
            stop = true; /* SIGINT or SIGTERM without a command */
        }
        struct pollfd again = {.fd = rs->sfd, .events = POLLIN};
        if (poll(&again, 1, 0) <= 0)
            break;
    }
    return stop || (rs->child && rs->child_done && job_over(rs));
}

/* The poll timeout until the memory watch is due at mono time *at (set from the sampler's
 * wait when NaN: after a sample); -1 (wait for the clock) when there is nothing to watch. */
static int watch_timeout(run_state *rs, double *at)
{
    double delay = rs->sampler ? rt_sampler_watch(rs->sampler, 0) : INFINITY;
    if (!isfinite(delay))
        return -1;
    double now = cli_mono_secs();
    if (isnan(*at))
        *at = now + delay;
    return *at <= now ? 0 : (int)ceil((*at - now) * 1000.0);
}

/* Samples on the clock until the end: a signal, the command's exit (with --wait-all: the
 * job's), or an output gone without a command. Between samples the job's memory is watched on
 * the sampler's fast clock while it moves (rt_sampler_watch). Returns 0, or EXIT_FAIL when the
 * loop failed. */
static int sample_loop(run_state *rs)
{
    double watch_at = NAN; /* when the watch is due next (NaN: from the sampler's wait) */
    for (;;) {
        struct pollfd pfd[3] = {{.fd = rs->tfd, .events = POLLIN},
                                {.fd = rs->sfd, .events = POLLIN},
                                {.fd = cli_marks_fd(rs->marks), .events = POLLIN}};
        int ready = poll(pfd, 3, watch_timeout(rs, &watch_at));
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            cli_say("poll: %s", strerror(errno));
            return EXIT_FAIL;
        }
        if (ready == 0) { /* the watch is due, nothing else */
            watch_at = cli_mono_secs() + rt_sampler_watch(rs->sampler, 1);
            continue;
        }
        if (pfd[2].revents & POLLIN) /* a bounded batch: the rest waits for the next turn */
            cli_marks_drain(rs->marks, rs->sampler, rs->pipe,
                            rs->last ? rs->last->timestamp_secs : rs->start_secs, CLI_MARKS_BATCH);
        if ((pfd[1].revents & POLLIN) && on_signals(rs)) {
            rt_sampler_read_counters(rs->sampler); /* the GPUs' energy to the counter's figure */
            emit(rs); /* the partial last interval */
            return 0;
        }
        if (pfd[0].revents & POLLIN) {
            uint64_t expirations;
            if (read(rs->tfd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations)
                continue;
            watch_at = NAN; /* the sample was a reading: the watch's wait starts from it */
            /* --per-node: the node's last task ended before this reading (it is not our child:
             * no SIGCHLD tells), so this reading, the last, counts it to its end */
            bool over = rs->holder && rs->child && rs->child_done && job_over(rs);
            if (!emit(rs) && !rs->child)
                return 0; /* output gone (e.g. the reading end of a pipe closed): nothing left to do */
            if (over || (!rs->holder && rs->child && rs->child_done && job_over(rs)))
                return 0; /* --wait-all: the job ended between two SIGCHLDs (its last process was
                           * not our child); this sample was the last */
        }
    }
}

/* The command's fate (after a failed loop it runs on untracked until it ends, and its status is
 * still ours to return: we must not exit before it, it dies with us, PDEATHSIG), and what it left
 * behind. Returns the tool's exit status (loop_status without a command). */
static int end_job(run_state *rs, int loop_status)
{
    if (!rs->child)
        return loop_status;
    if (!rs->child_done) {
        int st = 0;
        pid_t w;
        while ((w = waitpid(rs->child, &st, 0)) < 0 && errno == EINTR)
            ;
        if (w == rs->child) {
            rs->child_done = true;
            rs->child_status = st;
        }
    }
    if (!rs->child_done)
        return EXIT_FAIL;
    int64_t left = job_left(rs);
    rs->left_behind = left > 0;
    if (left > 0 && rs->wait_signal)
        cli_say("%lld process%s of the job still running (left behind: signal %d ended the wait)",
                (long long)left, left == 1 ? "" : "es", rs->wait_signal);
    else if (left > 0)
        cli_say("%lld process%s of the job still running (left behind; --wait-all waits for them)",
                (long long)left, left == 1 ? "" : "es");
    return exit_status_of(rs->child_status);
}

/* Tracks (and in wrapper mode runs) until the end; returns the tool's exit status. */
static int track(cli_options *o)
{
    run_state rs = {0};
    int status = per_node(o, &rs.holder);
    if (status != 0)
        return status;
    /* where the job runs: before anything starts (its query's child is reaped by its pid before
     * SIGCHLD is ours), so that the job's metadata it fills reaches every output */
    cli_place_apply(o);
    if (rs.holder && o->member.job_id) /* the node's run: its member says so (the job view's) */
        o->member.per_node = 1;
    if (cli_output_in_dir(o) < 0)
        return EXIT_FAIL;
    rs.view = cli_view_resolve(o);
    rs.human = rs.view != CLI_VIEW_SAMPLES;
    if (rs.view == CLI_VIEW_LOG && !o->output) /* the samples in a file of their own, named in the start line */
        cli_log_output(o);
    status = open_run(o, &rs);
    if (status == 0)
        status = start_job(o, &rs);
    if (status != 0) {
        close_run(&rs);
        return status;
    }
    if ((status = start_sampling(o, &rs)) != 0) {
        close_run(&rs);
        return status;
    }
    status = end_job(&rs, sample_loop(&rs));
    cli_marks_free(rs.marks, false); /* the socket goes with the job */
    rs.marks = NULL;
    cli_status_end(); /* the status line erased: what follows is lines of their own */
    /* the job's fate is settled: from here on (the sinks' ends, the summary, the history), the
     * tracker's death leaves what is left of the job alone */
    cli_guardian_release(rs.guard_fd);
    rs.guard_fd = -1;
    /* a terminating signal from here cuts the end short, and the status stays the job's */
    cli_finish_begin(rs.sfd, status, rs.jcg);
    /* the sinks' ends side by side: the textfile's last word, the server's end and the last OTLP
     * push begin, then the stream's last batch and the run's end, each within
     * TRACKER_FINISH_TIMEOUT; what fails is said and never changes the status */
    double out_by = cli_mono_secs() + o->finish_timeout; /* the output's reader is waited for beside them */
    rs.finish_by = out_by;
    rt_run_end end = RT_RUN_END_INIT;
    end.exit_status = rs.child ? status : RT_NULL_I64;
    end.failed = rs.child && status != 0;
    rt_pipeline_finish(rs.pipe, &end);
    cli_marks_say(rs.pipe); /* marks refused, phases left open: one line, the status stands */
    rt_pipeline_free(rs.pipe); /* waits for the last OTLP push */
    rs.pipe = NULL;
    if (!cli_finish_cut())
        cli_log_gzip(o); /* a CI runner's samples file, before the step summary names it */
    if (rs.stats && !cli_finish_cut())
        finish_run(o, &rs, status);
    /* what the reader has not taken by then (at once when cut short) is dropped, said once */
    cli_outq_run_end(cli_finish_cut() ? cli_mono_secs() : out_by);
    cli_finish_end();
    close_run(&rs);
    return status;
}

/* Overwrites with 'x' the password of each postgresql:// URL among the tool's own arguments (not
 * the command's: from command on, argv is the job's), so that ps(1) does not show it once the
 * settings hold their copies. ~/.pgpass is the way to give one (docs/contracts.md). */
static void scrub_passwords(int argc, char **argv, char *const *command)
{
    for (int i = 1; i < argc && !(command && argv + i == command); i++) {
        char *u = strstr(argv[i], "postgres");
        size_t start = 0, n = u ? rt_db_url_password(u, &start) : 0;
        if (n)
            memset(u + start, 'x', n);
    }
}

int main(int argc, char **argv)
{
    cli_options o = {0};
    char err[1024];
    int rc;
    if (cli_parse_args(&o, argc, argv, err, sizeof err) < 0) {
        cli_say("%s", err);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    if (o.help) {
        cli_usage_print(stdout);
        cli_options_free(&o);
        return 0;
    }
    if (o.version) {
#ifdef RT_STATIC_BUILD /* said where users look first (docs/install.md) */
        printf("resource-tracker %s (static build: the machine's own libcurl and SQLite through a helper; no NVML)\n",
               rt_version());
#else
        printf("resource-tracker %s\n", rt_version());
#endif
        cli_options_free(&o);
        return 0;
    }
    if (o.cmd == CMD_PHASE) { /* inside a job: before any setting could refuse it (phase.c) */
        rc = o.sub->run(&o);
        cli_options_free(&o);
        return rc;
    }
    if (cli_library_env(&o, err, sizeof err) < 0) {
        cli_say("%s", err);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    if (o.sub && cli_static_check(&o, err, sizeof err) < 0) {
        cli_say("%s", err);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    if (o.sub) { /* the subcommand table (options.c) */
        rc = o.sub->run(&o);
        cli_options_free(&o);
        return rc;
    }
    if (cli_load_config(&o, err, sizeof err) < 0 || cli_merge(&o, err, sizeof err) < 0 ||
        cli_static_check(&o, err, sizeof err) < 0) {
        cli_say("%s", err);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    scrub_passwords(argc, argv, o.command); /* the settings hold their copies: ps shows no password */
    const char *near = o.command ? cli_subcommand_near(o.command[0]) : NULL;
    if (near && !cli_command_found(o.command[0])) { /* a mistyped subcommand: nothing is run */
        cli_say("'%s' is not a subcommand, nor a command found in PATH; did you mean 'resource-tracker %s'?",
                o.command[0], near);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    if (o.pid && kill((pid_t)o.pid, 0) < 0 && errno == ESRCH) {
        cli_say("--pid: there is no process %ld", o.pid);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    rc = track(&o);
    cli_options_free(&o);
    return rc;
}
