/* config.c - the TOML config file: [job] (name, pid, metadata, tags), [tracker]
 * (interval_secs, format, output, quiet, summary, report, cgroup, wait_all, expected_cores, gpus),
 * [history] (path) and [export] (prometheus, prometheus_textfile, otlp, otlp_interval). Every problem is reported as
 * FILE:LINE:COL with the known keys listed; nothing unknown is silently ignored. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "toml.h"

#define MAX_CONFIG_BYTES (1u << 20)

#define CONF_ERR(kv, ...)                                                                                              \
    do {                                                                                                               \
        int n_ = snprintf(err, errlen, "%s:%d:%d: ", name, (kv)->line, (kv)->col);                                     \
        if (n_ > 0 && (size_t)n_ < errlen)                                                                             \
            snprintf(err + n_, errlen - (size_t)n_, __VA_ARGS__);                                                      \
        return -1;                                                                                                     \
    } while (0)

static const char *const tracker_keys[] = {"interval_secs", "format", "output", "quiet", "summary", "report", "cgroup",
                                           "wait_all", "expected_cores", "gpus"};

/* Writes the [job] keys, comma-separated, into buf (for "unknown key" messages). */
static void known_job_keys(char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < META_COUNT; i++) {
        int n = snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", cli_meta_fields[i].config_key);
        if (n < 0 || (size_t)n >= cap - o)
            return;
        o += (size_t)n;
        if (i == 0) {
            n = snprintf(buf + o, cap - o, ", pid");
            if (n < 0 || (size_t)n >= cap - o)
                return;
            o += (size_t)n;
        }
    }
    snprintf(buf + o, cap - o, ", tags");
}

/* Whether the value of kv is a string. */
static bool is_str(const toml_kv *kv)
{
    return kv->val->type == TOML_STRING && strlen(kv->val->u.str.s) == kv->val->u.str.len;
}

/* [job] tags: an array of "k=v" strings or a table of k = "v". Returns 0, or -1 with
 * "FILE:LINE:COL: problem" in err. */
static int parse_tags(cli_layer *out, const char *name, const toml_kv *kv, char *err, size_t errlen)
{
    const toml_value *v = kv->val;
    if (v->type == TOML_ARRAY) {
        for (size_t i = 0; i < v->u.arr.n; i++) {
            const toml_value *t = v->u.arr.items[i];
            if (t->type != TOML_STRING || strlen(t->u.str.s) != t->u.str.len || cli_check_tag(t->u.str.s) < 0) {
                toml_kv at = {.line = t->line, .col = t->col};
                CONF_ERR(&at, "[job] tags: each tag must be a \"key=value\" string");
            }
            if (cli_add_tag(out, t->u.str.s) < 0)
                CONF_ERR(kv, "out of memory");
        }
        return 0;
    }
    if (v->type == TOML_TABLE) {
        for (size_t i = 0; i < v->u.tab.n; i++) {
            const toml_kv *e = &v->u.tab.kv[i];
            if (!is_str(e) || e->key_len == 0 || strlen(e->key) != e->key_len || strchr(e->key, '='))
                CONF_ERR(e, "[job.tags] %s: a tag must be a plain key with a string value", e->key);
            size_t need = e->key_len + 1 + e->val->u.str.len + 1;
            char *t = malloc(need);
            if (!t)
                CONF_ERR(e, "out of memory");
            snprintf(t, need, "%s=%s", e->key, e->val->u.str.s);
            int rc = cli_add_tag(out, t);
            free(t);
            if (rc < 0)
                CONF_ERR(e, "out of memory");
        }
        return 0;
    }
    CONF_ERR(kv, "[job] tags must be an array of \"key=value\" strings or a table, not %s", toml_type_name(v->type));
}

