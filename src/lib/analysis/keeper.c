/* keeper.c - the cheapest on-demand server for a recommendation, and the price of a known
 * instance type, from the Spare Cores Keeper API (docs/contracts.md §6) over libcurl
 * (net/curl.c); the query builder and the reply parsers are pure functions (keeper.h).
 *
 * Units of the query. Keeper's memory_min and gpu_memory_total are "GB" floats that it compares
 * as memory_amount >= GB * 1024 with memory_amount in MiB (sc-keeper api.py, search_servers;
 * parameters.py declares them Optional[float], step 0.1). So Keeper's GB is a GiB, fractions
 * are accepted, and the value sent is exactly MiB / 1024 written as a decimal (3072 MiB ->
 * memory_min=3, 1536 MiB -> 1.5, 128 MiB -> 0.125): the filter Keeper applies is then exactly
 * "at least the recommended MiB", so no server that fits is excluded and none that does not
 * fit is let in. Rounding to whole GB either way would do one or the other (the Python
 * package's round(MiB / 1024) asks 2 GiB for 1536 MiB). gpu_min and gpu_memory_total are left
 * out when no GPU is recommended.
 *
 * The GPUs' memory (0.19, the GPU ask): Keeper's gpu_memory_min is the memory of the server's
 * smallest GPU and gpu_memory_total that of all its GPUs, both "GB" compared as MiB / 1024 like
 * memory_min (sc-keeper api.py; the figures nvidia-smi's where Spare Cores inspected the server).
 * The query asks each GPU for the memory asked of one (rt_recommendation.vram_per_gpu_mib) and
 * all of them together for that times the GPUs asked; a recommendation without a per-GPU figure
 * (an older caller's) asks the whole tree's VRAM need as the total, as before. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../net/curl.h"
#include "gpu_ask.h"
#include "keeper.h"

bool rt_keeper_gb(int64_t mib, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return false;
    buf[0] = '\0';
    if (mib < 0)
        return false;
    /* 1/1024 = 0.0009765625: the fraction r/1024 is exactly r * 9765625 / 10^10 */
    long long whole = (long long)(mib / 1024), frac = (long long)(mib % 1024) * 9765625LL;
    char f[16] = ""; /* the fraction's digits without trailing zeros, after its point */
    if (frac != 0) {
        snprintf(f, sizeof f, ".%010lld", frac);
        size_t k = strlen(f);
        while (k > 1 && f[k - 1] == '0')
            f[--k] = '\0';
    }
    if (rt_pathf(buf, cap, "%lld%s", whole, f))
        return true;
    buf[0] = '\0';
    return false;
}

bool rt_keeper_servers_url(const char *base, const rt_recommendation *rec, char *url, size_t cap)
{
    if (!url || cap == 0)
        return false;
    url[0] = '\0';
    if (!base || !rec || rec->cpu < 1)
        return false;
    size_t blen = strlen(base);
    while (blen > 0 && base[blen - 1] == '/')
        blen--;
    if (blen > INT32_MAX)
        return false;
    char mem[64] = "", gpu[200] = "";
    if (rec->memory_mib > 0) {
        char gb[32];
        if (!rt_keeper_gb(rec->memory_mib, gb, sizeof gb) || !rt_pathf(mem, sizeof mem, "&memory_min=%s", gb))
            return false;
    }
    if (rec->gpu > 0) {
        char gb[32] = "", each[48] = "";
        int64_t one = rt_gpu_ask_known(rec) ? rec->vram_per_gpu_mib : 0, all = rec->vram_mib;
        if (one > 0 && one <= INT64_MAX / rec->gpu) { /* 0.19: each GPU's memory, and all of them */
            char g1[32];
            all = one * rec->gpu;
            if (!rt_keeper_gb(one, g1, sizeof g1) || !rt_pathf(each, sizeof each, "&gpu_memory_min=%s", g1))
                return false;
        }
        if (all > 0 && !rt_keeper_gb(all, gb, sizeof gb))
            return false;
        if (!rt_pathf(gpu, sizeof gpu, "&gpu_min=%lld%s%s%s", (long long)rec->gpu, each, gb[0] ? "&gpu_memory_total=" : "",
                      gb))
            return false;
    }
    if (rt_pathf(url, cap, "%.*s/servers?vcpus_min=%lld%s%s&order_by=min_price_ondemand&order_dir=asc&limit=%d",
                 (int)blen, base, (long long)rec->cpu, mem, gpu, RT_KEEPER_LIMIT))
        return true;
    url[0] = '\0';
    return false;
}

