/* recommend.c - resource-tracker recommend: what a job should ask for next time, from one or more
 * recorded runs (or the last runs of a job in the history database), in the words of Metaflow,
 * Kubernetes and SLURM, with the cheapest fitting server from the Spare Cores Keeper API and,
 * given --instance, what the run cost where it ran and what the cheapest would save. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "settings.h"
#include "history_db.h"
#ifdef RT_STATIC_BUILD
#include "sqlite_dl.h"
#endif

/* --help before its options: the same facts as docs/resource-tracker-recommend.1. */
static const char recommend_usage[] =
    "Usage: resource-tracker recommend FILE... [--json] [--instance VENDOR:TYPE]\n"
    "       resource-tracker recommend --job NAME [--last N] [--any-command] [--history FILE] [--json]\n"
    "                                  [--instance VENDOR:TYPE]\n"
    "       (either form also takes --max-slowdown PCT)\n"
    "\n"
    "Says what a job should ask for next time, from its recorded runs (JSON lines, CSV, the Python\n"
    "resource-tracker's CSV or a snapshot, gzipped or not, read as summary reads them: a stream in\n"
    "under 64 MiB of memory, a line over 16 MiB an error naming the file and the line, exit 2;\n"
    "several files are several runs of one job; a directory stands for its run files; the files of a\n"
    "job that ran on several nodes get the ask per node, sized by the node that needs most, and the\n"
    "job's view) or from its last runs in the run history (those of the newest run's command line\n"
    "unless --any-command; the answer says on how many runs, hosts and users it is based): cores from\n"
    "each run's duration predicted under 1, 2, ... cores (the fewest within --max-slowdown of the\n"
    "run's own; above a CPU quota that throttled it; runs of the history: the mean used, at least 1;\n"
    "the model: docs/answers.md; with phase marks, each phase's own ask and the phase that decided\n"
    "the run's), memory from the highest memory\n"
    "need of the runs (the kernel's peaks where known) plus a headroom of 10% + 10%/runs, rounded up\n"
    "to 128, 256, 512, 1024 or 2048 MiB, then whole GiB (twice the limit an OOM-killed run died at,\n"
    "its need above it unknown, until a run under a larger limit shows it; a run that ran to its\n"
    "time limit: twice its time),\n"
    "GPUs the most kept busy at once, each GPU's memory the smallest of the table of GPU models that\n"
    "holds the most one GPU held (share/resource-tracker/gpu-models.csv; the models named), VRAM as\n"
    "memory. It says which figure drove the memory and the cores,\n"
    "and notes; prints the request as Metaflow (memory in MB, rounded up), Kubernetes (with a node\n"
    "affinity on the GPUs' memory) and SLURM\n"
    "words, and looks up the cheapest on-demand server that fits in the Spare Cores Keeper API\n"
    "(TRACKER_KEEPER_URL, default https://keeper.sparecores.net; 5 s at most), with the energy of a\n"
    "run there when its CPU is in the TDP table (estimated, the model named).\n"
    "\n"
    "Options:\n";
/* --help after its options (cli_settings_help_for writes them from the settings table) */
static const char recommend_usage_tail[] =
    "\n"
    "When the lookup fails the resources are still printed, with one last line instead of the\n"
    "server: \"prices: offline (Keeper not reached: REASON; ...)\" when no reply came (no network,\n"
    "Keeper down or slow), \"prices: unavailable (REASON; ...)\" when Keeper replied wrongly; nothing\n"
    "goes to stderr, --json puts the reason into \"server_lookup_error\", and the exit status is 0.\n"
    "TRACKER_KEEPER_URL=off or --no-price-lookup stops the lookup.\n"
    "\n"
    "Exit status: 0 printed; 1 the history cannot be read, or out of memory; 2 a usage error, a run\n"
    "without valid samples or a tracked process, or no such job in the history.\n";

typedef struct rec_args {
    const char **files;
    size_t nfiles;
    bool json;
    bool no_price_lookup; /* --no-price-lookup: no Keeper lookup (as TRACKER_KEEPER_URL=off) */
    const char *instance; /* "VENDOR:TYPE" as given, or as the history knows it */
    char vendor[CLI_VENDOR_CAP], type[CLI_TYPE_CAP], region[64];
    char from_history[200]; /* the instance found in the history, when --instance was not given */
    const char *job, *history;
    int last;
    bool last_set, help;
    bool any_command;    /* --any-command: the job's runs whatever their command line */
    double max_slowdown; /* --max-slowdown PCT (default 10) */
} rec_args;

/* What a --job answer is based on (the history's who ran what, schema version 12): its runs, the
 * hosts (nodes) they ran on and the users who ran them, and the runs of the job left out because
 * their command line differs from the newest run's. */
typedef struct rec_basis {
    bool have; /* --job: from the history */
    size_t runs, hosts, users, no_user, left_out;
    const char *why; /* why left_out were; NULL: none were */
} rec_basis;

/* The basis of the runs who[idx[0..n)] (idx NULL: who[0..n)) as the library counts it
 * (rt_history_basis_of), left_out runs left out before for the reason why. */
static rec_basis basis_of(const cli_history_who *who, const size_t *idx, size_t n, size_t left_out, const char *why)
{
    rec_basis b = {.have = true, .runs = n, .left_out = left_out, .why = left_out ? why : NULL};
    rt_history_basis h;
    if (rt_history_basis_of(who, idx, n, &h) == RT_OK) {
        b.hosts = h.hosts;
        b.users = h.users;
        b.no_user = h.runs_without_user;
    }
    return b;
}

/* "based on 6 runs on 3 hosts by 2 users" into buf[cap]. */
static const char *basis_words(const rec_basis *b, char *buf, size_t cap)
{
    char users[160];
    if (!b->users)
        snprintf(users, sizeof users, " (their users not recorded)");
    else if (b->no_user)
        snprintf(users, sizeof users, " by %zu user%s (and %zu run%s recorded without its user)", b->users,
                 b->users == 1 ? "" : "s", b->no_user, b->no_user == 1 ? "" : "s");
    else
        snprintf(users, sizeof users, " by %zu user%s", b->users, b->users == 1 ? "" : "s");
    snprintf(buf, cap, "based on %zu run%s on %zu host%s%s", b->runs, b->runs == 1 ? "" : "s", b->hosts,
             b->hosts == 1 ? "" : "s", users);
    return buf;
}

/* The basis as recommend --json's "based_on" object, or null (FILEs). */
static json_t *basis_json(const rec_basis *b)
{
    if (!b || !b->have)
        return json_null();
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:s?}", "runs", (json_int_t)b->runs, "hosts", (json_int_t)b->hosts, "users",
                     (json_int_t)b->users, "runs_without_user", (json_int_t)b->no_user, "left_out",
                     (json_int_t)b->left_out, "left_out_why", b->why);
}