/* The [job] table into out. Returns 0, or -1 with the problem and its place in err. */
static int parse_job(cli_layer *out, const char *name, const toml_value *t, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->u.tab.n; i++) {
        const toml_kv *kv = &t->u.tab.kv[i];
        if (strcmp(kv->key, "pid") == 0) {
            if (kv->val->type != TOML_INTEGER || kv->val->u.i <= 0 || kv->val->u.i > INT_MAX)
                CONF_ERR(kv, "[job] pid must be a positive integer (a process id)");
            out->pid = (long)kv->val->u.i;
            out->pid_set = true;
            continue;
        }
        if (strcmp(kv->key, "tags") == 0) {
            if (parse_tags(out, name, kv, err, errlen) < 0)
                return -1;
            continue;
        }
        int m = -1;
        for (int k = 0; k < META_COUNT; k++)
            if (strcmp(kv->key, cli_meta_fields[k].config_key) == 0)
                m = k;
        if (m < 0 || kv->key_len != strlen(kv->key)) {
            char known[512];
            known_job_keys(known, sizeof known);
            CONF_ERR(kv, "unknown key '%s' in [job] (known keys: %s)", kv->key, known);
        }
        if (!is_str(kv))
            CONF_ERR(kv, "[job] %s must be a string, not %s", kv->key, toml_type_name(kv->val->type));
        free(out->meta[m]);
        if (!(out->meta[m] = strdup(kv->val->u.str.s)))
            CONF_ERR(kv, "out of memory");
    }
    return 0;
}

/* The [history] table into out. Returns 0, or -1 with the problem and its place in err. */
static int parse_history(cli_layer *out, const char *name, const toml_value *t, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->u.tab.n; i++) {
        const toml_kv *kv = &t->u.tab.kv[i];
        if (strcmp(kv->key, "path") != 0)
            CONF_ERR(kv, "unknown key '%s' in [history] (known keys: path)", kv->key);
        if (!is_str(kv) || kv->val->u.str.len == 0)
            CONF_ERR(kv, "[history] path must be a file name");
        free(out->history);
        if (!(out->history = strdup(kv->val->u.str.s)))
            CONF_ERR(kv, "out of memory");
    }
    return 0;
}

/* The [export] table into out. Returns 0, or -1 with the problem and its place in err. */
static int parse_export(cli_layer *out, const char *name, const toml_value *t, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->u.tab.n; i++) {
        const toml_kv *kv = &t->u.tab.kv[i];
        const toml_value *v = kv->val;
        char **slot = strcmp(kv->key, "prometheus") == 0            ? &out->prometheus
                      : strcmp(kv->key, "prometheus_textfile") == 0 ? &out->prometheus_textfile
                      : strcmp(kv->key, "otlp") == 0                ? &out->otlp
                                                                    : NULL;
        if (slot) {
            if (!is_str(kv) || v->u.str.len == 0)
                CONF_ERR(kv, "[export] %s must be a non-empty string (%s)", kv->key,
                         slot == &out->prometheus ? "\"ADDR:PORT\"" : slot == &out->otlp ? "a URL" : "a directory");
            free(*slot);
            if (!(*slot = strdup(v->u.str.s)))
                CONF_ERR(kv, "out of memory");
        } else if (strcmp(kv->key, "otlp_interval") == 0) {
            double d = v->type == TOML_INTEGER ? (double)v->u.i : v->type == TOML_FLOAT ? v->u.f : -1;
            if ((v->type != TOML_INTEGER && v->type != TOML_FLOAT) || cli_check_interval(d) < 0)
                CONF_ERR(kv, "[export] otlp_interval must be a number of seconds from 0.01 to 86400");
            out->otlp_interval = d;
            out->otlp_interval_set = true;
        } else {
            CONF_ERR(kv, "unknown key '%s' in [export] (known keys: prometheus, prometheus_textfile, otlp, otlp_interval)",
                     kv->key);
        }
    }
    return 0;
}

/* The boolean [tracker] key named key in out (its value, and *set to its "given" mark), or NULL
 * when key is not one of them. */
