/* settings.c - the tool's settings (the table's rows: settings_table.c): finding a row by flag,
 * variable or config key; the parsers of a value of each type; the environment layer;
 * precedence (command line > environment > config file > default) decided in
 * cli_setting_from; the config sections' and keys' lists for messages. It calls no other file
 * of the tool but since.c's reader of a time (history --since). */
#define _GNU_SOURCE
#include "settings.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int cli_check_interval(double v)
{
    return cli_setting_in_range(cli_setting_by_flag("interval"), v) ? 0 : -1;
}

int cli_parse_pid(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v <= 0 || v > INT_MAX)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_format(const char *s, rt_format *out)
{
    if (strcmp(s, "json") == 0 || strcmp(s, "jsonl") == 0)
        *out = RT_FORMAT_JSON;
    else if (strcmp(s, "csv") == 0)
        *out = RT_FORMAT_CSV;
    else if (strcmp(s, "json-rs") == 0)
        *out = RT_FORMAT_JSON_RS;
    else
        return -1;
    return 0;
}

int cli_parse_bool_word(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "1", "yes", "on"}, *const no[] = {"false", "0", "no", "off"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(s, yes[i]) == 0 || strcasecmp(s, no[i]) == 0) {
            *out = strcasecmp(s, yes[i]) == 0;
            return 0;
        }
    }
    return -1;
}

int cli_parse_cgroup(const char *s, bool *off)
{
    if (strcmp(s, "auto") == 0)
        *off = false;
    else if (strcmp(s, "off") == 0)
        *off = true;
    else
        return -1;
    return 0;
}

int cli_parse_view(const char *s, cli_view *out)
{
    if (strcmp(s, "auto") == 0)
        *out = CLI_VIEW_AUTO;
    else if (strcmp(s, "human") == 0)
        *out = CLI_VIEW_HUMAN;
    else if (strcmp(s, "samples") == 0)
        *out = CLI_VIEW_SAMPLES;
    else if (strcmp(s, "log") == 0)
        *out = CLI_VIEW_LOG;
    else
        return -1;
    return 0;
}

int cli_check_tag(const char *s)
{
    const char *eq = strchr(s, '=');
    return (eq && eq != s) ? 0 : -1;
}

int cli_add_tag(cli_layer *l, const char *tag)
{
    char **t = realloc(l->tags, (l->ntags + 1) * sizeof *t);
    if (!t)
        return -1;
    l->tags = t;
    if (!(t[l->ntags] = strdup(tag)))
        return -1;
    l->ntags++;
    return 0;
}

#define MAX_GPUS 1024

void cli_gpu_list_free(char **list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        free(list[i]);
    free(list);
}

int cli_parse_gpu_list(const char *s, char ***out, size_t *n, const char **why)
{
    *out = NULL;
    *n = 0;
    char **list = NULL;
    size_t k = 0;
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *e = comma ? comma : p + strlen(p);
        const char *b = p;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (e == b) {
            cli_gpu_list_free(list, k);
            *why = "an empty GPU uuid in the list";
            return -1;
        }
        if (k == MAX_GPUS) {
            cli_gpu_list_free(list, k);
            *why = "more than 1024 GPUs";
            return -1;
        }
        char **grown = realloc(list, (k + 1) * sizeof *list);
        char *one = grown ? strndup(b, (size_t)(e - b)) : NULL;
        if (grown)
            list = grown;
        if (!one) {
            cli_gpu_list_free(list, k);
            *why = "out of memory";
            return -1;
        }
        list[k++] = one;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = list;
    *n = k;
    return 0;
}

const cli_setting *cli_setting_by_flag(const char *flag)
{
    for (size_t i = 0; i < cli_nsettings; i++)
        if (cli_settings[i].flag && (cli_settings[i].commands & CLI_CMD_TRACK) &&
            strcmp(cli_settings[i].flag, flag) == 0)
            return &cli_settings[i];
    return NULL;
}

const cli_setting *cli_setting_by_opt(cli_opt opt)
{
    for (size_t i = 0; i < cli_nsettings; i++)
        if (cli_settings[i].opt == opt)
            return &cli_settings[i];
    return NULL;
}