/* Parses o->sub_args. Returns 0, or -1 after saying why (one line). */
static int parse_args(const cli_options *o, rec_args *a)
{
    a->files = calloc((size_t)o->nsub + 1, sizeof *a->files);
    if (!a->files) {
        cli_say("recommend: out of memory");
        return -1;
    }
    a->last = (int)cli_setting_by_opt(CLI_O_LAST)->def;
    a->max_slowdown = cli_setting_by_opt(CLI_O_MAX_SLOWDOWN)->def;
    cli_args args;
    cli_args_init(&args, o, CMD_RECOMMEND, 0);
    for (int k; (k = cli_args_next(&args)) != CLI_ARG_END;) {
        const char *val = args.value;
        cli_value v;
        if (k == CLI_ARG_ERROR)
            return -1;
        if (k == CLI_ARG_WORD) {
            a->files[a->nfiles++] = val;
            continue;
        }
        if (val && cli_args_value(&args, &v) < 0) /* each value through its row */
            return -1;
        switch (args.opt->opt) {
        case CLI_O_HELP: a->help = true; return 0;
        case CLI_O_JSON: a->json = true; break;
        case CLI_O_NO_PRICE_LOOKUP: a->no_price_lookup = true; break; /* as TRACKER_KEEPER_URL=off */
        case CLI_O_ANY_COMMAND: a->any_command = true; break;
        case CLI_O_MAX_SLOWDOWN: a->max_slowdown = v.num; break;
        case CLI_O_INSTANCE: /* VENDOR:TYPE, its parts fitting (CLI_T_INSTANCE) */
            cli_instance_split(val, a->vendor, a->type);
            a->instance = val;
            break;
        case CLI_O_JOB: a->job = val; break;
        case CLI_O_LAST:
            a->last = (int)v.count;
            a->last_set = true;
            break;
        default: a->history = val; break; /* CLI_O_HISTORY */
        }
    }
    if (a->job && a->nfiles > 0) {
        cli_say("recommend: give recorded FILEs or --job NAME, not both");
        return -1;
    }
    if (!a->job && (a->last_set || a->history || a->any_command)) {
        cli_say("recommend: %s goes with --job NAME", a->last_set ? "--last" : a->history ? "--history" : "--any-command");
        return -1;
    }
    if (!a->job && a->nfiles == 0) {
        cli_say("recommend: no recorded run given (FILE... or --job NAME; see --help)");
        return -1;
    }
#ifdef RT_STATIC_BUILD /* the run history is the machine's own SQLite's: docs/install.md */
    char why[300];
    if (a->job && rt_sqlite_load(why, sizeof why) != RT_OK) {
        cli_say("recommend: --job: this static build of resource-tracker uses the machine's own SQLite (the run "
                "history), and here it %s (docs/install.md); or give recorded FILEs", why);
        return -1;
    }
#endif
    return 0;
}

/* Reads one recorded run into a new accumulator (*out; the caller frees it). Returns 0, or
 * the exit status after saying why. */
static int read_run(const char *path, rt_stats **out)
{
    rt_stats *st = NULL;
    if (rt_stats_new_with(NULL, &st) != RT_OK) {
        cli_say("recommend: out of memory");
        return EXIT_FAIL;
    }
    *out = st;
    int rc = cli_read_run(path, &st, 1, NULL);
    if (rc != 0)
        return rc;
    const rt_summary *s = rt_stats_summary(st);
    if (s->samples == 0) {
        cli_say("recommend: %s: no valid sample in the file", path);
        return EXIT_USAGE;
    }
    if (!s->has_process) {
        cli_say("recommend: %s: the run has no tracked process (record with --pid PID or a wrapped command)", path);
        return EXIT_USAGE;
    }
    return 0;
}

/* What the Keeper lookup found. */
typedef struct lookup {
    rt_server cheapest;
    bool have_cheapest;
    rt_server like; /* 0.19: the cheapest with GPUs like the job's, where a smaller GPU would do */
    bool have_like;
    double instance_price; /* NaN: unknown */
    char error[600];       /* "" when nothing failed */
    char note[256];        /* e.g. no server fits; "" when none */
    char prices[1024];     /* the text's quiet line of a failure (cli_prices_line); "" when none */
} lookup;

/* The cheapest server for rec and, with --instance, the instance's price: at most
 * CLI_LOOKUP_SECS in all. Failures are written into l->error (the first one only: the last
 * warning the library logged, else the error's name; --json's server_lookup_error) and, for the
 * text, as one quiet line into l->prices; nothing goes to stderr. */
static void keeper_lookup(const cli_options *o, const rec_args *a, const rt_recommendation *rec, lookup *l)
{
    cli_lookup k;
    cli_keeper_lookup(a->no_price_lookup ? "off" : o->keeper_url, NULL, NULL, rec, a->instance ? a->vendor : NULL, a->instance ? a->type : NULL,
                      a->region[0] ? a->region : NULL, &k);
    l->instance_price = k.price;
    l->like = k.like;
    l->have_like = k.like_err == RT_OK;
    if (k.cheapest_err == RT_OK) {
        l->cheapest = k.cheapest;
        l->have_cheapest = true;
    } else if (k.cheapest_err == RT_ERR_DISABLED) { /* asked for none (TRACKER_KEEPER_URL=off) */
        return;
    } else if (k.cheapest_err == RT_ERR_NOT_FOUND) {
        snprintf(l->note, sizeof l->note, "no on-demand server in Spare Cores Keeper fits the recommendation");
    } else {
        snprintf(l->error, sizeof l->error, "%s", k.cheapest_warning[0] ? k.cheapest_warning : rt_strerror(k.cheapest_err));
        cli_prices_line(&k, "prices", k.cheapest_warning, k.cheapest_err, l->prices, sizeof l->prices);
        return;
    }
    if (k.price_late) {
        snprintf(l->error, sizeof l->error, "no time left for the price of %s", a->instance);
        snprintf(l->prices, sizeof l->prices, "price of %s: no time left for it", a->instance);
    } else if (k.price_err == RT_ERR_NOT_FOUND) {
        snprintf(l->note, sizeof l->note, "Spare Cores Keeper knows no on-demand Linux price of %s", a->instance);
    } else if (k.price_err != RT_OK && k.price_err != RT_ERR_DISABLED) {
        snprintf(l->error, sizeof l->error, "%s", k.price_warning[0] ? k.price_warning : rt_strerror(k.price_err));
        char what[220];
        snprintf(what, sizeof what, "price of %s", a->instance);
        cli_prices_line(&k, what, k.price_warning, k.price_err, l->prices, sizeof l->prices);
    }
}

/* The run's mean CPU seconds over the runs that know theirs; NaN when none does. */
static double mean_cpu_secs(const rt_summary *const *runs, size_t n)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(runs[i]->process_cpu_secs) && runs[i]->process_cpu_secs >= 0) {
            sum += runs[i]->process_cpu_secs;
            k++;
        }
    return k ? sum / (double)k : NAN;
}

