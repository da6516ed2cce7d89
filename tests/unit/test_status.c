/* test_status.c - the human view's lines (status.c), with stderr a pipe: the start line, the
 * status line drawn from a sample (erased and redrawn in place, cut to the width, at most once
 * a second), a line of the tool's that erases it first, the erasing at the end; on a
 * pseudo-terminal its width, the GPU's figures and a job's raw-mode screen left alone; and which
 * view a run gets; the log view's lines. */
#include "unit.h"

#include <math.h>
#include <sys/ioctl.h>
#include <termios.h>

#include "cli.h"
#include "status.h"

#define ERASE "\r\033[K"

/* stderr made the write end of a pipe: returns its read end (non-blocking); *saved: stderr. */
static int stderr_to_pipe(int *saved)
{
    int p[2];
    assert_int_equal(pipe2(p, O_NONBLOCK), 0);
    *saved = dup(STDERR_FILENO);
    assert_true(*saved >= 0);
    assert_int_equal(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
    close(p[1]);
    return p[0];
}

static void stderr_back(int saved)
{
    dup2(saved, STDERR_FILENO);
    close(saved);
}

/* Everything written to the pipe so far, into a static buffer. */
static const char *drain(int fd)
{
    static char buf[8192];
    size_t at = 0;
    ssize_t n;
    while (at < sizeof buf - 1 && (n = read(fd, buf + at, sizeof buf - 1 - at)) > 0)
        at += (size_t)n;
    buf[at] = '\0';
    return buf;
}

static void lines_of_a_run(void **state)
{
    (void)state;
    rt_cpu cpu = {.utilization_pct = 1.75, .core_count = 2};
    rt_memory mem = {.used_mib = 2048};
    rt_process proc = {.cores_used = 1.5, .pss_mib = 512, .rss_mib = 600};
    rt_sample s = {.cpu = &cpu, .memory = &mem, .process = &proc};
    char *cmd[] = {"sleep", "3", NULL};
    cli_options o;
    memset(&o, 0, sizeof o);
    o.command = cmd;
    o.interval = 0.5;
    int saved, rd = stderr_to_pipe(&saved);

    cli_status_start(&o, CLI_VIEW_HUMAN, true);
    cli_status_sample(&s); /* drawn: the first sample */
    proc.cores_used = 0.25;
    cli_status_sample(&s); /* not drawn: within the second; its peak kept */
    cli_say("warning: %s", "something");
    cli_status_end();
    cli_say("after");
    const char *out = drain(rd);
    stderr_back(saved);

    const char *want_start = "resource-tracker: tracking `sleep 3` and the processes it starts, every 0.5 s; samples "
                             "not kept (-o FILE keeps them); Ctrl-C stops the command\n";
    assert_memory_equal(out, want_start, strlen(want_start));
    out += strlen(want_start);
    /* the status line, in 79 columns at most (a pipe has no width: 80 taken) */
    const char *line = "resource-tracker 0:00 | job 1.50 cores, 512 MiB | peak 1.50 cores, 512 MiB";
    assert_memory_equal(out, ERASE, 4);
    assert_memory_equal(out + 4, line, strlen(line));
    out += 4 + strlen(line);
    /* the tool's line erases it first; the end erases nothing more (already erased), and after
     * it lines are written plainly */
    assert_string_equal(out, ERASE "resource-tracker: warning: something\nresource-tracker: after\n");
    close(rd);
}

/* The status line's clock in peak_and_redraw: moved by the test, never waited for. */
static double fake_now = 1000.0;
static double fake_clock(void)
{
    return fake_now;
}

static void peak_and_redraw(void **state)
{
    (void)state;
    rt_cpu cpu = {.utilization_pct = 1.75, .core_count = 2};
    rt_memory mem = {.used_mib = 2048};
    rt_sample s = {.cpu = &cpu, .memory = &mem};
    cli_options o;
    memset(&o, 0, sizeof o);
    o.interval = 1;
    int saved, rd = stderr_to_pipe(&saved);
    cli_status_test_clock(fake_clock);
    cli_status_start(&o, CLI_VIEW_HUMAN, true);
    cli_status_sample(&s);
    cpu.utilization_pct = 0.5;
    mem.used_mib = NAN; /* unknown: "-", and the peak stays */
    fake_now += 0.9; /* within the second: not drawn */
    cli_status_sample(&s);
    fake_now += 0.2; /* 1.1 s after the first: drawn again */
    cli_status_sample(&s);
    cli_status_end();
    cli_status_test_clock(NULL);
    const char *out = drain(rd);
    stderr_back(saved);
    assert_non_null(strstr(out, "tracking the whole machine (no command given), every 1 s"));
    assert_non_null(strstr(out, "Ctrl-C stops and prints the summary\n"));
    assert_non_null(strstr(out, ERASE "resource-tracker 0:00 | machine 1.75 cores, 2.0 GiB | peak 1.75 cores, 2.0 GiB"
                                      ERASE));
    assert_non_null(strstr(out, ERASE "resource-tracker 0:01 | machine 0.50 cores, - | peak 1.75 cores, 2.0 GiB" ERASE));
    assert_null(strstr(out, "0:00 | machine 0.50")); /* the sample within the second was not drawn */
    /* erased at the end, and nothing after it */
    size_t n = strlen(out);
    assert_true(n > 4 && strcmp(out + n - 4, ERASE) == 0);
    close(rd);
}

/* A terminal 60 columns wide as stderr (its other end returned, non-blocking). */
static int stderr_to_terminal(int *saved, unsigned short cols, unsigned short rows)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(m >= 0);
    assert_int_equal(grantpt(m), 0);
    assert_int_equal(unlockpt(m), 0);
    int s = open(ptsname(m), O_RDWR | O_NOCTTY);
    assert_true(s >= 0);
    struct winsize ws = {.ws_row = rows, .ws_col = cols};
    assert_int_equal(ioctl(s, TIOCSWINSZ, &ws), 0);
    struct termios t;
    assert_int_equal(tcgetattr(s, &t), 0);
    t.c_oflag &= ~(tcflag_t)OPOST; /* the bytes as written */
    assert_int_equal(tcsetattr(s, TCSANOW, &t), 0);
    *saved = dup(STDERR_FILENO);
    assert_int_equal(dup2(s, STDERR_FILENO), STDERR_FILENO);
    close(s);
    fcntl(m, F_SETFL, O_NONBLOCK);
    return m;
}

