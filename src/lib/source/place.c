/* place.c - where the job runs (SLURM, Kubernetes, GitHub Actions), what it was given there and
 * who it is there (the public rt_place_*): read from the environment's variables (docs/where.md
 * names each), the SLURM time limit asked of scontrol or squeue (place_query.c). A malformed
 * value is one warning and not said; nothing is ever made up. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"

#define PLACE_MAX_TAGS 16
#define PLACE_MAX_STRINGS 32

struct rt_place {
    rt_request req;
    rt_job job;
    rt_member_copy member; /* the run's place in a job of several (member.c) */
    const char *tags[PLACE_MAX_TAGS];
    char *owned[PLACE_MAX_STRINGS]; /* every string the job points to */
    size_t nowned;
    bool nomem;
};

/* The detection's state: the environment read, where warnings go. */
typedef struct place_ctx {
    const char *const *envp;
    rt_logger log;
    const rt_place_options *opts;
    rt_place *p;
} place_ctx;

/* The value of name, or NULL when unset or empty. */
static const char *ev(const place_ctx *c, const char *name)
{
    const char *v = rt_place_getenv(c->envp, name);
    return v && *v ? v : NULL;
}

/* The one warning of a value that could not be read. */
static void warn_value(const place_ctx *c, const char *name, const char *value, const char *what)
{
    rt_log(&c->log, RT_LOG_WARN, "%s: %s: '%.80s'%s; not used", name, what, value, strlen(value) > 80 ? "..." : "");
}

/* A copy of s owned by the place (NULL for NULL, and when out of room or memory). */
static const char *own(rt_place *p, char *s)
{
    if (!s || p->nowned == PLACE_MAX_STRINGS) {
        if (s)
            free(s);
        else
            p->nomem = true;
        return NULL;
    }
    p->owned[p->nowned++] = s;
    return s;
}

static const char *keep(rt_place *p, const char *s)
{
    return s ? own(p, strdup(s)) : NULL;
}

/* Adds the tag key=value when value is set. */
static void tag(place_ctx *c, const char *key, const char *value)
{
    rt_place *p = c->p;
    if (!value || p->job.tag_count == PLACE_MAX_TAGS)
        return;
    char *t = NULL;
    if (asprintf(&t, "%s=%s", key, value) < 0) {
        p->nomem = true;
        return;
    }
    const char *k = own(p, t);
    if (k)
        p->tags[p->job.tag_count++] = k;
}

/* Tags each named as its variable says, in order; a variable not set gives none. */
typedef struct env_tag {
    const char *key, *var;
} env_tag;
static void env_tags(place_ctx *c, const env_tag *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tag(c, t[i].key, ev(c, t[i].var));
}

/* A whole number 0 .. max with nothing around it but blanks. Returns 0 and *out, or -1. */
static int parse_whole(const char *s, double max, double *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n')
        end++;
    if (errno || *end || (double)v > max)
        return -1;
    *out = (double)v;
    return 0;
}

/* SLURM memory: megabytes (SLURM's MB are MiB), or a number with a unit K M G T as sbatch takes. */
static int parse_slurm_mib(const char *s, double *mib)
{
    char num[32];
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        n--;
    double scale = 1;
    if (n > 1) {
        switch (s[n - 1]) {
        case 'K': case 'k': scale = 1.0 / 1024; n--; break;
        case 'M': case 'm': n--; break;
        case 'G': case 'g': scale = 1024; n--; break;
        case 'T': case 't': scale = 1024.0 * 1024; n--; break;
        default: break;
        }
    }
    if (n == 0 || n >= sizeof num)
        return -1;
    memcpy(num, s, n);
    num[n] = '\0';
    double v;
    if (parse_whole(num, 1e12, &v) < 0)
        return -1;
    *mib = v * scale;
    return 0;
}

/* A count of GPUs as SLURM's --gpus* options are given: "2", "a100:2", "gpu:a100:2", and
 * comma-separated lists of these ("a100:2,v100:1": summed). Returns 0 and *out, or -1. */