/* ---- reply parsers ------------------------------------------------------------------------ */

/* Copies s into dst[cap]: control characters become '?', and a string too long is cut at a
 * UTF-8 character boundary. Returns true when all of it fit. */
static bool copy_text(char *dst, size_t cap, const char *s)
{
    size_t n = strlen(s), k = n < cap - 1 ? n : cap - 1;
    while (k > 0 && k < n && ((unsigned char)s[k] & 0xC0) == 0x80) /* s[k] continues a character */
        k--;
    for (size_t i = 0; i < k; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    dst[k] = '\0';
    return k == n;
}

/* An identifier: a non-empty string of printable characters that fits dst[cap] whole. */
static bool copy_ident(char *dst, size_t cap, const json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    if (!s || !*s || strlen(s) >= cap)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p == 0x7f)
            return false;
    return copy_text(dst, cap, s);
}

/* The number at key, or NaN when absent, null, not a number or negative. */
static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    double d = json_is_number(v) ? json_number_value(v) : NAN;
    return isfinite(d) && d >= 0 ? d : NAN;
}

/* Fills *s from one /servers entry. Returns 1 when it is a usable server that fits rec, 0 when
 * it is well-formed but does not fit or has no on-demand price, -1 when it is malformed. */
static int server_entry(const json_t *o, const rt_recommendation *rec, rt_server *s)
{
    if (!json_is_object(o) || !copy_ident(s->vendor_id, sizeof s->vendor_id, json_object_get(o, "vendor_id")) ||
        !copy_ident(s->api_reference, sizeof s->api_reference, json_object_get(o, "api_reference")))
        return -1;
    const json_t *dn = json_object_get(o, "display_name");
    copy_text(s->display_name, sizeof s->display_name, json_is_string(dn) ? json_string_value(dn) : "");
    double vcpus = num(o, "vcpus"), mem = num(o, "memory_amount"), gpus = num(o, "gpu_count");
    double vram = num(o, "gpu_memory_total"), vram_one = num(o, "gpu_memory_min"), price = num(o, "min_price_ondemand");
    if (isnan(vcpus) || isnan(mem) || vcpus > 1e9)
        return -1;
    if (!isnan(gpus) && gpus > 1e9)
        return -1;
    s->vcpus = (int64_t)vcpus;
    s->memory_mib = mem;
    s->gpu_count = isnan(gpus) ? RT_NULL_I64 : (int64_t)floor(gpus); /* whole GPUs */
    s->price_usd_per_hour = price;
    static const char *const cpu_keys[] = {"cpu_manufacturer", "cpu_family", "cpu_model"};
    char *cpu_fields[] = {s->cpu_manufacturer, s->cpu_family, s->cpu_model};
    size_t cpu_caps[] = {sizeof s->cpu_manufacturer, sizeof s->cpu_family, sizeof s->cpu_model};
    for (size_t i = 0; i < 3; i++) { /* null or absent: "" */
        const json_t *v = json_object_get(o, cpu_keys[i]);
        copy_text(cpu_fields[i], cpu_caps[i], json_is_string(v) ? json_string_value(v) : "");
    }
    if (isnan(price))
        return 0;
    if (rec) {
        double want_gpu = rec->gpu > 0 ? (double)rec->gpu : 0;
        if (vcpus < (double)rec->cpu || mem < (double)rec->memory_mib)
            return 0;
        if (want_gpu > 0 && (isnan(gpus) || gpus < want_gpu))
            return 0;
        int64_t one = rt_gpu_ask_known(rec) ? rec->vram_per_gpu_mib : 0;
        double all = one > 0 ? (double)one * want_gpu : (double)rec->vram_mib;
        if (want_gpu > 0 && all > 0 && !isnan(vram) && vram < all)
            return 0;
        if (want_gpu > 0 && one > 0 && !isnan(vram_one) && vram_one < (double)one) /* 0.19: each GPU's */
            return 0;
    }
    return 1;
}

/* The body as a JSON array (the caller frees it with json_decref), or NULL. */
static json_t *load_array(const char *buf, size_t len)
{
    if (!buf)
        return NULL;
    json_error_t e;
    json_t *j = json_loadb(buf, len, 0, &e);
    if (j && !json_is_array(j)) {
        json_decref(j);
        j = NULL;
    }
    return j;
}