static void gpu_and_width_on_a_terminal(void **state)
{
    (void)state;
    rt_gpu g1 = {.utilization_pct = 30, .vram_used_bytes = 1u << 30}, g2 = {.utilization_pct = 50, .vram_used_bytes = 0};
    const rt_gpu *gpus[] = {&g1, &g2};
    rt_cpu cpu = {.utilization_pct = 1};
    rt_memory mem = {.used_mib = 100};
    rt_sample s = {.cpu = &cpu, .memory = &mem, .gpu = gpus, .gpu_count = 2};
    cli_options o;
    memset(&o, 0, sizeof o);
    o.interval = 1;
    int saved, m = stderr_to_terminal(&saved, 150, 24);
    cli_status_start(&o, CLI_VIEW_HUMAN, true);
    cli_status_sample(&s);
    cli_status_end();
    const char *out = drain(m);
    /* the last row kept (rows 1-23 scroll), drawn there with the cursor saved and restored, given back */
    assert_non_null(strstr(out, "\n\0337\033[1;23r\0338\033[1A"
                                "\0337\033[24;1H\033[Kresource-tracker 0:00 | machine 1.00 cores, 100 MiB | peak 1.00 "
                                "cores, 100 MiB | GPU 40%, 1.0 GiB\0338"
                                "\0337\033[24;1H\033[2K\033[r\0338"));
    /* narrow: cut to one column less than the terminal */
    close(m);
    stderr_back(saved);
    m = stderr_to_terminal(&saved, 30, 24);
    cli_status_start(&o, CLI_VIEW_HUMAN, true);
    cli_status_sample(&s);
    cli_status_end();
    out = drain(m);
    stderr_back(saved);
    assert_non_null(strstr(out, "\033[24;1H\033[Kresource-tracker 0:00 | machi\0338"));
    /* a terminal of 3 rows: in place, erased at the end */
    close(m);
    m = stderr_to_terminal(&saved, 30, 3);
    cli_status_start(&o, CLI_VIEW_HUMAN, true);
    cli_status_sample(&s);
    cli_status_end();
    out = drain(m);
    stderr_back(saved);
    assert_non_null(strstr(out, ERASE "resource-tracker 0:00 | machi" ERASE));
    assert_null(strstr(out, "\0337"));
    /* a program of the job with the terminal in raw mode: nothing drawn into its screen */
    close(m);
    m = stderr_to_terminal(&saved, 150, 24);
    struct termios t;
    tcgetattr(STDERR_FILENO, &t);
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    tcsetattr(STDERR_FILENO, TCSANOW, &t);
    cli_status_start(&o, CLI_VIEW_HUMAN, true);
    cli_status_sample(&s);
    cli_status_end();
    out = drain(m);
    stderr_back(saved);
    assert_null(strstr(out, "resource-tracker 0:00"));
    assert_non_null(strstr(out, "tracking the whole machine"));
    close(m);
}