static int parse_gpu_spec(const char *s, double *out)
{
    double sum = 0;
    const char *p = s;
    for (;;) {
        size_t n = strcspn(p, ",");
        const char *item = p, *colon = NULL;
        for (const char *q = item; q < item + n; q++)
            if (*q == ':')
                colon = q;
        const char *count = colon ? colon + 1 : item;
        char buf[32];
        size_t cn = (size_t)(item + n - count);
        double v;
        if (cn == 0 || cn >= sizeof buf)
            return -1;
        memcpy(buf, count, cn);
        buf[cn] = '\0';
        if (parse_whole(buf, 1e6, &v) < 0)
            return -1;
        sum += v;
        p += n;
        if (!*p)
            break;
        p++;
    }
    *out = sum;
    return 0;
}

/* A list of GPU indices ("0,1", "0-3,6"): how many. Returns 0 and *out, or -1. */
static int parse_index_list(const char *s, double *out)
{
    double count = 0;
    const char *p = s;
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (*end == '-') {
            if (end[1] < '0' || end[1] > '9')
                return -1;
            b = strtoul(end + 1, &end, 10);
            if (b < a || b - a > 100000)
                return -1;
        }
        count += (double)(b - a + 1);
        if (*end == '\0' || *end == '\n')
            break;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
    *out = count;
    return 0;
}

/* CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES: entries separated by commas (indices, GPU-
 * or MIG- UUIDs); an entry starting with '-' ("-1") hides it and every later one, as CUDA does. */
static double count_devices(const char *s)
{
    double count = 0;
    const char *p = s;
    while (*p) {
        size_t n = strcspn(p, ",");
        const char *e = p;
        while (e < p + n && (*e == ' ' || *e == '\t'))
            e++;
        if (*e == '-')
            break;
        if (e < p + n)
            count++;
        p += n;
        if (*p)
            p++;
    }
    return count;
}

/* ---- SLURM -------------------------------------------------------------------------------- */

static void slurm_cores(place_ctx *c)
{
    static const char *const vars[] = {"SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE"};
    rt_request *r = &c->p->req;
    for (size_t i = 0; i < 2; i++) {
        const char *v = ev(c, vars[i]);
        if (!v)
            continue;
        double n;
        if (parse_whole(v, 1e7, &n) < 0 || n == 0) {
            warn_value(c, vars[i], v, "not a number of CPUs above 0");
            return;
        }
        r->cpu_cores = n;
        r->cpu_from = vars[i];
        return;
    }
}

static void slurm_memory(place_ctx *c)
{
    rt_request *r = &c->p->req;
    double mib;
    const char *v = ev(c, "SLURM_MEM_PER_NODE");
    if (v) {
        if (parse_slurm_mib(v, &mib) < 0) {
            warn_value(c, "SLURM_MEM_PER_NODE", v, "not a number of megabytes");
            return;
        }
        if (mib > 0) { /* 0: the node's whole memory (sbatch --mem=0), not a figure */
            r->memory_mib = mib;
            r->memory_from = "SLURM_MEM_PER_NODE";
        }
        return;
    }
    v = ev(c, "SLURM_MEM_PER_CPU");
    if (!v)
        return;
    if (parse_slurm_mib(v, &mib) < 0) {
        warn_value(c, "SLURM_MEM_PER_CPU", v, "not a number of megabytes");
        return;
    }
    if (mib > 0 && r->cpu_from) {
        r->memory_mib = mib * r->cpu_cores;
        r->memory_from = "SLURM_MEM_PER_CPU";
    }
}

