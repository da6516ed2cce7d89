/* config.c - the TOML config file: each key of [job], [tracker], [history] and [export] is a
 * setting of the settings table (settings.h), read by its type. Every problem is reported as
 * FILE:LINE:COL: a malformed file or a known key with a bad value is an error; an unknown key
 * or table is a warning with the known ones listed (the Rust tool ignores them, so a config
 * written for a newer version still loads), never silently ignored. A -c FILE that does not
 * exist is an error, but with --format json-rs (the Rust tool's lines) skipped without a word, as
 * the Rust tool runs on without it (its readers take stderr's first line as a sample). And the run history a subcommand reads (its flag, TRACKER_HISTORY, or
 * the config file's). */
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
#include "settings.h"
#include "toml.h"

#define MAX_CONFIG_BYTES (1u << 20)

#define CONF_ERR(kv, ...)                                                                                              \
    do {                                                                                                               \
        int n_ = snprintf(err, errlen, "%s:%d:%d: ", name, (kv)->line, (kv)->col);                                     \
        if (n_ > 0 && (size_t)n_ < errlen)                                                                             \
            snprintf(err + n_, errlen - (size_t)n_, __VA_ARGS__);                                                      \
        return -1;                                                                                                     \
    } while (0)

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

/* The value of kv as setting s into out. Returns 0, or -1 with the problem and its place in err. */
static int read_key(cli_layer *out, const char *name, const cli_setting *s, const toml_kv *kv, char *err,
                    size_t errlen)
{
    const toml_value *v = kv->val;
    char *base = (char *)out, must[320], why[512] = "";
    bool bad = false;
    switch (s->type) {
    case CLI_T_PCT: /* a number, or a string as the command line's ("5%") */
        if (is_str(kv)) {
            bad = cli_setting_read(s, out, v->u.str.s, false, why, sizeof why) < 0;
            break;
        }
        /* fall through */
    case CLI_T_PID: /* an integer; a number of the others an integer or a float */
    case CLI_T_SECS:
    case CLI_T_CORES:
    case CLI_T_ABOVE:
        bad = (v->type != TOML_INTEGER && (v->type != TOML_FLOAT || s->type == CLI_T_PID)) ||
              cli_setting_put_number(s, out, v->type == TOML_INTEGER ? (double)v->u.i : v->u.f) < 0;
        break;
    case CLI_T_BOOL:
    case CLI_T_OFF: /* the key names the thing: false turns it off */
        if (v->type != TOML_BOOL)
            bad = true;
        else
            *(bool *)(base + s->layer_off) = s->type == CLI_T_OFF ? !v->u.b : v->u.b;
        break;
    case CLI_T_SWITCH: /* true or false too: the key names the thing */
        if (v->type == TOML_BOOL) {
            *(bool *)(base + s->layer_off) = !v->u.b;
            break;
        }
        bad = !is_str(kv) || cli_setting_read(s, out, v->u.str.s, false, why, sizeof why) < 0;
        break;
    case CLI_T_META:
        if (!is_str(kv))
            CONF_ERR(kv, "[%s] %s must be a string, not %s", s->section, kv->key, toml_type_name(v->type));
        /* fall through */
    case CLI_T_FORMAT:
    case CLI_T_CGROUP:
    case CLI_T_VIEW:
    case CLI_T_FILE:
    case CLI_T_TEXT:
    case CLI_T_ZONE:
        if (!is_str(kv) || cli_setting_read(s, out, v->u.str.s, false, why, sizeof why) < 0) {
            if (strcmp(why, "out of memory") == 0 && is_str(kv))
                CONF_ERR(kv, "out of memory");
            bad = true;
        }
        break;
    case CLI_T_GPUS:
        return parse_gpus(out, name, kv, err, errlen);
    case CLI_T_TAG:
        return parse_tags(out, name, kv, err, errlen);
    default:
        break;
    }
    if (bad && s->type == CLI_T_ZONE && is_str(kv)) /* which zone, of the hundreds */
        CONF_ERR(kv, "[%s] %s: '%s' is not %s", s->section, s->key, v->u.str.s,
                 cli_setting_what(s, true, must, sizeof must));
    if (bad)
        CONF_ERR(kv, "[%s] %s must be %s", s->section, s->key, cli_setting_what(s, true, must, sizeof must));
    if (s->set_off != CLI_NONE)
        *(bool *)(base + s->set_off) = true;
    return 0;
}

