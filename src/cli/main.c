/* main.c - the resource-tracker tool: reads options and config, then samples on an absolute
 * monotonic grid (sample k at t0 + k*interval) and writes each sample at once. Without a
 * command it runs until SIGINT or SIGTERM; with one (wrapper mode) it starts the command at
 * once (in a cgroup of its own where one can be made), passes terminating signals on, reaps
 * the whole tree as a child subreaper, and exits with the command's status after one last
 * sample for the partial interval (with --wait-all: once the whole job is over). A guardian
 * process (guardian.c) kills the job's group should the tracker itself be killed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#include "resource_tracker.h"

/* Opens where samples go: stderr by default, stdout for "-", else the file (truncated; mode
 * 0666 less the umask; a symlink planted in a shared directory is refused: cli_open_create).
 * Returns the descriptor, or -1 once it has said why (one line). */
static int open_output(const char *path)
{
    if (!path)
        return STDERR_FILENO;
    if (strcmp(path, "-") == 0)
        return STDOUT_FILENO;
    bool refused = false;
    int fd = cli_open_create(path, O_WRONLY | O_CREAT | O_TRUNC, 0666, &refused);
    if (refused)
        cli_say("--output: refusing '%s': %s", path, cli_refused_why());
    else if (fd < 0)
        cli_say("--output: cannot open '%s': %s", path, strerror(errno));
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
    rt_sampler *sampler; /* NULL if sampling could not start: the job still runs */
    rt_writer *writer;   /* NULL with --quiet */
    bool output_dead;
    pid_t child;       /* the wrapped command, 0 without one */
    rt_cloud_discovery *cloud;
    bool child_done;
    int child_status;
    /* what --summary, --report and --history need, kept only when asked for */
    rt_stats *stats;
    rt_report *report;
    const char *job_name;
    rt_stream *stream; /* streaming to the Sentinel API and S3; NULL without a token */
    rt_host *host;     /* the host's facts, read once when streaming or the run's answers need them */
    rt_job_cgroup *jcg; /* the group made for the command; NULL without one */
    bool jcg_entered;   /* the command runs in jcg (it may have failed to enter: then it is not
                         * the job's and only waits to be removed) */
    bool wait_all;      /* --wait-all: after the command, until the job is over */
    int wait_signal;    /* the signal that ended the wait for the rest of the job; 0: none */
    const rt_sample *last; /* the newest sample (the sampler owns it); NULL before the first */
    bool left_behind;      /* processes of the job still run at the end: the group stays, and
                            * the library's word on that is not repeated as a warning */
    cli_exporters *ex;     /* Prometheus, the textfile, OTLP (export.c); NULL without any */
    char cgroup_why[160];  /* why the command has no cgroup of its own ("" when it has one, or
                            * without a command) */
    bool cloud_tried;      /* start_cloud was called (cloud may still be NULL: off or failed) */
} run_state;

/* Takes one sample and writes it. Returns false when output failed for good. */
static bool emit(run_state *rs)
{
    const rt_sample *s;
    if (!rs->sampler || rt_sampler_sample(rs->sampler, &s) != RT_OK)
        return true;
    rs->last = s;
    if (rs->stream)
        rt_stream_add(rs->stream, s); /* never waits on the network */
    cli_export_sample(rs->ex, s);     /* nor do the exporters */
    if (rs->stats || rs->report) {
        rt_record rec;
        rt_record_from_sample(s, &rec);
        rec.job_name = rs->job_name;
        if (rs->stats)
            rt_stats_add(rs->stats, &rec);
        if (rs->report)
            rt_report_add(rs->report, &rec);
    }
    if (!rs->writer || rs->output_dead)
        return true;
    if (rt_writer_write(rs->writer, s) != RT_OK) {
        int e = errno;
        rs->output_dead = true;
        if (e != EPIPE)
            cli_say("cannot write samples: %s", strerror(e));
        return false;
    }
    return true;
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
        if (!rs->sampler || rt_sampler_reap(rs->sampler, si.si_pid, &status) != RT_OK) {
            if (waitpid(si.si_pid, &status, WNOHANG) <= 0)
                return;
        }
        if (si.si_pid == rs->child) {
            rs->child_done = true;
            rs->child_status = status;
        }
    }
}

/* Whether the command's whole job is over (only asked after the command exited): with its
 * group, when the group is empty; else when the tracker (the child subreaper that adopts
 * every orphan of the job) has no child left. Without --wait-all the job ends with the command. */
