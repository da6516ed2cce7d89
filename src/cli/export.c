/* export.c - the tool's side of the exporters (issue 14): the values of --prometheus,
 * --prometheus-textfile, --otlp and --otlp-interval, the [export] table and the standard
 * OTEL_* variables, checked before anything starts (sinks.c starts the exporters they ask for). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/hex.h"
#include "cli.h"
#include "settings.h"

int cli_parse_listen(const char *s, char *addr, size_t addrlen, int *port)
{
    const char *colon = strrchr(s, ':');
    const char *host = s, *p = s;
    size_t hlen = 0;
    if (colon) {
        p = colon + 1;
        hlen = (size_t)(colon - s);
        if (hlen >= 2 && s[0] == '[' && s[hlen - 1] == ']') { /* [IPv6]:PORT */
            if (hlen == 2)
                return -1;
            host = s + 1;
            hlen -= 2;
        } else if (memchr(s, ':', hlen) || memchr(s, '[', hlen) || memchr(s, ']', hlen)) {
            return -1; /* an IPv6 address must be bracketed */
        }
    }
    /* the port: 0 to 65535, digits only */
    if (!*p || strlen(p) > 5 || strspn(p, "0123456789") != strlen(p))
        return -1;
    long v = strtol(p, NULL, 10);
    if (v > 65535)
        return -1;
    char h[64];
    if (hlen >= sizeof h)
        return -1;
    memcpy(h, host, hlen);
    h[hlen] = '\0';
    const char *numeric = h;
    if (hlen == 0 || strcmp(h, "localhost") == 0)
        numeric = "127.0.0.1"; /* loopback unless told otherwise */
    unsigned char bin[16];
    if (inet_pton(AF_INET, numeric, bin) != 1 && inet_pton(AF_INET6, numeric, bin) != 1)
        return -1;
    if (strlen(numeric) >= addrlen)
        return -1;
    memcpy(addr, numeric, strlen(numeric) + 1);
    *port = (int)v;
    return 0;
}

/* Whether c may appear in an HTTP header name (RFC 9110 tchar). */
static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c);
}

/* Copies n bytes of s into d percent-decoded, NUL-terminated. Returns the length, or -1 for a
 * broken %XX or a decoded NUL. */
static long pct_decode(const char *s, size_t n, char *d)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            d[o++] = s[i];
            continue;
        }
        if (i + 2 >= n)
            return -1;
        int hi = rt_hexval(s[i + 1]);
        int lo = rt_hexval(s[i + 2]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
            return -1;
        d[o++] = (char)(hi * 16 + lo);
        i += 2;
    }
    d[o] = '\0';
    return (long)o;
}