/* The energy of a run (its mean CPU time and duration) on the cheapest server, when its CPU is
 * in the TDP table; false when not known (nothing is shown). */
static bool cheapest_energy(const lookup *l, const rt_recommendation *rec, const rt_summary *const *runs, size_t n,
                            rt_server_energy *e)
{
    *e = (rt_server_energy)RT_SERVER_ENERGY_INIT;
    return l->have_cheapest &&
           rt_server_energy_estimate(&l->cheapest, mean_cpu_secs(runs, n), rec->duration_secs, e) == RT_OK;
}

/* joules with 3 significant digits in J, kJ, MJ or GJ: "1.9 kJ" */
static const char *joules_words(double j, char *buf, size_t cap)
{
    static const char *const units[] = {"J", "kJ", "MJ", "GJ"};
    size_t u = 0;
    while (fabs(j) >= 1000 && u + 1 < sizeof units / sizeof units[0]) {
        j /= 1000;
        u++;
    }
    snprintf(buf, cap, "%.3g %s", j, units[u]);
    return buf;
}

/* Dollars to 4 significant digits (at least cents), trailing zeros beyond the cents trimmed:
 * "$0.0052", "$0.00008667", "$5.672", "$1234.50". */
static const char *usd(double v, char *buf, size_t cap)
{
    if (!isfinite(v)) {
        snprintf(buf, cap, "?");
        return buf;
    }
    double m = fabs(v);
    int decimals = m > 0 ? 3 - (int)floor(log10(m)) : 2;
    if (decimals < 2)
        decimals = 2;
    if (decimals > 12)
        decimals = 12;
    int n = snprintf(buf, cap, "$%.*f", decimals, v);
    if (n < 0 || (size_t)n >= cap)
        return buf;
    char *dot = strchr(buf, '.');
    for (char *end = buf + n - 1; dot && end > dot + 2 && *end == '0'; end--)
        *end = '\0';
    return buf;
}

/* The scheduler line without its newline. */
static void sched_line(const rt_recommendation *rec, rt_scheduler s, char *buf, size_t cap)
{
    size_t n = rt_format_recommendation(rec, s, buf, cap);
    if (n >= cap)
        n = cap - 1;
    while (n > 0 && buf[n - 1] == '\n')
        n--;
    buf[n] = '\0';
}

static const char *const sched_names[3] = {"Metaflow", "Kubernetes", "SLURM"};
static const char *const sched_keys[3] = {"metaflow", "kubernetes", "slurm"};

/* " + N MiB of files re-read, kept cached" where the ask keeps the files a run read back after
 * its limit evicted them (0.20), else "". */
static const char *reread_words(const rt_recommendation *rec, char *b, size_t cap)
{
    b[0] = '\0';
    if (isfinite(rec->memory_reread_files_mib))
        snprintf(b, cap, " + %.1f MiB of files re-read, kept cached", rec->memory_reread_files_mib);
    return b;
}

/* What the runs left behind, not in the ask: the most processes one left running after its
 * command exited (0: none), and what they held at its end (NaN: not known). */
static void left_behind(const rt_summary *const *runs, size_t n, double *left, double *mib)
{
    *left = 0;
    *mib = NAN;
    for (size_t i = 0; i < n; i++)
        if (runs[i] && runs[i]->left_behind > *left) {
            *left = runs[i]->left_behind;
            *mib = runs[i]->left_behind_mib;
        }
}

/* The text's lines, each written as it is completed, broken at the output's width (cli_fold_put:
 * the lines wider than it, between words); the JSON goes out as it is. */
static struct {
    size_t width;
    char line[16384]; /* the line so far (a longer one goes out in pieces) */
    size_t n;
} rec_text;

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int k = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    if (!rec_text.width)
        rec_text.width = (size_t)cli_text_width(stdout);
    for (const char *p = s; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        size_t room = sizeof rec_text.line - 1 - rec_text.n, take = len < room ? len : room;
        memcpy(rec_text.line + rec_text.n, p, take);
        rec_text.n += take;
        rec_text.line[rec_text.n] = '\0';
        p += take;
        if (take == len && !nl)
            break;
        cli_fold_put(stdout, rec_text.width, rec_text.line);
        rec_text.n = 0;
        p += take == len; /* past the newline */
    }
    free(s);
}

/* Which figure drove the memory (and the cores), and why, one line each. */
static void print_reasons(const rt_recommendation *rec, const rt_summary *const *runs, size_t n)
{
    char b1[32], rr[80];
    if (rec->memory_source != RT_NEED_UNKNOWN)
        out("memory from: %.1f MiB needed (%s%s)%s + %.0f%% headroom, rounded up%s\n", rec->memory_need_mib,
               rt_need_source_text(rec->memory_source), rec->memory_sampled ? ": a lower bound" : "",
               reread_words(rec, rr, sizeof rr), rec->headroom_pct,
               rec->memory_learn ? "" : rec->oom_killed ? ", and above the OOM kill" : "");
    else
        out("memory from: no figure (memory unknown)\n");
    if (rec->memory_learn) /* 0.20: the floor, not the need, is the ask */
        out("memory floor: %lld MiB, at least twice the limit a run was stopped at (its need above it unknown)\n",
               (long long)rec->memory_floor_mib);
    if (rec->time_floor_secs > 0)
        out("time floor: a run was stopped after %.0f s (its time limit, or a scheduler's signal): the time asked "
               "is at least twice that\n",
               rec->time_floor_secs);
    double left, left_mib;
    left_behind(runs, n, &left, &left_mib);
    if (left > 0 && isfinite(left_mib))
        out("not in the ask: %.0f process%s left behind after the command exited, holding %.1f MiB at the end "
               "(--wait-all counts %s in)\n",
               left, left == 1 ? "" : "es", left_mib, left == 1 ? "it" : "them");
    else if (left > 0)
        out("not in the ask: %.0f process%s left behind after the command exited (--wait-all counts %s in)\n",
               left, left == 1 ? "" : "es",
               left == 1 ? "it" : "them");
    if (rec->vram_per_gpu_mib > 0 && isfinite(rec->vram_per_gpu_need_mib)) /* 0.19: the GPU ask */
        out("vram from: %.1f MiB held on one GPU (%s) + %.0f%% headroom: the smallest GPU memory that holds it "
               "(share/resource-tracker/gpu-models.csv)\n",
               rec->vram_per_gpu_need_mib, rt_need_source_text(rec->vram_per_gpu_source), rec->headroom_pct);
    if (rec->cpu_basis && strcmp(rec->cpu_basis, "mean") != 0) {
        out("cpu from: the fewest cores under which %s predicted within %.0f%% of its own duration%s\n",
               n > 1 ? "each run is" : "the run is", rec->max_slowdown_pct,
               strcmp(rec->cpu_basis, "throttled") == 0 ? ", and above the CPU quota that throttled it" : "");
        if (rec->cpu_phase[0])
            out("cpu decided by: phase \"%s\" (one core fewer would add %.1f s to it)\n", rec->cpu_phase,
                   rec->cpu_phase_fewer_secs);
        return;
    }
    double cores = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(runs[i]->process_cores.mean)) {
            cores += runs[i]->process_cores.mean;
            k++;
        }
    snprintf(b1, sizeof b1, "%.2f", k ? cores / (double)k : 0.0);
    out("cpu from: a mean of %s cores used%s, rounded (at least 1)%s\n", b1, n > 1 ? " (the runs' means averaged)" : "",
           isnan(rec->cpu_quota_cores) ? "" : ", and above the CPU quota");
}