static void slurm_gpus(place_ctx *c)
{
    rt_request *r = &c->p->req;
    static const struct {
        const char *name;
        int kind; /* 0: a count, 1: a --gpus spec, 2: an index list, 3: CUDA's list */
    } vars[] = {{"SLURM_GPUS_ON_NODE", 0}, {"SLURM_GPUS_PER_NODE", 1}, {"SLURM_GPUS", 1},
                {"SLURM_GPUS_PER_TASK", 1}, {"SLURM_STEP_GPUS", 2},     {"SLURM_JOB_GPUS", 2}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = ev(c, vars[i].name);
        if (!v)
            continue;
        double n;
        int bad = vars[i].kind == 0   ? parse_whole(v, 1e6, &n)
                  : vars[i].kind == 1 ? parse_gpu_spec(v, &n)
                                      : parse_index_list(v, &n);
        if (bad < 0) {
            warn_value(c, vars[i].name, v, vars[i].kind == 2 ? "not a list of GPU indices" : "not a number of GPUs");
            return;
        }
        r->gpus = n;
        r->gpus_from = vars[i].name;
        return;
    }
    const char *cuda = rt_place_getenv(c->envp, "CUDA_VISIBLE_DEVICES");
    if (cuda) {
        r->gpus = strcmp(cuda, "NoDevFiles") == 0 ? 0 : count_devices(cuda);
        r->gpus_from = "CUDA_VISIBLE_DEVICES";
    }
}

/* The tasks of this srun step on this node: SLURM_STEP_TASKS_PER_NODE in SLURM's form
 * ("2(x3),1": 2 tasks on each of the first 3 nodes, 1 on the 4th), the entry of this node
 * (SLURM_NODEID). 1 outside a task of a step (no SLURM_LOCALID: a batch script has the node's
 * whole share), or when it cannot be read. */
static double local_tasks(const place_ctx *c)
{
    const char *v = ev(c, "SLURM_STEP_TASKS_PER_NODE"), *nid = ev(c, "SLURM_NODEID");
    double node = 0;
    if (!ev(c, "SLURM_LOCALID") || !v || (nid && parse_whole(nid, 1e6, &node) < 0))
        return 1;
    double first = 0; /* the index of the entry's first node */
    while (*v) {
        char *end;
        errno = 0;
        unsigned long tasks = strtoul(v, &end, 10), repeat = 1;
        if (end == v || errno)
            return 1;
        if (strncmp(end, "(x", 2) == 0) {
            const char *r = end + 2;
            repeat = strtoul(r, &end, 10);
            if (end == r || *end != ')' || repeat == 0)
                return 1;
            end++;
        }
        if (*end != ',' && *end != '\0')
            return 1; /* not SLURM's form: not read */
        if (node < first + (double)repeat)
            return tasks > 0 ? (double)tasks : 1;
        first += (double)repeat;
        if (*end == '\0')
            return 1;
        v = end + 1;
    }
    return 1;
}

/* A step of several tasks on this node (srun -n N without --cpus-per-task): a task's share of
 * the node's figures (the node's cores, memory, GPUs divided by its tasks), said so in *_from. */
static void slurm_task_share(place_ctx *c)
{
    double n = local_tasks(c);
    if (!(n > 1))
        return;
    rt_request *r = &c->p->req;
    static const char *const node_wide[] = {"SLURM_CPUS_ON_NODE", "SLURM_MEM_PER_NODE", "SLURM_GPUS_ON_NODE",
                                            "SLURM_GPUS_PER_NODE", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS",
                                            "CUDA_VISIBLE_DEVICES"};
    struct {
        double *v;
        const char **from;
    } f[] = {{&r->cpu_cores, &r->cpu_from}, {&r->memory_mib, &r->memory_from}, {&r->gpus, &r->gpus_from}};
    bool cpu_divided = false;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        const char *from = *f[i].from;
        bool wide = false;
        for (size_t k = 0; from && k < sizeof node_wide / sizeof node_wide[0]; k++)
            wide |= strcmp(from, node_wide[k]) == 0;
        /* memory per CPU follows the cores it was multiplied by */
        wide |= i == 1 && from && strcmp(from, "SLURM_MEM_PER_CPU") == 0 && cpu_divided;
        if (!wide)
            continue;
        char *text = NULL;
        if (asprintf(&text, "%s / %.0f tasks", from, n) < 0) {
            c->p->nomem = true;
            continue;
        }
        const char *kept = own(c->p, text);
        if (!kept)
            continue;
        *f[i].v /= n;
        *f[i].from = kept;
        cpu_divided |= i == 0;
    }
}