static bool *bool_key(cli_layer *out, const char *key, bool **set)
{
    if (strcmp(key, "quiet") == 0)
        return *set = &out->quiet_set, &out->quiet;
    if (strcmp(key, "summary") == 0)
        return *set = &out->summary_set, &out->summary;
    if (strcmp(key, "wait_all") == 0)
        return *set = &out->wait_all_set, &out->wait_all;
    return NULL;
}

/* [tracker] gpus: "UUID,UUID" or an array of uuid strings, kept as the comma list --gpus takes.
 * Returns 0, or -1 with the problem and its place in err. */
static int parse_gpus(cli_layer *out, const char *name, const toml_kv *kv, char *err, size_t errlen)
{
    const toml_value *v = kv->val;
    size_t len = 1;
    if (v->type == TOML_ARRAY) {
        for (size_t i = 0; i < v->u.arr.n; i++) {
            const toml_value *t = v->u.arr.items[i];
            if (t->type != TOML_STRING || strlen(t->u.str.s) != t->u.str.len || t->u.str.len == 0 ||
                strchr(t->u.str.s, ','))
                CONF_ERR(kv, "[tracker] gpus must be GPU uuids: a string \"UUID,UUID\" or an array of strings");
            len += t->u.str.len + 1;
        }
    } else if (!is_str(kv)) {
        CONF_ERR(kv, "[tracker] gpus must be GPU uuids: a string \"UUID,UUID\" or an array of strings");
    }
    char *list = v->type == TOML_ARRAY ? calloc(1, len) : strdup(v->u.str.s);
    if (!list)
        CONF_ERR(kv, "out of memory");
    for (size_t i = 0, at = 0; v->type == TOML_ARRAY && i < v->u.arr.n; i++) {
        const toml_value *t = v->u.arr.items[i];
        if (i)
            list[at++] = ',';
        memcpy(list + at, t->u.str.s, t->u.str.len);
        at += t->u.str.len;
    }
    char **parsed;
    size_t n;
    const char *why;
    if (cli_parse_gpu_list(list, &parsed, &n, &why) < 0) {
        free(list);
        CONF_ERR(kv, "[tracker] gpus: %s", why);
    }
    cli_gpu_list_free(parsed, n);
    free(out->gpus);
    out->gpus = list;
    return 0;
}

/* The [tracker] table into out. Returns 0, or -1 with the problem and its place in err. */
static int parse_tracker(cli_layer *out, const char *name, const toml_value *t, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->u.tab.n; i++) {
        const toml_kv *kv = &t->u.tab.kv[i];
        const toml_value *v = kv->val;
        bool *flag, *flag_set = NULL;
        if (strcmp(kv->key, "interval_secs") == 0) {
            double d = v->type == TOML_INTEGER ? (double)v->u.i : v->type == TOML_FLOAT ? v->u.f : -1;
            if ((v->type != TOML_INTEGER && v->type != TOML_FLOAT) || cli_check_interval(d) < 0)
                CONF_ERR(kv, "[tracker] interval_secs must be a number of seconds from 0.01 to 86400");
            out->interval = d;
            out->interval_set = true;
        } else if (strcmp(kv->key, "format") == 0) {
            if (!is_str(kv) || cli_parse_format(v->u.str.s, &out->format) < 0)
                CONF_ERR(kv, "[tracker] format must be \"json\" or \"csv\"");
            out->format_set = true;
        } else if (strcmp(kv->key, "output") == 0) {
            if (!is_str(kv) || v->u.str.len == 0)
                CONF_ERR(kv, "[tracker] output must be a file name (or \"-\" for stdout)");
            free(out->output);
            if (!(out->output = strdup(v->u.str.s)))
                CONF_ERR(kv, "out of memory");
            out->output_set = true;
        } else if ((flag = bool_key(out, kv->key, &flag_set)) != NULL) {
            if (v->type != TOML_BOOL)
                CONF_ERR(kv, "[tracker] %s must be true or false", kv->key);
            *flag = v->u.b;
            *flag_set = true;
        } else if (strcmp(kv->key, "cgroup") == 0) {
            if (!is_str(kv) || cli_parse_cgroup(v->u.str.s, &out->cgroup_off) < 0)
                CONF_ERR(kv, "[tracker] cgroup must be \"auto\" or \"off\"");
            out->cgroup_set = true;
        } else if (strcmp(kv->key, "expected_cores") == 0) {
            double d = v->type == TOML_INTEGER ? (double)v->u.i : v->type == TOML_FLOAT ? v->u.f : -1;
            if ((v->type != TOML_INTEGER && v->type != TOML_FLOAT) || cli_check_expected_cores(d) < 0)
                CONF_ERR(kv, "[tracker] expected_cores must be a number of cores above 0");
            out->expected_cores = d;
            out->expected_cores_set = true;
        } else if (strcmp(kv->key, "gpus") == 0) {
            if (parse_gpus(out, name, kv, err, errlen) < 0)
                return -1;
        } else if (strcmp(kv->key, "report") == 0) {
            if (!is_str(kv) || v->u.str.len == 0)
                CONF_ERR(kv, "[tracker] report must be a file name");
            free(out->report);
            if (!(out->report = strdup(v->u.str.s)))
                CONF_ERR(kv, "out of memory");
        } else {
            char known[256];
            size_t at = 0;
            known[0] = '\0';
            for (size_t k = 0; k < sizeof tracker_keys / sizeof tracker_keys[0]; k++) {
                int n = snprintf(known + at, sizeof known - at, "%s%s", k ? ", " : "", tracker_keys[k]);
                if (n < 0 || (size_t)n >= sizeof known - at)
                    break;
                at += (size_t)n;
            }
            CONF_ERR(kv, "unknown key '%s' in [tracker] (known keys: %s)", kv->key, known);
        }
    }
    return 0;
}