/* A core-hour's price where one is known: the cheapest server's hourly price over its vCPUs
 * (the money a core-hour of the table costs there); NaN without it. */
static double core_hour_usd(const lookup *l)
{
    const rt_server *s = &l->cheapest;
    return l->have_cheapest && s->vcpus > 0 && s->price_usd_per_hour > 0 ? s->price_usd_per_hour / (double)s->vcpus
                                                                          : NAN;
}

/* The runs' tables, text: a row per core count, each run's predicted duration (the runs side by
 * side), core-hours and, with a core-hour's price (NaN: none), money a run; the basis once. */
static void print_cores(const rt_recommendation *rec, const rt_summary *const *runs, size_t n, double price)
{
    size_t most = 0;
    for (size_t i = 0; i < n; i++)
        if (!runs[i]->cores)
            return;
        else if (runs[i]->cores->n > most)
            most = runs[i]->cores->n;
    for (size_t i = 0; i < n; i++) {
        char words[96];
        if (rt_cores_shared_words(runs[i]->cores, words, sizeof words) == 0)
            continue;
        if (n > 1)
            out("run %zu: ", i + 1);
        out("%s:\n  the times below are the job's own, a quiet machine may be faster\n", words); /* 80 columns */
    }
    out("cores  predicted duration%s  core-hours%s%s\n", n > 1 ? " (each run)" : "", n > 1 ? " (each run)" : "",
           isfinite(price) ? (n > 1 ? "  cost a run (each run)" : "  cost a run") : "");
    for (size_t c = 1; c <= most; c++) {
        out("%5zu ", c);
        for (size_t i = 0; i < n; i++) {
            const rt_cores_table *t = runs[i]->cores;
            const rt_cores_row *r = &t->rows[(c > t->n ? t->n : c) - 1];
            double own = rt_cores_own_secs(t);
            double pct = own > 0 ? 100.0 * (r->duration_secs - own) / own : 0;
            out(" %10.1f s (%+4.0f%%)%s", r->duration_secs, fabs(pct) < 0.5 ? 0.0 : pct,
                   r->wait_bound && c <= t->n ? "*" : " ");
        }
        for (size_t i = 0; i < n; i++)
            out(" %10.4f", rt_cores_core_hours(runs[i]->cores, (int64_t)c));
        for (size_t i = 0; isfinite(price) && i < n; i++) {
            char b[32];
            out("  %11s", usd(rt_cores_core_hours(runs[i]->cores, (int64_t)c) * price, b, sizeof b));
        }
        out("%s\n", (int64_t)c == rec->cpu ? "  <- asked" : "");
    }
    const rt_cores_table *t = runs[0]->cores;
    if (t->wait_from && strcmp(t->wait_from, "tasks") == 0)
        out("model: an interval's CPU work over its runnable tasks, at most that wide; time\n"
               "  off a CPU unchanged, other work's waits left out (docs/answers.md)\n");
    else
        out("model: an interval's CPU work runs at most that wide; time off a CPU is unchanged (docs/answers.md)\n");
    if (isfinite(price))
        out("cost: core-hours at the cheapest server's price a vCPU-hour (%s)\n", usd(price, (char[32]){0}, 32));
    if (isfinite(t->cores_had) && (double)most > t->cores_had && t->wait_from && strcmp(t->wait_from, "tasks") == 0)
        out("*: above the %.4g cores the run had: from its tasks' own demand (schedstat)\n", t->cores_had);
    else if (isfinite(t->cores_had) && (double)most > t->cores_had)
        out("*: above the %.4g cores the run had: faster only by its tasks' waits for a CPU (%s)\n", t->cores_had,
               !t->wait_from                        ? "no pressure figure: no gain claimed"
               : strcmp(t->wait_from, "group") == 0 ? "the group's pressure; a bound"
                                                    : "the machine's pressure; a bound, overstated");
}

/* The phases of each run under the asked cores, text: per phase its own time (its table's own
 * duration: other work's waits left out, 0.20), the fewest
 * cores within the bound for it alone, and its predicted duration under the ask and one fewer. */
static void print_phases(const rt_recommendation *rec, const rt_summary *const *runs, size_t n)
{
    int wide = 5; /* the names' column: the longest, at most 32 bytes */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < runs[i]->phase_count; k++) {
            size_t len = strlen(runs[i]->phases[k]->name) + (n > 1 ? 5 : 0);
            wide = len > (size_t)wide ? (len > 32 ? 32 : (int)len) : wide;
        }
    char under[48], fewer[48];
    snprintf(under, sizeof under, "under %lld core%s", (long long)rec->cpu, rec->cpu == 1 ? "" : "s");
    snprintf(fewer, sizeof fewer, "under %lld core%s", (long long)rec->cpu - 1, rec->cpu == 2 ? "" : "s");
    bool any = false;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < runs[i]->phase_count; k++) {
            const rt_phase_summary *p = runs[i]->phases[k];
            const rt_cores_table *t = p->cores;
            if (!t || t->n == 0)
                continue;
            if (!any)
                out("%-*s  %9s  %8s  %14s%s%s\n", wide, n > 1 ? "phase (run)" : "phase", "own time", "own ask", under,
                       rec->cpu > 1 ? "  " : "", rec->cpu > 1 ? fewer : "");
            any = true;
            int64_t own = rt_cores_fewest(t, rec->max_slowdown_pct);
            double own_secs = rt_cores_own_secs(t); /* 0.20: other work's waits out */
            const rt_cores_row *at = &t->rows[((size_t)rec->cpu > t->n ? t->n : (size_t)rec->cpu) - 1];
            char label[64], ask[32], less[64] = "";
            snprintf(label, sizeof label, n > 1 ? "%.32s (%zu)" : "%.32s", p->name, i + 1);
            snprintf(ask, sizeof ask, "%lld core%s", (long long)own, own == 1 ? "" : "s");
            if (rec->cpu > 1) {
                const rt_cores_row *f = &t->rows[((size_t)rec->cpu - 1 > t->n ? t->n : (size_t)rec->cpu - 1) - 1];
                double pct = own_secs > 0 ? 100.0 * (f->duration_secs - own_secs) / own_secs : 0;
                snprintf(less, sizeof less, "  %7.1f s (%+4.0f%%)", f->duration_secs, fabs(pct) < 0.5 ? 0.0 : pct);
            }
            out("%-*s  %7.1f s  %8s  %12.1f s%s%s\n", wide, label, own_secs, ask, at->duration_secs, less,
                   rec->cpu_phase[0] && strcmp(rec->cpu_phase, p->name) == 0 ? "  <- decided" : "");
        }
}