/* Whether id looks like a SLURM job id (digits, an array's "123_4", a het job's "123+1"). */
static bool job_id_ok(const char *id)
{
    if (*id < '0' || *id > '9' || strlen(id) > 40)
        return false;
    return strspn(id, "0123456789_+") == strlen(id);
}

static void slurm_time(place_ctx *c, const char *id)
{
    rt_request *r = &c->p->req;
    const char *end = ev(c, "SLURM_JOB_END_TIME"), *start = ev(c, "SLURM_JOB_START_TIME");
    if (end && start) {
        double e, s;
        if (parse_whole(end, 1e11, &e) < 0)
            warn_value(c, "SLURM_JOB_END_TIME", end, "not a Unix time");
        else if (parse_whole(start, 1e11, &s) < 0)
            warn_value(c, "SLURM_JOB_START_TIME", start, "not a Unix time");
        else if (e > s) {
            r->time_limit_secs = e - s;
            r->time_limit_from = "SLURM_JOB_END_TIME";
            r->job_start_secs = s;
            return;
        }
    }
    if (c->opts && c->opts->no_query)
        return;
    const char *procid = ev(c, "SLURM_PROCID");
    if (procid && strcmp(procid, "0") != 0) /* one query a step (its first task), not one per task */
        return;
    if (!job_id_ok(id)) {
        warn_value(c, "SLURM_JOB_ID", id, "not a job id (asked of neither scontrol nor squeue)");
        return;
    }
    double timeout = c->opts && c->opts->query_timeout_secs > 0 ? c->opts->query_timeout_secs : 2.0;
    char out[16384], why[160];
    const char *sc[] = {"scontrol", "show", "job", "-o", id, NULL};
    const char *sq[] = {"squeue", "-h", "-j", id, "-o", "%l %S", NULL};
    const char *const *argv = sc;
    int rc = rt_place_run(sc, c->envp, timeout, out, sizeof out, why, sizeof why);
    if (rc == 1) {
        argv = sq;
        rc = rt_place_run(sq, c->envp, timeout, out, sizeof out, why, sizeof why);
    }
    if (rc == 1) /* neither on the PATH: no time limit, nothing to say */
        return;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "%s %s", argv[0], argv == sc ? "show job -o" : "-h -j");
    if (rc < 0) {
        rt_log(&c->log, RT_LOG_WARN, "%s %s: %s; the job's time limit is not known", cmd, id, why);
        return;
    }
    rt_slurm_times t;
    if ((argv == sc ? rt_slurm_parse_scontrol(out, &t) : rt_slurm_parse_squeue(out, &t)) < 0) {
        char first[81];
        size_t n = strcspn(out, "\n");
        snprintf(first, sizeof first, "%.*s", (int)(n > 80 ? 80 : n), out);
        rt_log(&c->log, RT_LOG_WARN, "%s %s: an answer without a time limit that can be read: '%s'%s; not used", cmd,
               id, first, n > 80 ? "..." : "");
        return;
    }
    if (t.limit == 1 && t.limit_secs > 0) {
        r->time_limit_secs = t.limit_secs;
        r->time_limit_from = argv[0];
    }
    if (t.start == 1)
        r->job_start_secs = t.start_secs;
}