/* Trims spaces and tabs from both ends of [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

void cli_pairs_free(cli_pairs *p)
{
    free(p->kv);
    free(p->store);
    memset(p, 0, sizeof *p);
}

int cli_parse_otel_list(const char *s, bool header_names, cli_pairs *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(s), items = 1;
    for (size_t i = 0; i < len; i++)
        items += s[i] == ',';
    out->store = malloc(len + items + 1);
    out->kv = calloc(items, sizeof *out->kv);
    if (!out->store || !out->kv) {
        cli_pairs_free(out);
        USAGE_ERR("out of memory");
    }
    char *d = out->store;
    const char *item = s;
    for (size_t k = 0; k < items; k++) {
        const char *end = strchr(item, ',');
        size_t n = end ? (size_t)(end - item) : strlen(item);
        const char *it = item;
        trim(&it, &n);
        item = end ? end + 1 : item + n;
        if (n == 0)
            continue; /* an empty member (",,") */
        const char *eq = memchr(it, '=', n);
        if (!eq) {
            if (header_names) /* never the member itself: it may hold a credential */
                snprintf(err, errlen, "member %zu is not KEY=VALUE (not shown: it may hold a credential)", k + 1);
            else
                snprintf(err, errlen, "'%.*s' is not KEY=VALUE", (int)(n > 80 ? 80 : n), it);
            cli_pairs_free(out);
            return -1;
        }
        const char *key = it, *val = eq + 1;
        size_t kn = (size_t)(eq - it), vn = n - kn - 1;
        trim(&key, &kn);
        trim(&val, &vn);
        if (kn == 0) {
            cli_pairs_free(out);
            USAGE_ERR("a member without a key");
        }
        long kl = pct_decode(key, kn, d);
        if (kl < 0) {
            cli_pairs_free(out);
            if (header_names) /* the key may hold a credential too ("Authorization: Bearer ...") */
                USAGE_ERR("the key of member %zu: a broken %%XX escape", k + 1);
            USAGE_ERR("'%.*s': a broken %%XX escape", (int)(kn > 80 ? 80 : kn), key);
        }
        for (long i = 0; header_names && i < kl; i++) {
            if (!is_tchar((unsigned char)d[i])) {
                snprintf(err, errlen, "the key of member %zu is not a header name", k + 1);
                cli_pairs_free(out);
                return -1;
            }
        }
        out->kv[out->count].key = d;
        d += kl + 1;
        long vl = pct_decode(val, vn, d);
        if (vl < 0) {
            snprintf(err, errlen, "the value of '%s': a broken %%XX escape", out->kv[out->count].key);
            cli_pairs_free(out);
            return -1;
        }
        for (long i = 0; header_names && i < vl; i++) {
            unsigned char c = (unsigned char)d[i];
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                snprintf(err, errlen, "the value of '%s' holds a control character", out->kv[out->count].key);
                cli_pairs_free(out);
                return -1;
            }
        }
        out->kv[out->count++].value = d;
        d += vl + 1;
    }
    return 0;
}

/* Sets *out to the OTLP metrics URL of url: as given when its path ends in /v1/metrics (or it is
 * the signal-specific variable: exact), else with "/v1/metrics" appended as the OTLP exporter
 * specification says of OTEL_EXPORTER_OTLP_ENDPOINT. Returns 0, or -1 (not http(s), no memory). */
static int metrics_url(const char *url, bool exact, char **out)
{
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return -1;
    size_t n = strlen(url);
    const char *tail = "/v1/metrics";
    bool has = n >= strlen(tail) && strcmp(url + n - strlen(tail), tail) == 0;
    while (!exact && !has && n > 8 && url[n - 1] == '/')
        n--;
    size_t cap = n + strlen(tail) + 1;
    free(*out);
    if (!(*out = malloc(cap)))
        return -1;
    snprintf(*out, cap, "%.*s%s", (int)n, url, exact || has ? "" : tail);
    return 0;
}

/* The OTLP settings: URL, headers, resource attributes, compression, timeout and interval.
 * Returns 0, or -1 with the problem in err. */
/* The OTLP settings but the URL's choice: the URL (url, from where, exact: used as given), the
 * interval, the OTEL_* headers, resource attributes, compression, protocol and timeout. Returns
 * 0, or -1 with "WHERE: problem" in err. */