/* The lines of rt_recommendation_gpu_notes (text, into lines[cap]; with the Keeper's servers where
 * it found both, for the saving) and each scheduler's way to the GPUs' memory, as "note:" lines. */
static void print_gpu_notes(const rt_recommendation *rec, const lookup *l)
{
    char text[2048], how[400];
    rt_recommendation_gpu_notes(rec, l->have_cheapest ? &l->cheapest : NULL, l->have_like ? &l->like : NULL, text,
                                sizeof text);
    for (char *p = text, *nl; *p && (nl = strchr(p, '\n')); p = nl + 1)
        out("note: %.*s\n", (int)(nl - p), p);
    for (int i = 0; i < 3; i++)
        if (rt_recommendation_gpu_scheduler_note(rec, (rt_scheduler)i, how, sizeof how) > 0)
            out("note: %s: %s\n", sched_names[i], how);
}

/* Writes the text report to stdout. Returns 0 or EXIT_FAIL when stdout failed. */
static int print_text(const rec_args *a, const rt_recommendation *rec, const lookup *l, const rt_summary *const *runs,
                      size_t nruns, const rec_basis *basis)
{
    char b1[64], b2[64], line[512];
    double hours = rec->duration_secs / 3600.0;
    out("runs: %llu (mean duration %.1f s)\n", (unsigned long long)rec->runs, rec->duration_secs);
    if (basis->have)
        out("%s\n", basis_words(basis, line, sizeof line));
    rt_note notes[RT_NOTES_MAX];
    size_t nn = rt_recommend_notes(runs, nruns, rec, notes, RT_NOTES_MAX);
    for (size_t i = 0; i < nn; i++) /* why it is above what the runs used: before the figures */
        if (notes[i].kind == RT_NOTE_OOM_KILLED || notes[i].kind == RT_NOTE_CPU_THROTTLED)
            out("%s\n", notes[i].text);
    out("cpu: %lld core%s\n", (long long)rec->cpu, rec->cpu == 1 ? "" : "s");
    if (rec->memory_mib == RT_NULL_I64)
        out("memory: unknown\n");
    else
        out("memory: %lld MiB (%.2f GiB)\n", (long long)rec->memory_mib, (double)rec->memory_mib / 1024.0);
    char gw[200];
    if (rt_recommendation_gpu_words(rec, gw, sizeof gw) > 0) /* 0.19: "1 GPU with >= 40 GiB (peak 33.1 GiB)" */
        out("gpu: %s\n", gw);
    else
        out("gpu: %lld\n", (long long)rec->gpu);
    if (rec->vram_per_gpu_mib > 0)
        out("vram: %lld MiB (%.2f GiB) each GPU\n", (long long)rec->vram_per_gpu_mib, rec->vram_per_gpu_gib);
    else
        out("vram: %lld MiB (%.2f GiB)\n", (long long)rec->vram_mib, (double)rec->vram_mib / 1024.0);
    print_reasons(rec, runs, nruns);
    char words[300];
    if (rt_recommendation_time_words(rec, words, sizeof words) > 0)
        out("time: %s\n", words);
    for (int i = 0; i < 3; i++) {
        sched_line(rec, (rt_scheduler)i, line, sizeof line);
        out("%s: %s\n", sched_names[i], line);
    }
    for (size_t i = 0; i < nn; i++)
        if (notes[i].kind != RT_NOTE_OOM_KILLED && notes[i].kind != RT_NOTE_CPU_THROTTLED)
            out("note: %s\n", notes[i].text);
    print_gpu_notes(rec, l);
    print_cores(rec, runs, nruns, core_hour_usd(l));
    print_phases(rec, runs, nruns);
    const rt_server *s = l->have_cheapest ? &l->cheapest : NULL;
    double cheap_cost = s ? s->price_usd_per_hour * hours : NAN;
    if (s) {
        out("cheapest server: %s %s (%s): %lld vCPUs, %.0f MiB (%.2f GiB), %s GPUs, %s/hour\n", s->vendor_id,
               s->api_reference, s->display_name[0] ? s->display_name : s->api_reference, (long long)s->vcpus,
               s->memory_mib, s->memory_mib / 1024.0,
               s->gpu_count == RT_NULL_I64 ? "?" : (snprintf(b2, sizeof b2, "%lld", (long long)s->gpu_count), b2),
               usd(s->price_usd_per_hour, b1, sizeof b1));
        out("cost of the run there: %s\n", usd(cheap_cost, b1, sizeof b1));
        rt_server_energy e;
        if (cheapest_energy(l, rec, runs, nruns, &e))
            out("energy on the cheapest server: %s (%s)\n", joules_words(e.energy_joules, b1, sizeof b1), e.words);
    }
    if (a->instance && !isnan(l->instance_price)) {
        double cost = l->instance_price * hours;
        out("instance: %s:%s%s%s, %s/hour%s\n", a->vendor, a->type, a->region[0] ? " in " : "", a->region,
               usd(l->instance_price, b1, sizeof b1), a->from_history[0] ? " (where the last run ran)" : "");
        out("cost of the run on the instance: %s\n", usd(cost, b1, sizeof b1));
        if (s && !isnan(cheap_cost)) {
            out("saving on the cheapest server: %s", usd(cost - cheap_cost, b1, sizeof b1));
            if (cost > 0) /* a free instance or a run of no time: no share of nothing */
                out(" (%.1f%%)", 100.0 * (cost - cheap_cost) / cost);
            out("\n");
        }
    }
    if (l->note[0])
        out("note: %s\n", l->note);
    if (l->prices[0])
        out("%s\n", l->prices);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_FAIL;
}

/* Sets key in obj to a number, or null when v is NaN. */
static void set_num(json_t *obj, const char *key, double v)
{
    json_object_set_new(obj, key, isfinite(v) ? json_real(v) : json_null());
}

/* The recommendation object of recommend --json (docs/contracts.md §8): the library's one writer
 * of rt_recommendation (rt_format_recommendation_json, which the summary's object shares), read
 * into jansson (its numbers read back as written); NULL when out of memory. */
static json_t *recommendation_json(const rt_recommendation *rec, const lookup *l)
{
    const rt_server *smaller = l->have_cheapest ? &l->cheapest : NULL, *like = l->have_like ? &l->like : NULL;
    size_t n = rt_format_recommendation_json(rec, smaller, like, NULL, 0);
    char *text = n ? malloc(n + 1) : NULL;
    json_t *r = NULL;
    if (text && rt_format_recommendation_json(rec, smaller, like, text, n + 1) == n)
        r = json_loads(text, 0, NULL);
    free(text);
    return r;
}