static bool job_over(const run_state *rs)
{
    if (!rs->wait_all)
        return true;
    if (rs->jcg_entered) {
        int64_t n = rt_job_cgroup_procs(rs->jcg);
        if (n >= 0)
            return n == 0;
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD;
}

/* Processes of the job still running after the end: the group's, else the live descendants
 * the last sample saw; -1 when neither is known. */
static int64_t job_left(const run_state *rs)
{
    if (rs->jcg_entered) {
        int64_t n = rt_job_cgroup_procs(rs->jcg);
        if (n >= 0)
            return n;
    }
    if (rs->last && rs->last->process && rs->last->process->child_count != RT_NULL_I64)
        return rs->last->process->child_count;
    return -1;
}

/* The job cgroup's log: cli_log, except that once processes were said to be left behind
 * (user: the run_state), the group that cannot be removed because of them is no warning. */
static void job_cgroup_log(void *user, rt_log_level level, const char *msg)
{
    const run_state *rs = user;
    cli_log(NULL, rs->left_behind && level < RT_LOG_ERROR ? RT_LOG_DEBUG : level, msg);
}

/* Makes the command's cgroup (unless --cgroup off), logging through job_cgroup_log with rs.
 * Where none can be made the run goes on as before: RT_ERR_UNSUPPORTED (no hierarchy lets us)
 * is said by the library at debug level only; another failure (no memory) is one warning. */
static rt_job_cgroup *make_job_cgroup(const cli_options *o, run_state *rs)
{
    if (o->cgroup_off) {
        snprintf(rs->cgroup_why, sizeof rs->cgroup_why, "--cgroup off");
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
    rt_error err = rt_job_cgroup_create(&jo, &g);
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

/* Lets the tracker keep one descriptor open per tracked file: soft limit up to the hard one.
 * Called after the command started, which keeps the limit it was given. */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
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

/* Starts cloud discovery in the background as the environment asks; NULL when it is turned
 * off or cannot start (the run goes on without it). */
static rt_cloud_discovery *start_cloud(const cli_options *o)
{
    rt_cloud_options co = RT_CLOUD_OPTIONS_INIT;
    co.disabled = o->cloud_disabled;
    co.metadata_url = o->cloud_metadata_url;
    co.log = cli_log;
    rt_cloud_discovery *d = NULL;
    rt_error err = rt_cloud_start(&co, &d);
    if (err != RT_OK && err != RT_ERR_DISABLED)
        cli_say("warning: no cloud discovery: %s", rt_strerror(err));
    return d;
}

/* Reads the host's facts with the roots the environment names (rt_host_read's contract). */
static rt_error read_host(const cli_options *o, rt_host **out)
{
    rt_host_options ho = RT_HOST_OPTIONS_INIT;
    ho.log = cli_log;
    ho.proc_root = o->proc_root;
    ho.sys_root = o->sys_root;
    ho.nvml_library = o->nvml_library;
    return rt_host_read(&ho, out);
}

/* Starts streaming the run (only called with a token) with the host's facts (may be NULL); the
 * cloud's result is asked by the stream itself before it registers. NULL when it cannot start
 * (one warning: the job goes on untouched). */
static rt_stream *start_stream(const cli_options *o, const rt_host *host, rt_cloud_discovery *cloud)
{
    rt_stream_options so = RT_STREAM_OPTIONS_INIT;
    so.api_url = o->sentinel_url;
    so.token = o->sentinel_token;
    so.upload_interval_secs = o->upload_interval;
    so.finish_timeout_secs = o->finish_timeout;
    so.s3_endpoint_url = o->s3_endpoint;
    so.region = o->aws_region;
    so.job = &o->job;
    so.command = (const char *const *)o->command;
    so.host = host;
    so.cloud = cloud;
    so.spill_dir = o->spill_dir;
    so.log = cli_log;
    rt_stream *st = NULL;
    rt_error err = rt_stream_start(&so, &st); /* it copies what it needs of the host */
    if (err == RT_ERR_SYSTEM) {
        cli_say("warning: not streaming to the Sentinel API: cannot start its thread (%s)", strerror(errno));
        return NULL;
    }
    if (err != RT_OK) {
        cli_say("warning: not streaming to the Sentinel API: %s", rt_strerror(err));
        return NULL;
    }
    return st;
}

/* The end of a run with --summary, --report or --history: the host's facts, the cloud (waiting
 * at most for discovery's own bound), then each of them. Failures here are warnings: the job's
 * exit status stands. */
static void finish_run(cli_options *o, run_state *rs, int status, double start_secs)
{
    if (!rs->host && read_host(o, &rs->host) != RT_OK)
        rs->host = NULL;
    const rt_summary *s = rt_stats_summary(rs->stats);
    cli_gpuview_check(o->gpu_list, o->ngpus, rs->last);
    cli_run_result run = {.job = &o->job,
                          .command = o->command,
                          .pid = o->pid,
                          .exit_status = rs->child ? status : -1,
                          .start_secs = start_secs,
                          .end_secs = cli_real_secs(),
                          .host = rs->host,
                          .cloud = rt_cloud_result(rs->cloud, 2.0),
                          .summary = s,
                          .cgroup_why = rs->cgroup_why[0] ? rs->cgroup_why : NULL};
    if (o->summary) {
        fputs("resource-tracker: summary of the run\n", stderr);
        if (cli_summary_print(stderr, s, &run, NULL, NULL) < 0)
            cli_say("warning: cannot print the summary");
    }
    if (o->history)
        cli_history_append(o->history, &run);
    if (o->report && rs->report)
        cli_report_run(o, o->report, rs->report, &run);
}

/* Tracks (and in wrapper mode runs) until the end; returns the tool's exit status. */
static int track(cli_options *o)
{
    int out_fd = -1;
    if (!o->quiet) {
        out_fd = open_output(o->output);
        if (out_fd < 0)
            return EXIT_USAGE; /* open_output said why */
    }
    /* every signal we act on arrives through a signalfd; in wrapper mode the terminating
     * ones are passed on to the command */
    static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    sigset_t mask, orig_mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if (o->command) {
        for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
            sigaddset(&mask, forwarded[i]);
        sigaddset(&mask, SIGCHLD);
    }
    if (sigprocmask(SIG_BLOCK, &mask, &orig_mask) < 0) {
        cli_say("cannot block signals: %s", strerror(errno));
        return EXIT_FAIL;
    }
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (sfd < 0 || tfd < 0) {
        cli_say("cannot set up the sampling clock: %s", strerror(errno));
        return EXIT_FAIL;
    }

    run_state rs = {0};
    double spawned_at = 0, start_secs = cli_real_secs();
    if (o->summary || o->report || o->history) {
        rs.stats = rt_stats_new();
        if (rs.stats && cli_gpuview_apply(o->expected_cores, o->gpu_list, o->ngpus, rs.stats) < 0)
            cli_say("warning: out of memory: the summary counts every core and GPU");
        rs.report = o->report ? rt_report_new() : NULL;
        rs.job_name = o->job.job_name;
        if (!rs.stats || (o->report && !rs.report))
            cli_say("warning: out of memory: no summary, report or history for this run");
    }
    int guard_fd = -1; /* the guardian's pipe: the job's group is killed if we die */
    if (o->command) {
        rs.jcg = make_job_cgroup(o, &rs);
        /* before we become a subreaper (the guardian must not be adopted by us), with no
         * thread yet */
        if (rs.jcg && getpid() != 1) /* as a namespace's init, our death ends the job anyway (and
                                        * an orphaned guardian would be our child) */
            guard_fd = cli_guardian_start(rs.jcg, out_fd > STDERR_FILENO ? out_fd : -1);
    }
    /* the exporters, after the guardian (forked while no thread runs) and before the command: a
     * port that cannot be served is a usage error with nothing started (the host's facts join
     * the server's info once read, after the start) */
    if (o->otlp_warning[0])
        cli_say("warning: %s", o->otlp_warning);
    if (o->prom_on || o->otlp_url || o->textfile_dir) {
        rs.cloud = start_cloud(o);
        rs.cloud_tried = true;
        if (cli_export_start(o, rs.cloud, &rs.ex) < 0) {
            cli_guardian_release(guard_fd);
            rt_job_cgroup_free(rs.jcg);
            rt_cloud_free(rs.cloud);
            return EXIT_USAGE;
        }
    }
    if (o->command) {
        int e;
        /* descendants that daemonize are re-parented to us and stay in the job (while the
         * command lives; after it, with --wait-all) */
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
            cli_say("warning: cannot become a child subreaper (%s): daemonized descendants may be missed",
                strerror(errno));
        rs.wait_all = o->wait_all;
        spawned_at = cli_mono_secs();
        rs.child = cli_spawn(o->command, &orig_mask, rs.jcg, &rs.jcg_entered, &e);
        if (rs.child < 0) {
            rt_job_cgroup_free(rs.jcg);
            cli_guardian_release(guard_fd);
            /* a name of any length: the reason always fits in the line */
            cli_say("cannot run '%.256s%s': %s", o->command[0], strlen(o->command[0]) > 256 ? "..." : "",
                    strerror(e));
            return e == ENOENT ? 127 : 126;
        }
        if (rs.jcg && !rs.jcg_entered)
            snprintf(rs.cgroup_why, sizeof rs.cgroup_why, "the command could not be moved into the group made for it");
    }
    raise_nofile();

    /* The grid starts at the baseline reading: sample k at t0 + k*interval, with no drift,
     * as the kernel's periodic timer keeps absolute expiry times. */
    double t0 = cli_mono_secs();
    rt_sampler_options so = RT_SAMPLER_OPTIONS_INIT;
    so.log = cli_log;
    so.pid = rs.child ? rs.child : o->pid;
    so.own_children = rs.child != 0;
    so.tree_start_mono_secs = spawned_at;
    so.proc_root = o->proc_root;
    so.sys_root = o->sys_root;
    so.nvml_library = o->nvml_library;
    so.pss_max_age_secs = o->pss_max_age_secs;
    so.job_cgroup = rs.jcg_entered ? rs.jcg : NULL;
    so.cgroup_off = o->cgroup_off;
    rt_error err = rt_sampler_new(&so, &rs.sampler);
    if (err != RT_OK) {
        if (!rs.child) {
            if (err == RT_ERR_NOT_FOUND && o->pid) {
                cli_say("--pid: there is no process %ld", o->pid);
                return EXIT_USAGE;
            }
            cli_say("cannot start sampling: %s", rt_strerror(err));
            return EXIT_FAIL;
        }
        /* never disturb the job: it runs on untracked, and we still return its status */
        cli_say("warning: cannot start sampling (%s); running the command untracked", rt_strerror(err));
        rs.sampler = NULL;
    }
    /* where the job runs: found in the background, never waited for; kept for the run. Only
     * asked when something uses it (the stream, the summary, report or history; the exporters
     * asked above): a plain run makes no network connection at all */
    if (!rs.cloud_tried && (o->sentinel_token || rs.stats))
        rs.cloud = start_cloud(o);
    if (o->sentinel_token || rs.ex) {
        if (read_host(o, &rs.host) != RT_OK)
            rs.host = NULL;
    }
    if (o->sentinel_token)
        rs.stream = start_stream(o, rs.host, rs.cloud);
    cli_export_host(rs.ex, o, rs.host, rs.cloud); /* the OTLP exporter starts here, with the host */
    if (out_fd >= 0 && (err = rt_writer_new(o->format, out_fd, &o->job, &rs.writer)) != RT_OK) {
        cli_say("cannot set up output: %s", rt_strerror(err));
        rs.writer = NULL;
    }
    struct itimerspec its = {.it_value = ts_of(t0 + o->interval), .it_interval = ts_of(o->interval)};
    if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        cli_say("warning: cannot start the sampling clock: %s", strerror(errno));

    int status = 0;
    bool stop = false;
    while (!stop) {
        struct pollfd pfd[2] = {{.fd = tfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        int n = poll(pfd, 2, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            cli_say("poll: %s", strerror(errno));
            status = EXIT_FAIL;
            break;
        }
        if (pfd[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            /* a bounded batch: a flood of signals never starves the sampling clock (the rest
             * waits for the next turn of the loop) */
            for (int batch = 0; batch < 64 && read(sfd, &si, sizeof si) == (ssize_t)sizeof si; batch++) {
                int sig = (int)si.ssi_signo;
                if (sig == SIGCHLD) {
                    reap_children(&rs);
                } else if (rs.child && !rs.child_done) {
                    kill(rs.child, sig); /* the command decides; we wait for it to exit */
                } else if (rs.child) { /* the command is gone */
                    if (rs.wait_all)
                        rs.wait_signal = sig; /* a signal ends the wait; the rest runs on */
                    stop = true;
                } else {
                    stop = true; /* SIGINT or SIGTERM without a command */
                }
                struct pollfd again = {.fd = sfd, .events = POLLIN};
                if (poll(&again, 1, 0) <= 0)
                    break;
            }
            if (rs.child && rs.child_done && job_over(&rs))
                stop = true;
            if (stop) {
                emit(&rs); /* the partial last interval */
                break;
            }
        }
        if (pfd[0].revents & POLLIN) {
            uint64_t expirations;
            if (read(tfd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations)
                continue;
            if (!emit(&rs) && !rs.child)
                break; /* output gone (e.g. the reading end of a pipe closed): nothing left to do */
            if (rs.child && rs.child_done && job_over(&rs))
                break; /* --wait-all: the job ended between two SIGCHLDs (its last process was
                        * not our child); this sample was the last */
        }
    }
    if (rs.child && !rs.child_done) {
        /* the loop failed (poll): the command runs on untracked until it ends, and its status
         * is still ours to return (we must not exit before it: it dies with us, PDEATHSIG) */
        int st = 0;
        pid_t w;
        while ((w = waitpid(rs.child, &st, 0)) < 0 && errno == EINTR)
            ;
        if (w == rs.child) {
            rs.child_done = true;
            rs.child_status = st;
        }
    }
    if (rs.child && rs.child_done) {
        int64_t left = job_left(&rs);
        rs.left_behind = left > 0;
        if (left > 0 && rs.wait_signal)
            cli_say("%lld process%s of the job still running (left behind: signal %d ended the wait)",
                    (long long)left, left == 1 ? "" : "es", rs.wait_signal);
        else if (left > 0)
            cli_say("%lld process%s of the job still running (left behind; --wait-all waits for them)",
                    (long long)left, left == 1 ? "" : "es");
    }
    if (rs.child)
        status = rs.child_done ? exit_status_of(rs.child_status) : EXIT_FAIL;
    /* the job's fate is settled: from here on (the stream's end, the summary, the history),
     * the tracker's death leaves what is left of the job alone */
    cli_guardian_release(guard_fd);
    /* the textfile's last word, the server's end, and the last OTLP push beside the stream's end
     * (both within TRACKER_FINISH_TIMEOUT, at the same time) */
    cli_export_end_start(rs.ex, rs.child != 0, status);
    if (rs.stream) {
        /* the last batch and the run's end, within TRACKER_FINISH_TIMEOUT; a clean stop of a
         * run without a command is "finished"; what fails is said and never changes status */
        rt_stream_finish(rs.stream, status, rs.child && status != 0);
        rt_stream_free(rs.stream);
    }
    cli_export_end_wait(rs.ex);
    if (rs.stats)
        finish_run(o, &rs, status, start_secs);
    rt_stats_free(rs.stats);
    rt_report_free(rs.report);
    rt_host_free(rs.host);
    rt_writer_free(rs.writer);
    rt_sampler_free(rs.sampler);
    rt_job_cgroup_free(rs.jcg); /* after the sampler's last reading; one still in use stays */
    rt_cloud_free(rs.cloud);
    close(tfd);
    close(sfd);
    if (out_fd > STDERR_FILENO)
        close(out_fd);
    return status;
}

/* resource-tracker info: the host and the cloud as one JSON object on stdout. */
static int info(const cli_options *o)
{
    if (o->nsub == 1 && (strcmp(o->sub_args[0], "--help") == 0 || strcmp(o->sub_args[0], "-h") == 0)) {
        fputs("Usage: resource-tracker info\n"
              "The host's facts (CPU model, cores, memory, GPUs, storage) and the cloud it runs on\n"
              "(found from the metadata services within 2 s; TRACKER_CLOUD_DISCOVERY=0: none asked)\n"
              "as one JSON object on stdout.\n",
              stdout);
        return 0;
    }
    if (o->nsub > 0) {
        cli_say("info: unexpected argument '%s' (info takes none)", o->sub_args[0]);
        return EXIT_USAGE;
    }
    rt_cloud_discovery *cd = start_cloud(o); /* runs while the host is read */
    rt_host *host = NULL;
    rt_error err = read_host(o, &host);
    if (err != RT_OK) {
        cli_say("cannot read the host's facts: %s", rt_strerror(err));
        rt_cloud_free(cd);
        return EXIT_FAIL;
    }
    const rt_cloud *cloud = rt_cloud_result(cd, 3.0);
    rt_cloud none = {.discovery_secs = NAN}; /* discovery off: every field null */
    char buf[8192];
    size_t n = rt_format_info(host, cloud ? cloud : &none, buf, sizeof buf);
    int rc = 0;
    if (n >= sizeof buf || fwrite(buf, 1, n, stdout) != n || fflush(stdout) != 0)
        rc = EXIT_FAIL;
    rt_host_free(host);
    rt_cloud_free(cd);
    return rc;
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
        printf("resource-tracker %s\n", rt_version());
        cli_options_free(&o);
        return 0;
    }
    if (cli_library_env(&o, err, sizeof err) < 0) {
        cli_say("%s", err);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    if (o.sub) { /* the subcommand table (settings.c); info is this file's */
        rc = o.sub->run ? o.sub->run(&o) : info(&o);
        cli_options_free(&o);
        return rc;
    }
    if (cli_load_config(&o, err, sizeof err) < 0 || cli_merge(&o, err, sizeof err) < 0) {
        cli_say("%s", err);
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