int cli_parse_config(cli_layer *out, const char *name, const char *buf, size_t len, char *err, size_t errlen)
{
    char terr[512];
    toml_value *root = toml_parse(buf, len, terr, sizeof terr);
    if (!root) {
        snprintf(err, errlen, "%s:%s", name, terr);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < root->u.tab.n && rc == 0; i++) {
        const toml_kv *kv = &root->u.tab.kv[i];
        bool job = strcmp(kv->key, "job") == 0, tracker = strcmp(kv->key, "tracker") == 0;
        bool history = strcmp(kv->key, "history") == 0, export = strcmp(kv->key, "export") == 0;
        if ((job || tracker || history || export) && kv->val->type != TOML_TABLE) {
            snprintf(err, errlen, "%s:%d:%d: '%s' must be a table ([%s]), not %s", name, kv->line, kv->col, kv->key,
                     kv->key, toml_type_name(kv->val->type));
            rc = -1;
        } else if (job) {
            rc = parse_job(out, name, kv->val, err, errlen);
        } else if (tracker) {
            rc = parse_tracker(out, name, kv->val, err, errlen);
        } else if (history) {
            rc = parse_history(out, name, kv->val, err, errlen);
        } else if (export) {
            rc = parse_export(out, name, kv->val, err, errlen);
        } else {
            snprintf(err, errlen, "%s:%d:%d: unknown %s '%s' (known tables: [job], [tracker], [history], [export])", name, kv->line,
                     kv->col, kv->val->type == TOML_TABLE ? "table" : "key", kv->key);
            rc = -1;
        }
    }
    toml_free(root);
    return rc;
}

int cli_load_config(cli_options *o, char *err, size_t errlen)
{
    const char *path = o->config_path ? o->config_path : "resource-tracker.toml";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT && !o->config_explicit)
            return 0;
        snprintf(err, errlen, "%s: cannot read the config file: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)MAX_CONFIG_BYTES) {
        snprintf(err, errlen, "%s: not a regular file of at most 1 MiB", path);
        close(fd);
        return -1;
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    for (;;) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "%s: cannot read the config file: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return -1;
        }
        if (n == 0 || (len += (size_t)n) == cap)
            break;
    }
    close(fd);
    int rc = cli_parse_config(&o->file, path, buf, len, err, errlen);
    free(buf);
    return rc;
}