static int otlp_settings(cli_options *o, const char *url, const char *from, bool exact, char *err, size_t errlen)
{
    const cli_layer *a = &o->args, *f = &o->file;
    const char *name = NULL;
    const cli_setting *si = cli_setting_by_env("OTEL_METRIC_EXPORT_INTERVAL"); /* milliseconds */
    double ms;
    if (a->otlp_interval_set)
        o->otlp_interval = a->otlp_interval;
    else if (cli_setting_env_number(si, &ms, err, errlen) < 0)
        return -1;
    else if (cli_setting_getenv(si, NULL))
        o->otlp_interval = ms / 1000.0;
    else if (f->otlp_interval_set)
        o->otlp_interval = f->otlp_interval;
    if (metrics_url(url, exact, &o->otlp_url) < 0)
        USAGE_ERR("%s: not an http:// or https:// URL: '%s'", from, url);
    char what[128];
    const cli_setting *sp = cli_setting_by_env("OTEL_EXPORTER_OTLP_PROTOCOL");
    const char *proto = cli_setting_getenv(sp, &name);
    if (proto && strcmp(proto, "http/json") != 0 && strcmp(proto, "http/protobuf") != 0)
        USAGE_ERR("%s: '%s' is not supported (resource-tracker sends OTLP/HTTP with JSON: http/json)", name, proto);
    const cli_setting *sc = cli_setting_by_env("OTEL_EXPORTER_OTLP_COMPRESSION");
    const char *comp = cli_setting_getenv(sc, &name);
    if (comp && strcmp(comp, "gzip") != 0 && strcmp(comp, "none") != 0)
        USAGE_ERR("%s: '%s' is not %s", name, comp, cli_setting_what(sc, false, what, sizeof what));
    o->otlp_no_gzip = comp && strcmp(comp, "none") == 0;
    if (cli_setting_env_number(cli_setting_by_env("OTEL_EXPORTER_OTLP_TIMEOUT"), &ms, err, errlen) < 0)
        return -1;
    o->otlp_timeout = ms / 1000.0;
    char why[256];
    const char *hv = cli_setting_getenv(cli_setting_by_env("OTEL_EXPORTER_OTLP_HEADERS"), &name);
    cli_pairs_free(&o->otlp_header_pairs);
    if (hv && cli_parse_otel_list(hv, true, &o->otlp_header_pairs, why, sizeof why) < 0)
        USAGE_ERR("%s: %s", name, why);
    /* "Name: value" strings, NULL-terminated */
    free(o->otlp_headers);
    o->otlp_headers = calloc(o->otlp_header_pairs.count + 1, sizeof *o->otlp_headers);
    if (!o->otlp_headers)
        USAGE_ERR("out of memory");
    for (size_t i = 0; i < o->otlp_header_pairs.count; i++) {
        const rt_kv *kv = &o->otlp_header_pairs.kv[i];
        size_t cap = strlen(kv->key) + strlen(kv->value) + 3;
        if (!(o->otlp_headers[i] = malloc(cap)))
            USAGE_ERR("out of memory");
        snprintf(o->otlp_headers[i], cap, "%s: %s", kv->key, kv->value);
    }
    const char *ra = cli_env("OTEL_RESOURCE_ATTRIBUTES");
    cli_pairs_free(&o->otlp_resource);
    if (ra && cli_parse_otel_list(ra, false, &o->otlp_resource, why, sizeof why) < 0)
        USAGE_ERR("OTEL_RESOURCE_ATTRIBUTES: %s", why);
    const char *svc = cli_env("OTEL_SERVICE_NAME"); /* wins over the attributes' service.name */
    if (svc) {
        cli_pairs *r = &o->otlp_resource;
        rt_kv *kv = realloc(r->kv, (r->count + 1) * sizeof *kv);
        if (!kv)
            USAGE_ERR("out of memory");
        r->kv = kv;
        size_t k = 0;
        while (k < r->count && strcmp(kv[k].key, "service.name") != 0)
            k++;
        kv[k] = (rt_kv){"service.name", svc};
        if (k == r->count)
            r->count++;
    }
    return 0;
}

/* Whether the OTLP exporter is asked for (--otlp, an endpoint variable, [export] otlp), and its
 * settings (otlp_settings). Settings that came from the command line or the config file are
 * checked as usage errors; when only the OTEL_* environment asks (meant, perhaps, for the
 * wrapped program), a problem there turns the exporter off with a warning (o->otlp_warning)
 * and the job runs. Returns 0, or -1 with the problem in err. */