const cli_setting *cli_setting_by_env(const char *env)
{
    for (size_t i = 0; i < cli_nsettings; i++)
        if ((cli_settings[i].env && strcmp(cli_settings[i].env, env) == 0) ||
            (cli_settings[i].env_over && strcmp(cli_settings[i].env_over, env) == 0))
            return &cli_settings[i];
    return NULL;
}

/* Config keys that are another key's other name: [history] url is [history] path (a
 * postgresql:// URL reads better under it; issue 69). */
static const struct {
    const char *section, *key, *is;
} key_aliases[] = {{"history", "url", "path"}};

const cli_setting *cli_setting_by_key(const char *section, const char *key)
{
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (s->section && strcmp(s->section, section) == 0 && strcmp(s->key, key) == 0)
            return s;
    }
    for (size_t i = 0; i < sizeof key_aliases / sizeof key_aliases[0]; i++)
        if (strcmp(key_aliases[i].section, section) == 0 && strcmp(key_aliases[i].key, key) == 0)
            return cli_setting_by_key(section, key_aliases[i].is);
    return NULL;
}

const char *cli_setting_what(const cli_setting *s, bool toml, char *buf, size_t cap)
{
    const char *w = toml && s->must ? s->must : s->what;
    if (s->type == CLI_T_CHOICE) { /* "a format (text, json, markdown)" */
        size_t at = (size_t)snprintf(buf, cap, "%s (", w ? w : "one of");
        for (size_t i = 0; s->choices && s->choices[i] && at < cap; i++)
            at += (size_t)snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", s->choices[i]);
        if (at < cap)
            snprintf(buf + at, cap - at, ")");
    } else if (w)
        snprintf(buf, cap, "%s", w);
    else if (s->type == CLI_T_SECS)
        snprintf(buf, cap, "a number of seconds from %.10g to %.10g", s->min, s->max);
    else if (s->type == CLI_T_PCT)
        snprintf(buf, cap, "a percentage from %.10g to %.10g", s->min, s->max);
    else if (s->type == CLI_T_COUNT)
        snprintf(buf, cap, "a whole number from %.10g to %.10g", s->min, s->max);
    else if (s->type == CLI_T_MS)
        snprintf(buf, cap, "a number of milliseconds from %.10g to %.10g", s->min, s->max);
    else if (s->type == CLI_T_ABOVE)
        snprintf(buf, cap, "a number of %s above %.10g, at most %.10g", s->unit ? s->unit : "units", s->min, s->max);
    else
        snprintf(buf, cap, "%s",
                 s->type == CLI_T_BOOL || s->type == CLI_T_OFF ? "true or false"
                 : toml                                        ? "a non-empty string"
                                                               : "a value");
    return buf;
}

bool cli_setting_in_range(const cli_setting *s, double v)
{
    if (s->type == CLI_T_CORES || s->type == CLI_T_ABOVE)
        return isfinite(v) && v > s->min && v <= s->max;
    return isfinite(v) && v >= s->min && v <= s->max;
}

int cli_set_str(char **slot, const char *v)
{
    char *c = strdup(v);
    if (!c)
        return -1;
    free(*slot);
    *slot = c;
    return 0;
}

/* The whole of text as a number of s (strtod's syntax; a percentage may end with '%'). Returns
 * 0, or -1. */