/* Adds one warning line, "NAME:LINE:COL: what", to out->warnings. Returns 0, or -1 (out of memory). */
static int warn_line(cli_layer *out, const char *name, const toml_kv *kv, const char *what)
{
    size_t had = out->warnings ? strlen(out->warnings) : 0;
    char head[64];
    int hn = snprintf(head, sizeof head, ":%d:%d: ", kv->line, kv->col);
    size_t need = had + strlen(name) + (size_t)hn + strlen(what) + 2;
    char *w = realloc(out->warnings, need);
    if (!w)
        return -1;
    snprintf(w + had, need - had, "%s%s%s\n", name, head, what);
    out->warnings = w;
    return 0;
}

/* The table [section] into out, each key through the settings table; an unknown key is a
 * warning. Returns 0, or -1 with the problem and its place in err. */
static int parse_section(cli_layer *out, const char *name, const char *section, const toml_value *t, char *err,
                         size_t errlen)
{
    for (size_t i = 0; i < t->u.tab.n; i++) {
        const toml_kv *kv = &t->u.tab.kv[i];
        const cli_setting *s = kv->key_len == strlen(kv->key) ? cli_setting_by_key(section, kv->key) : NULL;
        if (!s) {
            char known[512], what[1024];
            cli_settings_keys(section, known, sizeof known);
            snprintf(what, sizeof what, "unknown key '%s' in [%s] left out (known keys: %s)", kv->key, section, known);
            if (warn_line(out, name, kv, what) < 0)
                CONF_ERR(kv, "out of memory");
            continue;
        }
        if (read_key(out, name, s, kv, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* Whether the settings table has keys in [key]. */
static bool is_section(const char *key)
{
    for (size_t i = 0; i < cli_nsettings; i++)
        if (cli_settings[i].section && strcmp(cli_settings[i].section, key) == 0)
            return true;
    return false;
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
        bool known = is_section(kv->key);
        if (known && kv->val->type != TOML_TABLE) {
            snprintf(err, errlen, "%s:%d:%d: '%s' must be a table ([%s]), not %s", name, kv->line, kv->col, kv->key,
                     kv->key, toml_type_name(kv->val->type));
            rc = -1;
        } else if (known) {
            rc = parse_section(out, name, kv->key, kv->val, err, errlen);
        } else {
            char tables[128], what[512];
            cli_settings_sections(tables, sizeof tables);
            snprintf(what, sizeof what, "unknown %s '%s' left out (known tables: %s)",
                     kv->val->type == TOML_TABLE ? "table" : "key", kv->key, tables);
            if (warn_line(out, name, kv, what) < 0) {
                snprintf(err, errlen, "%s: out of memory", name);
                rc = -1;
            }
        }
    }
    toml_free(root);
    return rc;
}

/* Whether the samples are the Rust tool's JSON lines by the command line or, without --format
 * there, by TRACKER_FORMAT (the config file cannot say: it is the one being looked for). */
static bool rust_format(const cli_options *o)
{
    rt_format f;
    if (o->args.format_set)
        return o->args.format == RT_FORMAT_JSON_RS;
    const char *v = cli_env("TRACKER_FORMAT");
    return v && cli_parse_format(v, &f) == 0 && f == RT_FORMAT_JSON_RS;
}

int cli_load_config(cli_options *o, char *err, size_t errlen)
{
    const char *path = o->config_path ? o->config_path : "resource-tracker.toml";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT && !o->config_explicit)
            return 0;
        if (errno == ENOENT && rust_format(o)) /* the Rust tool runs on with its defaults, silent: the */
            return 0;                          /* first stderr line its readers take is a sample */
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
    if (rc == 0 && o->file.warnings) { /* each line once, even when a subcommand reads the file again */
        for (char *line = o->file.warnings, *nl; *line; line = nl + 1) {
            nl = strchr(line, '\n');
            cli_say("warning: %.*s", (int)(nl - line), line);
        }
        free(o->file.warnings);
        o->file.warnings = NULL;
    }
    return rc;
}

const char *cli_history_path(cli_options *o, const char *flag)
{
    if (flag && *flag) /* the subcommand's own --history: the command line */
        return flag;
    char err[1024];
    if (cli_settings_env(&o->env, err, sizeof err) < 0 || (!o->env.history && cli_load_config(o, err, sizeof err) < 0)) {
        cli_say("%s", err);
        return NULL;
    }
    const char *path = cli_setting_str(o, cli_setting_by_flag("history"), NULL, 0);
    if (path)
        return path;
    cli_say("no run history named: give --history FILE|URL, set TRACKER_HISTORY, or set [history] url in the config");
    return NULL;
}