static int otlp_merge(cli_options *o, char *err, size_t errlen)
{
    const cli_layer *a = &o->args, *f = &o->file;
    const cli_setting *se = cli_setting_by_env("OTEL_EXPORTER_OTLP_ENDPOINT");
    const char *var;
    const char *env = cli_setting_getenv(se, &var); /* the metrics' own: used as it is */
    const char *url = a->otlp, *from = "--otlp";
    bool exact = false;
    if (!url && env)
        url = env, exact = var == se->env_over, from = var;
    else if (!url && f->otlp)
        url = f->otlp, from = "[export] otlp";
    o->otlp_interval = cli_setting_by_flag("otlp-interval")->def;
    o->otlp_warning[0] = '\0';
    if (!url) { /* no OTLP: nothing of OTEL_* is looked at */
        if (a->otlp_interval_set)
            USAGE_ERR("--otlp-interval needs --otlp (or OTEL_EXPORTER_OTLP_ENDPOINT)");
        return 0;
    }
    if (otlp_settings(o, url, from, exact, err, errlen) == 0)
        return 0;
    if (a->otlp || a->otlp_interval_set || (f->otlp && url == f->otlp))
        return -1; /* asked for on the command line or in the config file: a usage error */
    char why[256];
    snprintf(why, sizeof why, "%s", err);
    if (f->otlp) { /* the environment's is unusable: the config file's, as a usage error */
        if (otlp_settings(o, f->otlp, "[export] otlp", false, err, errlen) < 0)
            return -1;
        snprintf(o->otlp_warning, sizeof o->otlp_warning, "%s: pushing OTLP metrics to [export] otlp instead", why);
        return 0;
    }
    snprintf(o->otlp_warning, sizeof o->otlp_warning, "not pushing OTLP metrics: %s", why);
    free(o->otlp_url);
    o->otlp_url = NULL;
    return 0;
}

int cli_export_merge(cli_options *o, char *err, size_t errlen)
{
    char where[64];
    const char *listen = cli_setting_str(o, cli_setting_by_flag("prometheus"), where, sizeof where);
    o->prom_on = listen != NULL;
    if (listen && cli_parse_listen(listen, o->prom_addr, sizeof o->prom_addr, &o->prom_port) < 0)
        USAGE_ERR("%s: '%s' is not ADDR:PORT (a numeric IPv4 address, [IPv6] or localhost, and a port 0-65535)", where,
                  listen);
    o->textfile_dir = cli_setting_str(o, cli_setting_by_flag("prometheus-textfile"), where, sizeof where);
    if (o->textfile_dir) {
        struct stat st;
        if (stat(o->textfile_dir, &st) < 0)
            USAGE_ERR("%s: '%s': %s", where, o->textfile_dir, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            USAGE_ERR("%s: '%s' is not a directory", where, o->textfile_dir);
        if (access(o->textfile_dir, W_OK | X_OK) < 0)
            USAGE_ERR("%s: '%s': %s", where, o->textfile_dir, strerror(errno));
    }
    return otlp_merge(o, err, errlen);
}

void cli_export_options_free(cli_options *o)
{
    free(o->otlp_url);
    if (o->otlp_headers) {
        for (size_t i = 0; o->otlp_headers[i]; i++) {
            /* a header may hold a credential: wiped before it is freed */
            explicit_bzero(o->otlp_headers[i], strlen(o->otlp_headers[i]));
            free(o->otlp_headers[i]);
        }
    }
    free(o->otlp_headers);
    if (o->otlp_header_pairs.store) {
        size_t n = 0;
        for (size_t i = 0; i < o->otlp_header_pairs.count; i++)
            n = (size_t)(o->otlp_header_pairs.kv[i].value + strlen(o->otlp_header_pairs.kv[i].value) -
                         o->otlp_header_pairs.store);
        explicit_bzero(o->otlp_header_pairs.store, n);
    }
    cli_pairs_free(&o->otlp_header_pairs);
    cli_pairs_free(&o->otlp_resource);
}