static int parse_num(const cli_setting *s, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (s->type == CLI_T_PCT && end != text && *end == '%')
        end++;
    if (errno || end == text || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int cli_setting_number(const cli_setting *s, const char *text, double *out)
{
    double v;
    if (parse_num(s, text, &v) < 0 || !cli_setting_in_range(s, v))
        return -1;
    *out = v;
    return 0;
}

/* Whether text is refused as s's value whatever its type reads: an empty file name or text
 * (CLI_T_FILE, CLI_T_TEXT), the problem in err. */
static bool empty_refused(const cli_setting *s, const char *text, char *err, size_t errlen)
{
    if ((s->type != CLI_T_FILE && s->type != CLI_T_TEXT) || *text)
        return false;
    snprintf(err, errlen, "the %s is empty", s->type == CLI_T_FILE ? "file name" : "value");
    return true;
}

/* Whether text is refused as a list of GPUs (CLI_T_GPUS: cli_parse_gpu_list), the problem in
 * err ("an empty GPU uuid in the list: 'a,,b'"). */
static bool gpus_refused(const char *text, char *err, size_t errlen)
{
    char **list;
    size_t count;
    const char *why;
    if (cli_parse_gpu_list(text, &list, &count, &why) == 0) {
        cli_gpu_list_free(list, count);
        return false;
    }
    snprintf(err, errlen, "%s: '%s'", why, text);
    return true;
}

/* Whether text is a zone of the grid intensity table (CLI_T_ZONE). */
static bool is_zone(const char *text)
{
    rt_grid g = RT_GRID_INIT;
    return rt_grid_lookup(text, &g) == RT_OK;
}

/* Says in err that text is not what s's value must be, in the command line's words ("'5x' is
 * not a percentage from 0 to 1000") or the environment's ("not a percentage ...: '5x'"). Returns
 * -1. */
static int not_what(const cli_setting *s, const char *text, bool env, char *err, size_t errlen)
{
    char what[320];
    cli_setting_what(s, false, what, sizeof what);
    if (env)
        snprintf(err, errlen, "not %s: '%s'", what, text);
    else
        snprintf(err, errlen, "'%s' is not %s", text, what);
    return -1;
}

/* Whether text is VENDOR:TYPE (CLI_T_INSTANCE): printable ASCII (an escape or a byte that is not
 * UTF-8 must reach neither the terminal nor the JSON), one ':' between two non-empty parts that
 * fit their rooms. */
static bool is_instance(const char *text)
{
    const char *colon = strchr(text, ':');
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return false;
    return colon && colon > text && colon[1] && !strchr(colon + 1, ':') &&
           (size_t)(colon - text) < CLI_VENDOR_CAP && strlen(colon + 1) < CLI_TYPE_CAP;
}

void cli_instance_split(const char *text, char vendor[CLI_VENDOR_CAP], char type[CLI_TYPE_CAP])
{
    const char *colon = strchr(text, ':');
    snprintf(vendor, CLI_VENDOR_CAP, "%.*s", (int)(colon - text), text);
    snprintf(type, CLI_TYPE_CAP, "%s", colon + 1);
}

int cli_setting_value(const cli_setting *s, const char *text, cli_value *out, char *err, size_t errlen)
{
    *out = (cli_value){.text = text};
    bool ok;
    switch (s->type) {
    case CLI_T_SECS:
    case CLI_T_PCT:
    case CLI_T_CORES:
    case CLI_T_MS:
    case CLI_T_ABOVE: ok = cli_setting_number(s, text, &out->num) == 0; break;
    case CLI_T_PID: ok = cli_parse_pid(text, &out->count) == 0; break;
    case CLI_T_COUNT: {
        char *end;
        errno = 0;
        out->count = strtol(text, &end, 10);
        ok = !errno && end != text && *end == '\0' && out->count >= s->min && out->count <= s->max;
        break;
    }
    case CLI_T_CHOICE:
        ok = false;
        for (int i = 0; s->choices && s->choices[i] && !ok; i++)
            if (strcmp(text, s->choices[i]) == 0) {
                out->choice = i;
                ok = true;
            }
        break;
    case CLI_T_MEM_UNIT: ok = rt_memory_unit_bytes(text) > 0; break;
    case CLI_T_TIME_UNIT: ok = rt_time_unit_secs(text) > 0; break;
    case CLI_T_INSTANCE: ok = is_instance(text); break;
    case CLI_T_WHEN: ok = cli_since_parse(text, (double)time(NULL), &out->num) == 0; break;
    case CLI_T_ZONE: ok = is_zone(text); break;
    case CLI_T_GPUS: return gpus_refused(text, err, errlen) ? -1 : 0;
    default: ok = !empty_refused(s, text, err, errlen); return ok ? 0 : -1; /* CLI_T_FILE, _TEXT, _META */
    }
    return ok ? 0 : not_what(s, text, false, err, errlen);
}

const char *cli_setting_getenv(const cli_setting *s, const char **name)
{
    const char *const vars[] = {s->env_over, s->env};
    for (size_t i = 0; i < 2; i++) {
        const char *v = vars[i] ? getenv(vars[i]) : NULL;
        if (v && *v) {
            if (name)
                *name = vars[i];
            return v;
        }
    }
    if (name)
        *name = s->env;
    return NULL;
}

const char *cli_env(const char *env)
{
    const cli_setting *s = cli_setting_by_env(env);
    return s ? cli_setting_getenv(s, NULL) : NULL;
}

int cli_setting_env_number(const cli_setting *s, double *out, char *err, size_t errlen)
{
    const char *name;
    const char *v = cli_setting_getenv(s, &name);
    char what[320];
    *out = s->def;
    if (v && cli_setting_number(s, v, out) < 0)
        USAGE_ERR("%s: not %s: '%s'", name, cli_setting_what(s, false, what, sizeof what), v);
    return 0;
}

int cli_setting_put_number(const cli_setting *s, cli_layer *l, double v)
{
    void *slot = s->layer_off == CLI_NONE ? NULL : (char *)l + s->layer_off;
    switch (s->type) {
    case CLI_T_PID:
        if (!(v >= 1 && v <= INT_MAX && v == floor(v)))
            return -1;
        if (slot)
            *(long *)slot = (long)v;
        return 0;
    case CLI_T_SECS:
    case CLI_T_PCT:
    case CLI_T_CORES:
    case CLI_T_ABOVE:
        if (!cli_setting_in_range(s, v))
            return -1;
        if (slot)
            *(double *)slot = v;
        return 0;
    default: return -1;
    }
}

int cli_setting_read(const cli_setting *s, cli_layer *l, const char *text, bool env, char *err, size_t errlen)
{
    char *base = (char *)l;
    void *slot = s->layer_off == CLI_NONE ? NULL : base + s->layer_off;
    bool bad = false;
    double d = 0;
    long pid = 0;
    switch (s->type) {
    case CLI_T_PID:
    case CLI_T_SECS:
    case CLI_T_PCT:
    case CLI_T_CORES:
    case CLI_T_ABOVE:
        bad = (s->type == CLI_T_PID ? cli_parse_pid(text, &pid) < 0 : parse_num(s, text, &d) < 0) ||
              cli_setting_put_number(s, l, s->type == CLI_T_PID ? (double)pid : d) < 0;
        break;
    case CLI_T_FORMAT: bad = cli_parse_format(text, (rt_format *)slot) < 0; break;
    case CLI_T_CGROUP:
    case CLI_T_SWITCH: bad = cli_parse_cgroup(text, (bool *)slot) < 0; break;
    case CLI_T_VIEW: bad = cli_parse_view(text, (cli_view *)slot) < 0; break;
    case CLI_T_BOOL:
    case CLI_T_OFF:
        /* a flag on the command line; in the environment (TRACKER_QUIET) a word, as the Rust
         * tool takes it (true or false), or 1/0, yes/no, on/off */
        if (!env)
            *(bool *)slot = true;
        else if (cli_parse_bool_word(text, (bool *)slot) < 0)
            bad = true;
        else if (s->type == CLI_T_OFF)
            *(bool *)slot = !*(bool *)slot;
        break;
    case CLI_T_FILE:
    case CLI_T_TEXT:
    case CLI_T_META:
        if (empty_refused(s, text, err, errlen))
            return -1;
        if (cli_set_str((char **)slot, text) < 0)
            goto nomem;
        break;
    case CLI_T_ZONE:
        if (!is_zone(text))
            bad = true;
        else if (cli_set_str((char **)slot, text) < 0)
            goto nomem;
        break;
    case CLI_T_GPUS:
        if (gpus_refused(text, err, errlen))
            return -1;
        if (cli_set_str((char **)slot, text) < 0)
            goto nomem;
        break;
    case CLI_T_TAG:
        if (cli_check_tag(text) < 0)
            bad = true;
        else if (cli_add_tag(l, text) < 0)
            goto nomem;
        break;
    default: return 0;
    }
    if (bad)
        return not_what(s, text, env, err, errlen);
    if (s->set_off != CLI_NONE)
        *(bool *)(base + s->set_off) = true;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}

int cli_settings_env(cli_layer *l, char *err, size_t errlen)
{
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (!s->env || s->layer_off == CLI_NONE)
            continue;
        const char *v = getenv(s->env);
        if (!v || !*v)
            continue;
        char why[512];
        if (cli_setting_read(s, l, v, true, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s: %s", s->env, why);
            return -1;
        }
    }
    return 0;
}

/* Whether layer l gives s. */
static bool given(const cli_layer *l, const cli_setting *s)
{
    const char *base = (const char *)l;
    if (s->set_off != CLI_NONE)
        return *(const bool *)(base + s->set_off);
    return *(char *const *)(base + s->layer_off) != NULL;
}

int cli_setting_from(const cli_options *o, const cli_setting *s)
{
    if (s->layer_off == CLI_NONE)
        return CLI_FROM_DEFAULT;
    if (s->flag && given(&o->args, s))
        return CLI_FROM_ARGS;
    if (s->env && given(&o->env, s))
        return CLI_FROM_ENV;
    if (s->section && given(&o->file, s))
        return CLI_FROM_FILE;
    return CLI_FROM_DEFAULT;
}

/* The layer of o named by from. */
static const cli_layer *layer_of(const cli_options *o, int from)
{
    return from == CLI_FROM_ARGS ? &o->args : from == CLI_FROM_ENV ? &o->env : &o->file;
}

const char *cli_setting_str(const cli_options *o, const cli_setting *s, char *where, size_t wcap)
{
    int from = cli_setting_from(o, s);
    if (where && wcap) {
        if (from == CLI_FROM_ARGS)
            snprintf(where, wcap, "--%s", s->flag);
        else if (from == CLI_FROM_ENV)
            snprintf(where, wcap, "%s", s->env);
        else if (from == CLI_FROM_FILE)
            snprintf(where, wcap, "[%s] %s", s->section, s->key);
        else
            where[0] = '\0';
    }
    if (from == CLI_FROM_DEFAULT)
        return NULL;
    return *(char *const *)((const char *)layer_of(o, from) + s->layer_off);
}

void cli_settings_merge(cli_options *o)
{
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (s->merged_off == CLI_NONE)
            continue;
        int from = cli_setting_from(o, s);
        const char *src = from == CLI_FROM_DEFAULT ? NULL : (const char *)layer_of(o, from) + s->layer_off;
        char *dst = (char *)o + s->merged_off;
        switch (s->type) {
        case CLI_T_PID: *(long *)dst = src ? *(const long *)src : (long)s->def; break;
        case CLI_T_SECS:
        case CLI_T_PCT:
        case CLI_T_CORES:
        case CLI_T_ABOVE: *(double *)dst = src ? *(const double *)src : s->def; break;
        case CLI_T_FORMAT: *(rt_format *)dst = src ? *(const rt_format *)src : (rt_format)s->def; break;
        case CLI_T_VIEW: *(cli_view *)dst = src ? *(const cli_view *)src : (cli_view)s->def; break;
        case CLI_T_CGROUP:
        case CLI_T_SWITCH:
        case CLI_T_BOOL:
        case CLI_T_OFF: *(bool *)dst = src ? *(const bool *)src : s->def != 0; break;
        default: *(const char **)dst = src ? *(char *const *)src : NULL; break;
        }
    }
}

void cli_settings_keys(const char *section, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int lead = 1; lead >= 0; lead--) {
        for (size_t i = 0; i < cli_nsettings; i++) {
            const cli_setting *s = &cli_settings[i];
            if (!s->section || strcmp(s->section, section) != 0 || s->lead != (lead == 1))
                continue;
            int n = snprintf(buf + at, cap - at, "%s%s", at ? ", " : "", s->key);
            if (n < 0 || (size_t)n >= cap - at)
                return;
            at += (size_t)n;
        }
    }
}

void cli_settings_sections(char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (!s->section)
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = cli_settings[j].section && strcmp(cli_settings[j].section, s->section) == 0;
        if (seen)
            continue;
        int n = snprintf(buf + at, cap - at, "%s[%s]", at ? ", " : "", s->section);
        if (n < 0 || (size_t)n >= cap - at)
            return;
        at += (size_t)n;
    }
}