static void slurm(place_ctx *c, const char *id)
{
    rt_place *p = c->p;
    p->req.place = "slurm";
    slurm_cores(c);
    slurm_memory(c);
    slurm_gpus(c);
    slurm_task_share(c);
    slurm_time(c, id);
    rt_job *j = &p->job;
    j->orchestrator = "slurm";
    j->job_name = keep(p, ev(c, "SLURM_JOB_NAME"));
    const char *aj = ev(c, "SLURM_ARRAY_JOB_ID"), *at = ev(c, "SLURM_ARRAY_TASK_ID");
    char *run = NULL;
    if (aj && at) {
        if (asprintf(&run, "%s_%s", aj, at) < 0)
            run = NULL, p->nomem = true;
        j->external_run_id = own(p, run);
    } else {
        j->external_run_id = keep(p, id);
    }
    static const env_tag tags[] = {{"user", "SLURM_JOB_USER"},        {"account", "SLURM_JOB_ACCOUNT"},
                                   {"partition", "SLURM_JOB_PARTITION"}, {"cluster", "SLURM_CLUSTER_NAME"},
                                   {"node", "SLURMD_NODENAME"},          {"step", "SLURM_STEP_ID"}};
    env_tags(c, tags, sizeof tags / sizeof tags[0]);
    if (aj && at)
        tag(c, "array_task", at);
}

/* ---- Kubernetes --------------------------------------------------------------------------- */

/* The request's figure from NAME_REQUEST, else NAME_LIMIT: a Kubernetes quantity (the downward
 * API writes a whole number of the divisor: cores, bytes). */
static void k8s_figure(place_ctx *c, const char *req_var, const char *lim_var, double scale, double *fig,
                       const char **from)
{
    const char *vars[] = {req_var, lim_var};
    for (size_t i = 0; i < 2; i++) {
        const char *v = ev(c, vars[i]);
        if (!v)
            continue;
        double q;
        if (rt_k8s_parse_quantity(v, &q) < 0) {
            warn_value(c, vars[i], v, "not a Kubernetes quantity");
            return;
        }
        if (q > 0) { /* 0: none set */
            *fig = q * scale;
            *from = vars[i];
            return;
        }
    }
}

static void kubernetes(place_ctx *c)
{
    rt_place *p = c->p;
    rt_request *r = &p->req;
    r->place = "kubernetes";
    k8s_figure(c, "CPU_REQUEST", "CPU_LIMIT", 1, &r->cpu_cores, &r->cpu_from);
    k8s_figure(c, "MEMORY_REQUEST", "MEMORY_LIMIT", 1.0 / (1024 * 1024), &r->memory_mib, &r->memory_from);
    const char *nv = rt_place_getenv(c->envp, "NVIDIA_VISIBLE_DEVICES");
    if (nv && strcmp(nv, "all") != 0) { /* all: as many as the node has, a count not said here */
        r->gpus = (strcmp(nv, "none") == 0 || strcmp(nv, "void") == 0) ? 0 : count_devices(nv);
        r->gpus_from = "NVIDIA_VISIBLE_DEVICES";
    }
    rt_job *j = &p->job;
    const char *pod = ev(c, "POD_NAME");
    if (!pod)
        pod = ev(c, "HOSTNAME"); /* a pod's host name is its name unless the spec sets one */
    const char *job = ev(c, "POD_JOB_NAME");
    j->orchestrator = "kubernetes";
    j->job_name = keep(p, job ? job : pod);
    j->external_run_id = keep(p, ev(c, "POD_UID"));
    tag(c, "namespace", ev(c, "POD_NAMESPACE"));
    tag(c, "pod", pod);
    tag(c, "node", ev(c, "NODE_NAME"));
}