/* Writes the JSON object to stdout. Returns 0 or EXIT_FAIL. */
static int print_json(const rec_args *a, const rt_recommendation *rec, const lookup *l, const rt_summary *const *runs,
                      size_t nruns, const rec_basis *basis)
{
    char line[512];
    double hours = rec->duration_secs / 3600.0;
    json_t *root = json_object(), *r = recommendation_json(rec, l), *sch = json_object();
    if (!r) {
        json_decref(root);
        json_decref(sch);
        cli_say("recommend: out of memory");
        return EXIT_FAIL;
    }
    json_object_set_new(root, "runs", json_integer((json_int_t)rec->runs));
    json_object_set_new(root, "based_on", basis_json(basis));
    set_num(root, "duration_secs", rec->duration_secs);
    double left, left_mib; /* 0.20: what the runs left behind, not in the ask */
    left_behind(runs, nruns, &left, &left_mib);
    json_object_set_new(r, "left_behind", json_integer((json_int_t)left));
    set_num(r, "left_behind_mib", left_mib);
    json_object_set_new(root, "recommendation", r);
    json_t *tables = json_array();
    for (size_t i = 0; i < nruns; i++)
        json_array_append_new(tables, cli_cores_json(runs[i]->cores, core_hour_usd(l)));
    json_object_set_new(root, "cores", tables);
    json_t *phases = json_array(); /* each run's phases: name, own ask, table */
    for (size_t i = 0; i < nruns && phases; i++) {
        json_t *list = json_array();
        for (size_t k = 0; list && k < runs[i]->phase_count; k++) {
            const rt_phase_summary *p = runs[i]->phases[k];
            int64_t own = rt_cores_fewest(p->cores, rec->max_slowdown_pct);
            json_array_append_new(list, json_pack("{s:s,s:o,s:o}", "name", p->name, "cores_asked",
                                                  own > 0 ? json_integer(own) : json_null(), "cores",
                                                  cli_cores_json(p->cores, core_hour_usd(l))));
        }
        json_array_append_new(phases, list ? list : json_null());
    }
    json_object_set_new(root, "phases", phases ? phases : json_null());
    rt_note notes[RT_NOTES_MAX];
    json_object_set_new(root, "notes", cli_notes_json(notes, rt_recommend_notes(runs, nruns, rec, notes, RT_NOTES_MAX)));
    for (int i = 0; i < 3; i++) {
        sched_line(rec, (rt_scheduler)i, line, sizeof line);
        json_object_set_new(sch, sched_keys[i], json_string(line));
    }
    json_object_set_new(root, "schedulers", sch);
    double cheap_cost = NAN;
    if (l->have_cheapest) {
        const rt_server *s = &l->cheapest;
        cheap_cost = s->price_usd_per_hour * hours;
        json_t *c = json_object();
        json_object_set_new(c, "vendor_id", json_string(s->vendor_id));
        json_object_set_new(c, "api_reference", json_string(s->api_reference));
        json_object_set_new(c, "display_name", json_string(s->display_name));
        json_object_set_new(c, "vcpus", json_integer(s->vcpus));
        set_num(c, "memory_mib", s->memory_mib);
        json_object_set_new(c, "gpu_count", s->gpu_count == RT_NULL_I64 ? json_null() : json_integer(s->gpu_count));
        set_num(c, "price_usd_per_hour", s->price_usd_per_hour);
        set_num(c, "run_cost_usd", cheap_cost);
        json_object_set_new(c, "cpu_manufacturer", s->cpu_manufacturer[0] ? json_string(s->cpu_manufacturer) : json_null());
        json_object_set_new(c, "cpu_family", s->cpu_family[0] ? json_string(s->cpu_family) : json_null());
        json_object_set_new(c, "cpu_model", s->cpu_model[0] ? json_string(s->cpu_model) : json_null());
        rt_server_energy e;
        if (cheapest_energy(l, rec, runs, nruns, &e)) { /* 0.15: the run's energy there */
            json_t *ej = json_object();
            set_num(ej, "joules", e.energy_joules);
            json_object_set_new(ej, "method", json_string(e.method));
            json_object_set_new(ej, "cpu", json_string(e.cpu));
            set_num(ej, "tdp_watts", e.tdp_watts);
            json_object_set_new(ej, "threads_per_package", json_integer(e.threads_per_package));
            set_num(ej, "busy_watts", e.busy_watts);
            set_num(ej, "idle_watts", e.idle_watts);
            set_num(ej, "cpu_secs", mean_cpu_secs(runs, nruns));
            set_num(ej, "duration_secs", rec->duration_secs);
            json_object_set_new(ej, "words", json_string(e.words));
            json_object_set_new(c, "energy", ej);
        } else {
            json_object_set_new(c, "energy", json_null());
        }
        json_object_set_new(root, "cheapest", c);
    } else {
        json_object_set_new(root, "cheapest", json_null());
    }
    if (l->have_like) { /* 0.19: the cheapest server with GPUs like the job's (the GPU ask's saving) */
        json_t *c = json_object();
        json_object_set_new(c, "vendor_id", json_string(l->like.vendor_id));
        json_object_set_new(c, "api_reference", json_string(l->like.api_reference));
        json_object_set_new(c, "display_name", json_string(l->like.display_name));
        json_object_set_new(c, "gpu_count",
                            l->like.gpu_count == RT_NULL_I64 ? json_null() : json_integer(l->like.gpu_count));
        set_num(c, "price_usd_per_hour", l->like.price_usd_per_hour);
        json_object_set_new(root, "gpu_like_this", c);
    } else {
        json_object_set_new(root, "gpu_like_this", json_null());
    }
    if (a->instance) {
        json_t *in = json_object();
        double cost = l->instance_price * hours;
        json_object_set_new(in, "vendor_id", json_string(a->vendor));
        json_object_set_new(in, "api_reference", json_string(a->type));
        set_num(in, "price_usd_per_hour", l->instance_price);
        set_num(in, "run_cost_usd", cost);
        set_num(in, "saving_usd", cost - cheap_cost);
        set_num(in, "saving_pct", cost > 0 ? 100.0 * (cost - cheap_cost) / cost : NAN);
        json_object_set_new(root, "instance", in);
    }
    json_t *err = l->error[0] ? json_string(l->error) : json_null();
    if (!err) /* the reason is not UTF-8 (e.g. a TRACKER_KEEPER_URL that is not): the key stays */
        err = json_string("the server lookup failed (its reason is not valid UTF-8)");
    json_object_set_new(root, "server_lookup_error", err);
    json_object_set_new(root, "note", l->note[0] ? json_string(l->note) : json_null());
    char *text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (!text) {
        cli_say("recommend: out of memory");
        return EXIT_FAIL;
    }
    int rc = printf("%s\n", text) < 0 || fflush(stdout) != 0 ? EXIT_FAIL : 0;
    free(text);
    return rc;
}

/* ---- a job on several nodes: the ask per node ---------------------------------------- */