static void not_live_writes_no_status(void **state)
{
    (void)state;
    rt_cpu cpu = {.utilization_pct = 1};
    rt_sample s = {.cpu = &cpu};
    cli_options o;
    memset(&o, 0, sizeof o);
    o.pid = 42;
    o.interval = 2;
    o.output = "run.jsonl";
    int saved, rd = stderr_to_pipe(&saved);
    cli_status_start(&o, CLI_VIEW_HUMAN, false); /* stderr no terminal: the start line only */
    cli_status_sample(&s);
    cli_status_end();
    const char *out = drain(rd);
    stderr_back(saved);
    assert_string_equal(out, "resource-tracker: tracking PID 42's process tree, every 2 s; samples to run.jsonl; "
                             "Ctrl-C stops tracking and prints the summary\n");
    close(rd);
}

static void which_view(void **state)
{
    (void)state;
    cli_options o;
    memset(&o, 0, sizeof o);
    int saved, rd = stderr_to_pipe(&saved); /* stderr no terminal */
    assert_int_equal(cli_view_resolve(&o), CLI_VIEW_SAMPLES);
    o.view = CLI_VIEW_HUMAN;
    assert_int_equal(cli_view_resolve(&o), CLI_VIEW_HUMAN);
    o.quiet = true; /* nothing on the terminal, whatever the view */
    assert_int_equal(cli_view_resolve(&o), CLI_VIEW_SAMPLES);
    /* a log people read: each place's variable (with its value), the samples view elsewhere */
    o.quiet = false;
    o.view = CLI_VIEW_AUTO;
    static const char *const vars[][2] = {{"GITHUB_ACTIONS", "true"}, {"GITLAB_CI", "true"},
                                          {"JENKINS_URL", "http://ci.example/"}, {"BUILDKITE", "true"},
                                          {"SLURM_JOB_ID", "903"}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        setenv(vars[i][0], vars[i][1], 1);
        assert_int_equal(cli_view_resolve(&o), CLI_VIEW_LOG);
        o.output = "run.jsonl"; /* the samples to a file: the log still gets the lines */
        assert_int_equal(cli_view_resolve(&o), CLI_VIEW_LOG);
        o.output = NULL;
        o.view = CLI_VIEW_SAMPLES; /* --view samples keeps them on stderr everywhere */
        assert_int_equal(cli_view_resolve(&o), CLI_VIEW_SAMPLES);
        o.view = CLI_VIEW_AUTO;
        setenv(vars[i][0], "", 1); /* empty: not there */
        assert_int_equal(cli_view_resolve(&o), CLI_VIEW_SAMPLES);
        unsetenv(vars[i][0]);
    }
    setenv("GITHUB_ACTIONS", "false", 1); /* the value it must have */
    assert_int_equal(cli_view_resolve(&o), CLI_VIEW_SAMPLES);
    unsetenv("GITHUB_ACTIONS");
    stderr_back(saved);
    close(rd);
    /* on a terminal: human, also with -o FILE; samples when they come to a terminal on stdout */
    int m = stderr_to_terminal(&saved, 80, 24);
    assert_int_equal(cli_view_resolve(&o), CLI_VIEW_HUMAN);
    o.output = "run.jsonl";
    assert_int_equal(cli_view_resolve(&o), CLI_VIEW_HUMAN);
    o.output = "-";
    int out_saved = dup(STDOUT_FILENO);
    assert_int_equal(dup2(STDERR_FILENO, STDOUT_FILENO), STDOUT_FILENO);
    assert_int_equal(cli_view_resolve(&o), CLI_VIEW_SAMPLES);
    dup2(out_saved, STDOUT_FILENO);
    close(out_saved);
    stderr_back(saved);
    close(m);
}