int rt_k8s_parse_quantity(const char *s, double *out)
{
    if (!s)
        return -1;
    const char *p = s;
    while (*p == ' ')
        p++;
    if (*p == '+')
        p++;
    double v = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        digits++;
    }
    if (*p == '.') {
        p++;
        double f = 0.1;
        while (*p >= '0' && *p <= '9') {
            v += (*p++ - '0') * f;
            f /= 10;
            digits++;
        }
    }
    if (!digits)
        return -1;
    /* an exponent: e or E followed by a digit or a signed digit ("129e6"); "E" alone is exa */
    if ((*p == 'e' || *p == 'E') &&
        ((p[1] >= '0' && p[1] <= '9') || ((p[1] == '+' || p[1] == '-') && p[2] >= '0' && p[2] <= '9'))) {
        char *end;
        long e = strtol(p + 1, &end, 10);
        if (e > 30 || e < -30)
            return -1;
        v *= pow(10, (double)e);
        p = end;
    } else {
        static const struct {
            const char *suffix;
            double scale;
        } units[] = {{"Ki", 1024.0},
                     {"Mi", 1048576.0},
                     {"Gi", 1073741824.0},
                     {"Ti", 1099511627776.0},
                     {"Pi", 1125899906842624.0},
                     {"Ei", 1152921504606846976.0},
                     {"m", 1e-3},
                     {"k", 1e3},
                     {"M", 1e6},
                     {"G", 1e9},
                     {"T", 1e12},
                     {"P", 1e15},
                     {"E", 1e18}};
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t n = strlen(units[i].suffix);
            if (strncmp(p, units[i].suffix, n) == 0) {
                v *= units[i].scale;
                p += n;
                break;
            }
        }
    }
    while (*p == ' ' || *p == '\n')
        p++;
    if (*p || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* ---- GitHub Actions ----------------------------------------------------------------------- */

static void github(place_ctx *c)
{
    rt_place *p = c->p;
    p->req.place = "github-actions";
    rt_job *j = &p->job;
    j->orchestrator = "github-actions";
    j->job_name = keep(p, ev(c, "GITHUB_JOB"));
    j->external_run_id = keep(p, ev(c, "GITHUB_RUN_ID"));
    static const env_tag tags[] = {{"workflow", "GITHUB_WORKFLOW"},       {"repository", "GITHUB_REPOSITORY"},
                                   {"run_number", "GITHUB_RUN_NUMBER"},   {"run_attempt", "GITHUB_RUN_ATTEMPT"},
                                   {"sha", "GITHUB_SHA"},                 {"ref", "GITHUB_REF"},
                                   {"runner", "RUNNER_NAME"}};
    env_tags(c, tags, sizeof tags / sizeof tags[0]);
}

/* ---- the public calls ----------------------------------------------------------------------- */

rt_error rt_place_detect(const rt_place_options *opts, rt_place **out)
{
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    if (opts && opts->struct_size < offsetof(rt_place_options, log_user) + sizeof(void *))
        return RT_ERR_INVALID;
    rt_place *p = calloc(1, sizeof *p);
    if (!p)
        return RT_ERR_NOMEM;
    p->req.struct_size = sizeof p->req;
    p->job.struct_size = sizeof p->job;
    p->job.tags = p->tags;
    place_ctx c = {.envp = opts ? opts->envp : NULL, .opts = opts, .p = p};
    if (opts)
        c.log = (rt_logger){opts->log, opts->log_user};
    const char *slurm_id = ev(&c, "SLURM_JOB_ID");
    const char *gha = ev(&c, "GITHUB_ACTIONS");
    rt_member_detect(c.envp, &c.log, &p->member);
    if (slurm_id)
        slurm(&c, slurm_id);
    else if (ev(&c, "KUBERNETES_SERVICE_HOST"))
        kubernetes(&c);
    else if (gha && strcmp(gha, "true") == 0)
        github(&c);
    if (p->nomem) {
        rt_place_free(p);
        return RT_ERR_NOMEM;
    }
    *out = p;
    return RT_OK;
}

const rt_request *rt_place_request(const rt_place *p)
{
    return p ? &p->req : NULL;
}

const rt_job *rt_place_job(const rt_place *p)
{
    return p ? &p->job : NULL;
}

const rt_member *rt_place_member(const rt_place *p)
{
    return p ? &p->member.m : NULL;
}

void rt_place_free(rt_place *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nowned; i++)
        free(p->owned[i]);
    free(p);
}