/* What one node of the view's ask is, as a recommendation (for the server lookup). */
static rt_recommendation node_rec(const rt_job_view *v)
{
    rt_recommendation r = RT_RECOMMENDATION_INIT;
    r.cpu = v->ask_cores_per_task * v->ask_tasks_per_node;
    r.memory_mib = v->ask_memory_mib_per_node;
    r.gpu = v->ask_gpus_per_node;
    r.time_limit_secs = v->ask_time_limit_secs;
    r.runs = 1;
    r.duration_secs = v->end_secs - v->start_secs;
    return r;
}

/* The ask per node of the job of v, in the three schedulers' words, the nodes that decided it, the
 * cheapest server for a node and the job's cost there; then the view (text), or all of it as one
 * JSON object. */
static int print_job(const rec_args *a, const rt_job_view *v, const lookup *l, const rec_basis *basis)
{
    char words[3][400], b1[64], b2[256];
    for (int i = 0; i < 3; i++)
        rt_job_view_ask(v, (rt_scheduler)i, words[i], sizeof words[i]);
    const rt_job_node *mem = &v->nodes[v->memory_most], *cores = &v->nodes[v->cores_most];
    double hours = (v->end_secs - v->start_secs) / 3600.0;
    const rt_server *s = l->have_cheapest ? &l->cheapest : NULL;
    double cost = s ? s->price_usd_per_hour * hours * (double)v->ask_nodes : NAN;
    if (a->json) {
        json_t *root = json_object(), *sch = json_object();
        json_object_set_new(root, "job_id", json_string(v->job_id));
        json_object_set_new(root, "based_on", basis_json(basis));
        json_object_set_new(root, "nodes", json_integer(v->ask_nodes));
        json_object_set_new(root, "tasks_per_node", json_integer(v->ask_tasks_per_node));
        json_object_set_new(root, "cpu_per_task", json_integer(v->ask_cores_per_task));
        json_object_set_new(root, "memory_mib_per_node", v->ask_memory_mib_per_node == RT_NULL_I64
                                                             ? json_null()
                                                             : json_integer(v->ask_memory_mib_per_node));
        json_object_set_new(root, "gpu_per_node", json_integer(v->ask_gpus_per_node));
        set_num(root, "time_limit_secs", v->ask_time_limit_secs);
        json_object_set_new(root, "memory_sized_by", json_string(mem->node));
        json_object_set_new(root, "cores_sized_by", json_string(cores->node));
        for (int i = 0; i < 3; i++)
            json_object_set_new(sch, sched_keys[i], json_string(words[i]));
        json_object_set_new(root, "schedulers", sch);
        if (s) {
            json_t *c = json_object();
            json_object_set_new(c, "vendor_id", json_string(s->vendor_id));
            json_object_set_new(c, "api_reference", json_string(s->api_reference));
            json_object_set_new(c, "vcpus", json_integer(s->vcpus));
            set_num(c, "memory_mib", s->memory_mib);
            set_num(c, "price_usd_per_hour", s->price_usd_per_hour);
            set_num(c, "job_cost_usd", cost);
            json_object_set_new(root, "cheapest_per_node", c);
        } else {
            json_object_set_new(root, "cheapest_per_node", json_null());
        }
        json_object_set_new(root, "server_lookup_error", l->error[0] ? json_string(l->error) : json_null());
        json_object_set_new(root, "note", l->note[0] ? json_string(l->note) : json_null());
        char small[16384], *buf = small;
        size_t n = 0;
        json_t *view = NULL;
        if (rt_format_job_view_json(v, buf, sizeof small, &n) == RT_OK &&
            (n < sizeof small || ((buf = malloc(n + 1)) && rt_format_job_view_json(v, buf, n + 1, &n) == RT_OK)))
            view = json_loads(buf, 0, NULL);
        if (buf != small)
            free(buf);
        json_object_set_new(root, "view", view ? view : json_null());
        char *text = json_dumps(root, JSON_COMPACT);
        json_decref(root);
        int rc = text && printf("%s\n", text) >= 0 && fflush(stdout) == 0 ? 0 : EXIT_FAIL;
        free(text);
        return rc;
    }
    out("job: %s (%zu node%s, %zu run%s)\n", v->job_id, v->node_count, v->node_count == 1 ? "" : "s", v->runs,
           v->runs == 1 ? "" : "s");
    if (basis->have)
        out("%s\n", basis_words(basis, b2, sizeof b2));
    out("nodes: %lld\ntasks per node: %lld\n", (long long)v->ask_nodes, (long long)v->ask_tasks_per_node);
    out("cpu: %lld core%s per task\n", (long long)v->ask_cores_per_task, v->ask_cores_per_task == 1 ? "" : "s");
    if (v->ask_memory_mib_per_node == RT_NULL_I64)
        out("memory: unknown\n");
    else
        out("memory: %lld MiB (%.2f GiB) per node\n", (long long)v->ask_memory_mib_per_node,
               (double)v->ask_memory_mib_per_node / 1024.0);
    out("gpu: %lld per node\n", (long long)v->ask_gpus_per_node);
    out("memory sized by: %s (it needs %.1f MiB%s)\n", mem->node, mem->memory_need_mib,
           mem->memory_sampled ? ", a lower bound" : "");
    bool same = true; /* every node asks the same cores: no node decided them */
    for (size_t i = 0; i < v->node_count; i++)
        same &= v->nodes[i].ask_cores == cores->ask_cores;
    if (same)
        out("cores sized by: every node (each asks %lld core%s)\n", (long long)cores->ask_cores,
               cores->ask_cores == 1 ? "" : "s");
    else
        out("cores sized by: %s (%lld core%s on the node)\n", cores->node, (long long)cores->ask_cores,
               cores->ask_cores == 1 ? "" : "s");
    for (int i = 0; i < 3; i++)
        out("%s: %s\n", sched_names[i], words[i]);
    if (s) {
        out("cheapest server per node: %s %s: %lld vCPUs, %.0f MiB, %s/hour\n", s->vendor_id, s->api_reference,
               (long long)s->vcpus, s->memory_mib, usd(s->price_usd_per_hour, b1, sizeof b1));
        out("cost of the job there: %s (%lld nodes)\n", usd(cost, b1, sizeof b1), (long long)v->ask_nodes);
    }
    if (l->note[0])
        out("note: %s\n", l->note);
    if (l->prices[0])
        out("%s\n", l->prices);
    out("\n");
    rt_summary_text_options to = RT_SUMMARY_TEXT_OPTIONS_INIT;
    to.scheduler = cli_scheduler_of(NULL);
    to.width = cli_text_width(stdout);
    if (rt_job_view_write_text_cb(v, &to, cli_write_stdio, stdout) != RT_OK)
        return EXIT_FAIL;
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_FAIL;
}

/* When runs[0..n) hold two runs or more of one job: its ask per node printed, *done set; the
 * others are said to be left out, by their file's name (a->files), or for runs of the history
 * (no files) the job is the newest run's, and the older runs of other jobs are said unused.
 * 0, or the exit status. */