rt_error rt_keeper_parse_servers(const char *buf, size_t len, const rt_recommendation *rec, rt_server *out)
{
    if (!buf || !out)
        return RT_ERR_INVALID;
    json_t *list = load_array(buf, len);
    if (!list)
        return RT_ERR_PARSE;
    size_t i, bad = 0;
    bool found = false;
    json_t *o;
    rt_server best;
    memset(&best, 0, sizeof best);
    json_array_foreach(list, i, o) {
        rt_server s;
        memset(&s, 0, sizeof s);
        int r = server_entry(o, rec, &s);
        if (r < 0)
            bad++;
        else if (r > 0 && (!found || s.price_usd_per_hour < best.price_usd_per_hour)) {
            best = s;
            found = true;
        }
    }
    size_t n = json_array_size(list);
    json_decref(list);
    if (!found)
        return n > 0 && bad == n ? RT_ERR_PARSE : RT_ERR_NOT_FOUND;
    best.struct_size = out->struct_size;
    *out = best;
    return RT_OK;
}

/* The string at key equals want. */
static bool str_is(const json_t *o, const char *key, const char *want)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

rt_error rt_keeper_parse_prices(const char *buf, size_t len, const char *region, double *usd_per_hour)
{
    if (!buf || !usd_per_hour)
        return RT_ERR_INVALID;
    json_t *list = load_array(buf, len);
    if (!list)
        return RT_ERR_PARSE;
    double best = NAN;
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o) {
        if (!json_is_object(o) || !str_is(o, "allocation", "ondemand") || !str_is(o, "operating_system", "Linux"))
            continue;
        const json_t *cur = json_object_get(o, "currency");
        if (cur && !json_is_null(cur) && !str_is(o, "currency", "USD"))
            continue;
        if (region && !str_is(o, "region_id", region))
            continue;
        double p = num(o, "price");
        if (!isnan(p) && (isnan(best) || p < best))
            best = p;
    }
    json_decref(list);
    if (isnan(best))
        return RT_ERR_NOT_FOUND;
    *usd_per_hour = best;
    return RT_OK;
}

/* ---- the lookups ------------------------------------------------------------------------ */

static const char *const keeper_headers[] = {"X-Application-ID: resource-tracker", "Accept: application/json", NULL};

/* Whether url turns the lookups off: "off" (TRACKER_KEEPER_URL=off), in any case. */
bool rt_keeper_url_off(const char *url)
{
    return url && strcasecmp(url, "off") == 0;
}

/* The caller's options with the defaults filled in; false for bad options. */
static bool keeper_opts(const rt_keeper_options *opts, rt_keeper_options *o, rt_logger *lg)
{
    rt_keeper_options d = RT_KEEPER_OPTIONS_INIT;
    if (rt_struct_copy(&d, sizeof d, opts) < 0)
        return false;
    if (!d.url || !*d.url)
        d.url = RT_KEEPER_DEFAULT_URL;
    if (d.timeout_secs == 0)
        d.timeout_secs = 5;
    if (!d.offline_why || d.offline_why_cap == 0) {
        d.offline_why = NULL;
        d.offline_why_cap = 0;
    } else {
        d.offline_why[0] = '\0';
    }
    *o = d;
    lg->fn = d.log;
    lg->user = d.log_user;
    return isfinite(d.timeout_secs) && d.timeout_secs > 0;
}

/* GETs url from Keeper into *body (free with rt_buf_free). Returns RT_OK for a 200 reply,
 * RT_ERR_NOT_FOUND for a 404 when not_found_ok, else the error after one log line; no reply at
 * all (offline, Keeper down) also fills o->offline_why. */
static rt_error keeper_get(const rt_keeper_options *o, const rt_logger *lg, const char *url, bool not_found_ok,
                           rt_buf *body)
{
    char err[512];
    rt_fetch_request req = {.url = url, .headers = keeper_headers, .timeout_secs = o->timeout_secs,
                            .max_body = RT_KEEPER_MAX_BODY};
    rt_fetch_reply rep;
    rt_error rc = rt_fetch(&req, &rep, err, sizeof err);
    long status = rep.status;
    bool replied = rep.replied;
    *body = rep.body;
    if (rc == RT_ERR_UNSUPPORTED) {
        rt_log(lg, RT_LOG_WARN, "no HTTPS client for the Spare Cores Keeper lookup: %s", err);
        return rc;
    }
    if (rc != RT_OK && rc != RT_ERR_NOMEM && !replied) { /* not a byte of a reply: offline */
        if (o->offline_why)
            snprintf(o->offline_why, o->offline_why_cap, "%s", err[0] ? err : "no reply");
        rt_log(lg, RT_LOG_WARN, "Spare Cores Keeper at %s not reached: %s", o->url, err);
        return RT_ERR_IO;
    }
    if (rc != RT_OK) {
        rt_log(lg, RT_LOG_WARN, "Spare Cores Keeper at %s: %s", o->url, err);
        return rc == RT_ERR_NOMEM ? rc : RT_ERR_IO;
    }
    if (status == 404 && not_found_ok)
        return RT_ERR_NOT_FOUND;
    if (status != 200) {
        rt_log(lg, RT_LOG_WARN, "Spare Cores Keeper at %s replied HTTP %ld", o->url, status);
        return RT_ERR_IO;
    }
    if (!body->data) {
        rt_log(lg, RT_LOG_WARN, "Spare Cores Keeper at %s replied with an empty body", o->url);
        return RT_ERR_IO;
    }
    return RT_OK;
}