/* The log view: the start line says where the samples went and what the log gets; a progress
 * line of its own (no erasing, no cursor moves) a minute after the last, and at each sample
 * that carries phase marks; nothing between. */
static void log_view_lines(void **state)
{
    (void)state;
    rt_process proc = {.cores_used = 1.5, .pss_mib = 512, .rss_mib = 600};
    rt_sample s = {.process = &proc};
    char *cmd[] = {"make", "-j2", NULL};
    cli_options o;
    memset(&o, 0, sizeof o);
    o.command = cmd;
    o.interval = 1;
    o.output = "/ws/resource-tracker-host.1.jsonl";
    setenv("GITHUB_ACTIONS", "true", 1);
    int saved, rd = stderr_to_pipe(&saved);
    fake_now = 1000.0;
    cli_status_test_clock(fake_clock);
    cli_status_start(&o, CLI_VIEW_LOG, false);
    cli_status_sample(&s); /* at the start: nothing */
    fake_now += 30;
    proc.cores_used = 2;
    cli_status_sample(&s); /* half a minute: nothing, its peak kept */
    fake_now += 30.5;
    proc.cores_used = 1;
    cli_status_sample(&s); /* a minute: a line */
    fake_now += 1;
    rt_phase_mark start = RT_PHASE_MARK_INIT, stop = RT_PHASE_MARK_INIT;
    start.kind = RT_PHASE_START;
    start.name = "train";
    stop.kind = RT_PHASE_STOP;
    stop.name = "load";
    cli_status_mark(&stop);
    cli_status_mark(&start);
    cli_status_sample(&s); /* phase marks: a line at once */
    fake_now += 1;
    cli_status_sample(&s); /* nothing */
    cli_status_end();
    cli_status_test_clock(NULL);
    unsetenv("GITHUB_ACTIONS");
    const char *out = drain(rd);
    stderr_back(saved);
    assert_string_equal(out, "resource-tracker: tracking `make -j2` and the processes it starts, every 1 s; samples to "
                             "/ws/resource-tracker-host.1.jsonl; a line a minute and at each phase, the answer at the "
                             "end (the log of GitHub Actions: --view samples writes the samples here)\n"
                             "resource-tracker 1:00 | job 1.00 cores, 512 MiB | peak 2.00 cores, 512 MiB\n"
                             "resource-tracker 1:01 | phase load ended, train started | job 1.00 cores, 512 MiB | "
                             "peak 2.00 cores, 512 MiB\n");
    close(rd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lines_of_a_run),
        cmocka_unit_test(peak_and_redraw),
        cmocka_unit_test(gpu_and_width_on_a_terminal),
        cmocka_unit_test(not_live_writes_no_status),
        cmocka_unit_test(which_view),
        cmocka_unit_test(log_view_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