static int recommend_job(const cli_options *o, const rec_args *a, const rt_summary *const *runs, size_t n,
                         const cli_history_who *who, bool *done)
{
    *done = false;
    size_t *idx = calloc(n, sizeof *idx);
    const rt_summary **job = calloc(n, sizeof *job);
    if (!idx || !job) {
        free(idx);
        free(job);
        cli_say("recommend: out of memory");
        return EXIT_FAIL;
    }
    size_t k = 0;
    if (!a->job) {
        k = cli_job_runs("recommend", runs, (char *const *)a->files, n, idx);
    } else { /* the history's, newest first: the newest run's job */
        k = rt_job_pick(runs, n, 1, idx);
        if (k >= 2 && k < n)
            cli_say("recommend: the ask per node is from the newest job of '%s' (%s, %zu runs); its %zu older "
                    "run%s of other jobs %s not used",
                    a->job, runs[0]->member->job_id, k, n - k, n - k == 1 ? "" : "s", n - k == 1 ? "is" : "are");
    }
    for (size_t i = 0; i < k; i++)
        job[i] = runs[idx[i]];
    rt_job_view *v = NULL;
    int rc = 0;
    if (k >= 2) {
        *done = true;
        if (rt_job_view_new(job, k, &v) != RT_OK) {
            cli_say("recommend: out of memory");
            rc = EXIT_FAIL;
        } else {
            rt_recommendation r = node_rec(v);
            lookup l;
            memset(&l, 0, sizeof l);
            if (r.memory_mib != RT_NULL_I64)
                keeper_lookup(o, a, &r, &l);
            rec_basis b = who ? basis_of(who, idx, k, n - k, "runs of other jobs than the newest run's")
                              : (rec_basis){0};
            rc = print_job(a, v, &l, &b);
        }
    }
    rt_job_view_free(v);
    free(idx);
    free(job);
    return rc;
}

int cli_recommend_main(cli_options *o)
{
    rec_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(o, &a) < 0 ? EXIT_USAGE : 0;
    if (rc == 0 && a.help) {
        cli_settings_help_for(stdout, CMD_RECOMMEND, recommend_usage, recommend_usage_tail);
        free(a.files);
        return 0;
    }
    rt_stats **stats = NULL;
    const rt_summary **runs = NULL;
    rt_summary *hist = NULL;
    cli_history_who *who = NULL; /* --job: who ran each of hist */
    size_t left_out = 0;         /* --job: the runs of another command line left out */
    char **paths = NULL;       /* the files, each directory replaced by its run files */
    const char **given = NULL; /* the arguments as given, while a.files points at paths */
    size_t n = 0;
    if (rc == 0 && a.job) {
        char why[600];
        const char *path = cli_history_path(o, a.history ? a.history : o->args.history);
        if (!path)
            rc = EXIT_USAGE;
        else if (rt_history_job_runs(path, a.job, a.last, !a.last_set, &hist, &n, &who, why, sizeof why) != RT_DB_OK) {
            cli_say("history %s: %s", history_shown(path), why);
            rc = EXIT_FAIL;
        } else if (n == 0) {
            cli_say("recommend: no successful run of job '%s' in %s", a.job, history_shown(path));
            rc = EXIT_USAGE;
        }
        /* without --instance: the server the job's newest run ran on, when discovery found it */
        if (rc == 0 && !a.instance &&
            cli_history_instance(path, a.job, a.vendor, sizeof a.vendor, a.type, sizeof a.type, a.region,
                                 sizeof a.region) == 0 &&
            a.vendor[0] && a.type[0]) {
            snprintf(a.from_history, sizeof a.from_history, "%s:%s", a.vendor, a.type);
            a.instance = a.from_history;
        }
        if (rc == 0 && !(runs = calloc(n, sizeof *runs)))
            rc = EXIT_FAIL;
        for (size_t i = 0; rc == 0 && i < n; i++)
            runs[i] = &hist[i];
    } else if (rc == 0) {
        size_t np = 0; /* a directory stands for its run files */
        rc = cli_run_paths("recommend", (char *const *)a.files, a.nfiles, &paths, &np);
        if (rc == 0) {
            given = a.files;
            a.files = (const char **)paths;
            a.nfiles = np;
        }
    }
    if (rc == 0 && !a.job) {
        stats = calloc(a.nfiles, sizeof *stats);
        runs = calloc(a.nfiles, sizeof *runs);
        if (!stats || !runs)
            rc = EXIT_FAIL;
        for (size_t i = 0; rc == 0 && i < a.nfiles; i++) {
            rc = read_run(a.files[i], &stats[i]);
            if (rc == 0)
                runs[n++] = rt_stats_summary(stats[i]);
        }
    }
    if (rc == 0 && n >= 2) { /* a job's nodes: the ask per node */
        bool done = false;
        rc = recommend_job(o, &a, runs, n, who, &done);
        if (done)
            goto out;
    }
    size_t *same = rc == 0 && who && !a.any_command ? malloc((n ? n : 1) * sizeof *same) : NULL;
    if (rc == 0 && who && !a.any_command && !same) {
        cli_say("recommend: out of memory");
        rc = EXIT_FAIL;
    } else if (same) { /* not a job's nodes: the newest run's command line only */
        size_t k = rt_history_same_command(who, n, same);
        for (size_t j = 0; j < k; j++) { /* same[j] >= j: moved down in place */
            runs[j] = runs[same[j]];
            who[j] = who[same[j]];
        }
        free(same);
        left_out = n - k;
        n = k;
        if (left_out)
            cli_say("recommend: %zu of the last %zu runs of job '%s' left out: their command line differs from the "
                    "newest run's (--any-command uses them)",
                    left_out, n + left_out, a.job);
    }
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    rt_recommend_options ro = RT_RECOMMEND_OPTIONS_INIT;
    ro.max_slowdown_pct = a.max_slowdown;
    if (rc == 0 && rt_recommend_with(&ro, runs, n, &rec) != RT_OK) {
        cli_say("recommend: the runs have no tracked process to recommend from");
        rc = EXIT_USAGE;
    }
    if (rc == 0) {
        lookup l;
        memset(&l, 0, sizeof l);
        keeper_lookup(o, &a, &rec, &l);
        rec_basis b = who ? basis_of(who, NULL, n, left_out, "their command line differs from the newest run's")
                          : (rec_basis){0};
        rc = a.json ? print_json(&a, &rec, &l, runs, n, &b) : print_text(&a, &rec, &l, runs, n, &b);
    }
out:
    for (size_t i = 0; stats && i < a.nfiles; i++)
        if (stats[i])
            rt_stats_free(stats[i]);
    free(stats);
    free(runs);
    rt_history_free(hist); /* who with it */
    if (given) {
        cli_run_paths_free(paths, a.nfiles);
        a.files = given;
    }
    free(a.files);
    return rc;
}