rt_error rt_keeper_cheapest(const rt_keeper_options *opts, const rt_recommendation *rec, rt_server *out)
{
    rt_keeper_options o;
    rt_logger lg = {0};
    if (!keeper_opts(opts, &o, &lg) || !rec || rec->struct_size < offsetof(rt_recommendation, runs) || rec->cpu < 1 ||
        !out || out->struct_size < sizeof(size_t))
        return RT_ERR_INVALID;
    if (rt_keeper_url_off(o.url))
        return RT_ERR_DISABLED; /* asked for nothing, and nothing said */
    if (rec->cpu > RT_KEEPER_MAX_VCPUS) {
        rt_log(&lg, RT_LOG_INFO, "no server in Keeper's range has %lld vCPUs", (long long)rec->cpu);
        return RT_ERR_NOT_FOUND;
    }
    char url[4096];
    if (!rt_keeper_servers_url(o.url, rec, url, sizeof url)) {
        rt_log(&lg, RT_LOG_WARN, "Spare Cores Keeper URL too long: %s", o.url);
        return RT_ERR_INVALID;
    }
    rt_buf body;
    rt_buf_init(&body, 0);
    rt_error rc = keeper_get(&o, &lg, url, false, &body);
    rt_server s;
    if (rc == RT_OK) {
        s.struct_size = sizeof s;
        rc = rt_keeper_parse_servers(body.data, body.len, rec, &s);
        if (rc == RT_ERR_PARSE) {
            rt_log(&lg, RT_LOG_WARN, "Spare Cores Keeper at %s replied with no list of servers", o.url);
            rc = RT_ERR_IO;
        }
    }
    rt_buf_free(&body);
    if (rc == RT_OK) {
        size_t n = out->struct_size < sizeof s ? out->struct_size : sizeof s; /* an older caller's shorter struct */
        s.struct_size = out->struct_size;
        memcpy(out, &s, n);
    }
    return rc;
}

rt_error rt_keeper_price(const rt_keeper_options *opts, const char *vendor_id, const char *api_reference,
                         const char *region, double *usd_per_hour)
{
    rt_keeper_options o;
    rt_logger lg = {0};
    if (!keeper_opts(opts, &o, &lg) || !vendor_id || !*vendor_id || !api_reference || !*api_reference ||
        !usd_per_hour)
        return RT_ERR_INVALID;
    if (rt_keeper_url_off(o.url))
        return RT_ERR_DISABLED;
    char v[3 * 64], t[3 * 128], url[4096];
    size_t blen = strlen(o.url);
    while (blen > 0 && o.url[blen - 1] == '/')
        blen--;
    if (!rt_url_escape(vendor_id, v, sizeof v) || !rt_url_escape(api_reference, t, sizeof t) || blen > INT32_MAX ||
        !rt_pathf(url, sizeof url, "%.*s/server/%s/%s/prices", (int)blen, o.url, v, t))
        return RT_ERR_INVALID;
    rt_buf body;
    rt_buf_init(&body, 0);
    rt_error rc = keeper_get(&o, &lg, url, true, &body);
    double p = NAN;
    if (rc == RT_OK) {
        rc = rt_keeper_parse_prices(body.data, body.len, region, &p);
        if (rc == RT_ERR_PARSE) {
            rt_log(&lg, RT_LOG_WARN, "Spare Cores Keeper at %s replied with no list of prices", o.url);
            rc = RT_ERR_IO;
        }
    }
    rt_buf_free(&body);
    if (rc == RT_ERR_NOT_FOUND)
        rt_log(&lg, RT_LOG_INFO, "Spare Cores Keeper knows no on-demand Linux price of %s:%s%s%s", vendor_id,
               api_reference, region ? " in " : "", region ? region : "");
    if (rc == RT_OK)
        *usd_per_hour = p;
    return rc;
}
