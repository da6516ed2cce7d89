/* cloud.c - which cloud, region, zone and instance type this machine is: every vendor's
 * documented metadata service asked at once, each probe in its own thread, all bounded by
 * one 2-second deadline; the caller never waits unless it asks to. A probe only claims its
 * vendor on that vendor's own evidence (AWS: the services domain; GCP: the Metadata-Flavor
 * reply header; OVH: its resolver), so a compatible service elsewhere is not mistaken. The
 * replies are read by the pure parsers declared in cloud.h. */
#define _GNU_SOURCE
#include <ctype.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/clock.h"
#include "../net/http.h"
#include "cloud.h"
#include "sources.h"

#define DISCOVERY_SECS 2.0
#define MAX_META_BODY (256u * 1024u)

enum { P_AWS, P_GCP, P_AZURE, P_ALICLOUD, P_HCLOUD, P_UPCLOUD, P_VULTR, P_OVH, P_COUNT };
static const char *const vendor_ids[P_COUNT] = {"aws", "gcp", "azure", "alicloud", "hcloud", "upcloud", "vultr", "ovh"};

struct rt_cloud_discovery {
    atomic_int refs;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char base_169[256], base_alibaba[256]; /* scheme://host[:port] of the endpoints */
    double start, deadline;
    rt_logger log;
    int pending;
    rt_cloud_facts res[P_COUNT];
    bool done[P_COUNT];
    bool finished;
    rt_cloud out;
    char out_strs[5][128];
};

typedef struct probe {
    rt_cloud_discovery *d;
    int which;
} probe;

static void unref(rt_cloud_discovery *d)
{
    if (atomic_fetch_sub(&d->refs, 1) == 1) {
        pthread_mutex_destroy(&d->mu);
        pthread_cond_destroy(&d->cv);
        free(d);
    }
}

/* Narrows [*b, *b + *n) to its bytes without surrounding whitespace. */
static void trim(const char **b, size_t *n)
{
    while (*n && isspace((unsigned char)(*b)[*n - 1]))
        (*n)--;
    while (*n && isspace((unsigned char)**b)) {
        (*b)++;
        (*n)--;
    }
}

/* ---- requests -------------------------------------------------------------------------------- */

/* GET/PUT base+path; returns the body (trimmed, heap) on a 200 answer, else NULL. With
 * want_header, the reply must carry that "Name: value" header. */
static char *fetch(rt_cloud_discovery *d, const char *method, const char *base, const char *path,
                   const char *const *headers, const char *want_header)
{
    char url[1536];
    if (!rt_pathf(url, sizeof url, "%s%s", base, path))
        return NULL;
    rt_http_response r;
    char err[256];
    char *body = NULL;
    if (rt_http_request(method, url, headers, NULL, d->deadline, MAX_META_BODY, &r, err, sizeof err) < 0) {
        rt_log(&d->log, RT_LOG_DEBUG, "cloud metadata %s %s: %s", method, url, err);
    } else if (r.status != 200) {
        rt_log(&d->log, RT_LOG_DEBUG, "cloud metadata %s %s: HTTP %d", method, url, r.status);
    } else {
        bool ok = true;
        if (want_header) {
            char name[64], v[128];
            const char *colon = strchr(want_header, ':');
            size_t nl = colon ? (size_t)(colon - want_header) : 0;
            ok = colon && nl < sizeof name;
            if (ok) {
                memcpy(name, want_header, nl);
                name[nl] = '\0';
                ok = rt_http_header(&r, name, v, sizeof v) && strcmp(v, colon + 2) == 0;
            }
        }
        if (ok) {
            size_t n = r.body.len;
            const char *b = r.body.data ? r.body.data : "";
            trim(&b, &n);
            body = strndup(b, n);
        }
    }
    rt_http_response_free(&r);
    return body;
}

/* ---- reading the replies (pure: a body in, facts out) ------------------------------------------ */

/* A plausible identifier: 1 to 100 bytes, printable, no spaces (garbage answers are rejected). */
static bool ident_n(const char *s, size_t n)
{
    if (!s || n == 0 || n > 100)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !(s[i] && strchr("-_.:/", s[i])))
            return false;
    return true;
}

static bool ident(const char *s)
{
    return s && ident_n(s, strnlen(s, 101));
}

/* Copies s[0..n) into dst when it is an identifier; returns whether it did. */
static bool put_n(char *dst, size_t cap, const char *s, size_t n)
{
    if (!ident_n(s, n) || n >= cap)
        return false;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return true;
}

static void put(char *dst, size_t cap, const char *s)
{
    if (ident(s))
        rt_copy_str(dst, cap, s);
}

static const char *json_str(json_t *o, const char *k)
{
    json_t *v = json_is_object(o) ? json_object_get(o, k) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The body as a JSON object (the caller frees it with json_decref), or NULL. */
static json_t *load_object(const char *buf, size_t len)
{
    if (!buf || len == 0)
        return NULL;
    json_error_t e;
    json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);
    if (j && !json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}

/* The part of [buf, buf + len) after its last '/' (all of it without one), trimmed first. */
static const char *last_part(const char *buf, size_t *len)
{
    trim(&buf, len);
    for (size_t i = *len; i > 0; i--)
        if (buf[i - 1] == '/') {
            *len -= i;
            return buf + i;
        }
    return buf;
}

bool rt_cloud_text_parse(const char *buf, size_t len, char *out, size_t cap)
{
    trim(&buf, &len);
    return put_n(out, cap, buf, len);
}

bool rt_cloud_aws_domain_parse(const char *buf, size_t len)
{
    trim(&buf, &len);
    return (len == 13 && memcmp(buf, "amazonaws.com", 13) == 0) || (len == 16 && memcmp(buf, "amazonaws.com.cn", 16) == 0);
}

bool rt_cloud_aws_identity_parse(const char *buf, size_t len, rt_cloud_facts *r)
{
    json_t *doc = load_object(buf, len);
    put(r->account, sizeof r->account, json_str(doc, "accountId"));
    put(r->region, sizeof r->region, json_str(doc, "region"));
    put(r->zone, sizeof r->zone, json_str(doc, "availabilityZone"));
    put(r->type, sizeof r->type, json_str(doc, "instanceType"));
    json_decref(doc);
    return doc != NULL;
}

bool rt_cloud_gcp_zone_parse(const char *buf, size_t len, rt_cloud_facts *r)
{
    size_t n = len;
    const char *z = last_part(buf, &n); /* projects/NUMBER/zones/ZONE */
    if (!ident_n(z, n))
        return false;
    r->found = true;
    put_n(r->zone, sizeof r->zone, z, n);
    const char *dash = memrchr(z, '-', n);
    if (dash) /* europe-west1-b -> europe-west1 */
        put_n(r->region, sizeof r->region, z, (size_t)(dash - z));
    return true;
}

bool rt_cloud_gcp_machine_type_parse(const char *buf, size_t len, char *out, size_t cap)
{
    const char *t = last_part(buf, &len);
    return put_n(out, cap, t, len);
}

bool rt_cloud_azure_parse(const char *buf, size_t len, rt_cloud_facts *r)
{
    json_t *j = load_object(buf, len);
    json_t *c = j ? json_object_get(j, "compute") : NULL;
    if (json_is_object(c) && ident(json_str(c, "location")) && (json_str(c, "vmId") || json_str(c, "azEnvironment"))) {
        r->found = true;
        put(r->region, sizeof r->region, json_str(c, "location"));
        put(r->zone, sizeof r->zone, json_str(c, "zone"));
        put(r->type, sizeof r->type, json_str(c, "vmSize"));
        put(r->account, sizeof r->account, json_str(c, "subscriptionId"));
    }
    json_decref(j);
    return r->found;
}

bool rt_cloud_alicloud_region_parse(const char *buf, size_t len, rt_cloud_facts *r)
{
    trim(&buf, &len);
    if (!ident_n(buf, len) || !memchr(buf, '-', len)) /* cn-hangzhou, eu-central-1, ... */
        return false;
    r->found = true;
    put_n(r->region, sizeof r->region, buf, len);
    return true;
}

bool rt_cloud_hcloud_parse(const char *buf, size_t len, rt_cloud_facts *r)
{
    char id[128] = "", az[128] = "";
    const char *p = buf, *end = buf ? buf + len : buf, *line, *le;
    while (rt_next_line(&p, end, &line, &le)) {
        const char *colon = memchr(line, ':', (size_t)(le - line));
        if (!colon)
            continue;
        char k[64], v[128];
        size_t kn = rt_copy_trim(k, sizeof k, line, (size_t)(colon - line));
        size_t vn = rt_copy_trim(v, sizeof v, colon + 1, (size_t)(le - colon - 1));
        if (kn == 11 && memcmp(k, "instance-id", 11) == 0)
            put_n(id, sizeof id, v, vn);
        else if (kn == 17 && memcmp(k, "availability-zone", 17) == 0)
            put_n(az, sizeof az, v, vn);
    }
    if (!id[0] || !az[0])
        return false;
    r->found = true;
    put(r->zone, sizeof r->zone, az); /* fsn1-dc14 */
    const char *dc = strstr(az, "-dc");
    snprintf(r->region, sizeof r->region, "%.*s", dc ? (int)(dc - az) : (int)strlen(az), az); /* fsn1 */
    return true;
}

bool rt_cloud_upcloud_parse(const char *buf, size_t len, rt_cloud_facts *r)
{
    json_t *j = load_object(buf, len);
    const char *cn = json_str(j, "cloud_name");
    if (cn && strcmp(cn, "upcloud") == 0 && ident(json_str(j, "region"))) {
        r->found = true;
        put(r->region, sizeof r->region, json_str(j, "region")); /* an UpCloud zone, e.g. fi-hel1 */
        put(r->zone, sizeof r->zone, json_str(j, "region"));
    }
    json_decref(j);
    return r->found;
}

bool rt_cloud_vultr_parse(const char *buf, size_t len, rt_cloud_facts *r)
{
    json_t *j = load_object(buf, len);
    json_t *region = j ? json_object_get(j, "region") : NULL;
    if (j && ident(json_str(j, "instanceid"))) {
        r->found = true;
        const char *rc = json_str(region, "regioncode");
        if (ident(rc)) {
            char low[128];
            size_t n = 0;
            for (; rc[n] && n + 1 < sizeof low; n++)
                low[n] = (char)tolower((unsigned char)rc[n]);
            low[n] = '\0';
            put(r->region, sizeof r->region, low);
        }
    }
    json_decref(j);
    return r->found;
}

bool rt_cloud_ovh_network_parse(const char *buf, size_t len)
{
    json_t *net = load_object(buf, len);
    json_t *services = net ? json_object_get(net, "services") : NULL;
    bool ovh = false;
    size_t i;
    json_t *s;
    json_array_foreach(services, i, s)
    {
        const char *type = json_str(s, "type"), *addr = json_str(s, "address");
        if (type && addr && strcmp(type, "dns") == 0 && strcmp(addr, "213.186.33.99") == 0)
            ovh = true;
    }
    json_decref(net);
    return ovh;
}

bool rt_cloud_ovh_meta_parse(const char *buf, size_t len, rt_cloud_facts *r)
{
    json_t *meta = load_object(buf, len);
    const char *az = json_str(meta, "availability_zone");
    if (az && strcmp(az, "nova") != 0)
        put(r->region, sizeof r->region, az);
    put(r->account, sizeof r->account, json_str(meta, "project_id"));
    json_decref(meta);
    return meta != NULL;
}

/* ---- the vendors ------------------------------------------------------------------------------ */

static size_t blen(const char *s)
{
    return s ? strlen(s) : 0;
}

/* GET base+path and, when the reply is an identifier, copy it into dst (128 bytes). */
static void fetch_text(rt_cloud_discovery *d, const char *base, const char *path, const char *const *headers, char *dst)
{
    char *v = fetch(d, "GET", base, path, headers, NULL);
    rt_cloud_text_parse(v, blen(v), dst, 128);
    free(v);
}

/* GET base+path and read the reply with parse into r; returns what parse did (false without a
 * reply). */
static bool fetch_facts(rt_cloud_discovery *d, const char *base, const char *path, const char *const *headers,
                        bool (*parse)(const char *, size_t, rt_cloud_facts *), rt_cloud_facts *r)
{
    char *b = fetch(d, "GET", base, path, headers, NULL);
    bool ok = parse(b, blen(b), r);
    free(b);
    return ok;
}

/* A fact read as a page's plain text: the page's path and the member of rt_cloud_facts. */
typedef struct text_fact {
    const char *path;
    size_t off;
} text_fact;

/* Each of facts[0..n) still empty in r read as the text of base+its path. */
static void fetch_texts(rt_cloud_discovery *d, const char *base, const char *const *headers, const text_fact *facts,
                        size_t n, rt_cloud_facts *r)
{
    for (size_t i = 0; i < n; i++) {
        char *dst = (char *)r + facts[i].off;
        if (!*dst)
            fetch_text(d, base, facts[i].path, headers, dst);
    }
}

/* Whether base/path answers a GET with a body that is (the vendor's own mark in it). */
static bool answers_as(rt_cloud_discovery *d, const char *base, const char *path, const char *const *headers,
                       bool (*is)(const char *buf, size_t len))
{
    char *body = fetch(d, "GET", base, path, headers, NULL);
    bool yes = is(body, blen(body));
    free(body);
    return yes;
}

/* AWS, IMDSv2: a session token, then the services domain proves it is AWS. */
static void probe_aws(rt_cloud_discovery *d, rt_cloud_facts *r)
{
    const char *ttl[] = {"X-aws-ec2-metadata-token-ttl-seconds: 60", NULL};
    char *token = fetch(d, "PUT", d->base_169, "/latest/api/token", ttl, NULL);
    if (!token || !*token || strlen(token) > 512 || strpbrk(token, "\r\n")) {
        free(token);
        return;
    }
    char th[600];
    snprintf(th, sizeof th, "X-aws-ec2-metadata-token: %s", token);
    free(token);
    const char *h[] = {th, NULL};
    if (!answers_as(d, d->base_169, "/latest/meta-data/services/domain", h, rt_cloud_aws_domain_parse))
        return;
    r->found = true;
    fetch_facts(d, d->base_169, "/latest/dynamic/instance-identity/document", h, rt_cloud_aws_identity_parse, r);
    static const text_fact fallback[] = {
        {"/latest/meta-data/instance-type", offsetof(rt_cloud_facts, type)},
        {"/latest/meta-data/placement/region", offsetof(rt_cloud_facts, region)},
        {"/latest/meta-data/placement/availability-zone", offsetof(rt_cloud_facts, zone)}};
    fetch_texts(d, d->base_169, h, fallback, RT_ARRAY_LEN(fallback), r);
}

/* GCP: every answer carries "Metadata-Flavor: Google". */
static void probe_gcp(rt_cloud_discovery *d, rt_cloud_facts *r)
{
    const char *h[] = {"Metadata-Flavor: Google", NULL};
    const char *flavor = "Metadata-Flavor: Google";
    char *zone = fetch(d, "GET", d->base_169, "/computeMetadata/v1/instance/zone", h, flavor);
    bool gcp = rt_cloud_gcp_zone_parse(zone, blen(zone), r);
    free(zone);
    if (!gcp)
        return;
    char *mt = fetch(d, "GET", d->base_169, "/computeMetadata/v1/instance/machine-type", h, flavor);
    rt_cloud_gcp_machine_type_parse(mt, blen(mt), r->type, sizeof r->type);
    free(mt);
    char *proj = fetch(d, "GET", d->base_169, "/computeMetadata/v1/project/project-id", h, flavor);
    rt_cloud_text_parse(proj, blen(proj), r->account, sizeof r->account);
    free(proj);
}

static void probe_azure(rt_cloud_discovery *d, rt_cloud_facts *r)
{
    const char *h[] = {"Metadata: true", NULL};
    fetch_facts(d, d->base_169, "/metadata/instance?api-version=2021-02-01", h, rt_cloud_azure_parse, r);
}

/* Alibaba Cloud: its own address; a token when the instance is in hardened mode. */
static void probe_alicloud(rt_cloud_discovery *d, rt_cloud_facts *r)
{
    const char *ttl[] = {"X-aliyun-ecs-metadata-token-ttl-seconds: 60", NULL};
    char *token = fetch(d, "PUT", d->base_alibaba, "/latest/api/token", ttl, NULL);
    char th[600] = "";
    if (token && *token && strlen(token) < 512 && !strpbrk(token, "\r\n"))
        snprintf(th, sizeof th, "X-aliyun-ecs-metadata-token: %s", token);
    free(token);
    const char *h[] = {th[0] ? th : NULL, NULL};
    if (!fetch_facts(d, d->base_alibaba, "/latest/meta-data/region-id", h, rt_cloud_alicloud_region_parse, r))
        return;
    /* the region's answer filled none of them: each is read */
    static const text_fact more[] = {{"/latest/meta-data/zone-id", offsetof(rt_cloud_facts, zone)},
                                     {"/latest/meta-data/instance/instance-type", offsetof(rt_cloud_facts, type)},
                                     {"/latest/meta-data/owner-account-id", offsetof(rt_cloud_facts, account)}};
    fetch_texts(d, d->base_alibaba, h, more, RT_ARRAY_LEN(more), r);
}

/* Hetzner Cloud: "key: value" lines. */
static void probe_hcloud(rt_cloud_discovery *d, rt_cloud_facts *r)
{
    fetch_facts(d, d->base_169, "/hetzner/v1/metadata", NULL, rt_cloud_hcloud_parse, r);
}

static void probe_upcloud(rt_cloud_discovery *d, rt_cloud_facts *r)
{
    fetch_facts(d, d->base_169, "/metadata/v1.json", NULL, rt_cloud_upcloud_parse, r);
}

static void probe_vultr(rt_cloud_discovery *d, rt_cloud_facts *r)
{
    fetch_facts(d, d->base_169, "/v1.json", NULL, rt_cloud_vultr_parse, r);
}

/* OVHcloud Public Cloud: OpenStack metadata, told apart by OVH's resolver. */
static void probe_ovh(rt_cloud_discovery *d, rt_cloud_facts *r)
{
    if (!answers_as(d, d->base_169, "/openstack/latest/network_data.json", NULL, rt_cloud_ovh_network_parse))
        return;
    r->found = true;
    fetch_facts(d, d->base_169, "/openstack/latest/meta_data.json", NULL, rt_cloud_ovh_meta_parse, r);
    fetch_text(d, d->base_169, "/latest/meta-data/instance-type", NULL, r->type);
}

typedef void (*probe_fn)(rt_cloud_discovery *, rt_cloud_facts *);
static const probe_fn probes[P_COUNT] = {probe_aws,    probe_gcp,     probe_azure, probe_alicloud,
                                         probe_hcloud, probe_upcloud, probe_vultr, probe_ovh};

/* ---- running them ----------------------------------------------------------------------------- */

/* With d->mu held: decides when the answer is known (the first vendor in priority order that
 * was found, once every vendor before it has answered), and publishes it. */
static void settle(rt_cloud_discovery *d, bool all_done)
{
    if (d->finished)
        return;
    int win = -1;
    for (int i = 0; i < P_COUNT; i++) {
        if (!d->done[i] && !all_done)
            return; /* a vendor ahead in line has not answered yet */
        if (d->done[i] && d->res[i].found) {
            win = i;
            break;
        }
    }
    if (win < 0 && !all_done)
        return;
    memset(&d->out, 0, sizeof d->out);
    if (win >= 0) {
        const rt_cloud_facts *r = &d->res[win];
        d->out.vendor_id = vendor_ids[win];
        const char *src[4] = {r->account, r->region, r->zone, r->type};
        const char **dst[4] = {&d->out.account_id, &d->out.region_id, &d->out.zone_id, &d->out.instance_type};
        for (int k = 0; k < 4; k++)
            if (src[k][0]) {
                rt_copy_str(d->out_strs[k], sizeof d->out_strs[k], src[k]);
                *dst[k] = d->out_strs[k];
            }
    }
    d->out.discovery_secs = rt_mono_secs() - d->start;
    d->finished = true;
    rt_log(&d->log, RT_LOG_DEBUG, "cloud discovery: %s in %.3f s", d->out.vendor_id ? d->out.vendor_id : "no cloud",
           d->out.discovery_secs);
    pthread_cond_broadcast(&d->cv);
}

static void *run_probe(void *arg)
{
    probe *p = arg;
    rt_cloud_discovery *d = p->d;
    rt_cloud_facts r;
    memset(&r, 0, sizeof r);
    probes[p->which](d, &r);
    pthread_mutex_lock(&d->mu);
    d->res[p->which] = r;
    d->done[p->which] = true;
    d->pending--;
    settle(d, d->pending == 0);
    pthread_mutex_unlock(&d->mu);
    free(p);
    unref(d);
    return NULL;
}

/* "http://host:port/anything" -> "http://host:port" */
static bool base_of(const char *url, char *out, size_t cap)
{
    rt_url u;
    if (rt_url_parse(url, &u) < 0)
        return false;
    bool v6 = strchr(u.host, ':') != NULL;
    return v6 ? rt_pathf(out, cap, "http://[%s]:%d", u.host, u.port) : rt_pathf(out, cap, "http://%s:%d", u.host, u.port);
}

rt_error rt_cloud_start(const rt_cloud_options *opts, rt_cloud_discovery **out)
{
    *out = NULL;
    rt_cloud_options o = RT_CLOUD_OPTIONS_INIT;
    if (rt_struct_copy(&o, sizeof o, opts) < 0)
        return RT_ERR_INVALID;
    if (o.disabled)
        return RT_ERR_DISABLED;
    rt_cloud_discovery *d = calloc(1, sizeof *d);
    if (!d)
        return RT_ERR_NOMEM;
    d->log.fn = o.log;
    d->log.user = o.log_user;
    if (o.metadata_url && *o.metadata_url) {
        if (!base_of(o.metadata_url, d->base_169, sizeof d->base_169)) {
            rt_log(&d->log, RT_LOG_WARN, "the cloud metadata URL is not an http:// URL: %s", o.metadata_url);
            free(d);
            return RT_ERR_INVALID;
        }
        memcpy(d->base_alibaba, d->base_169, sizeof d->base_alibaba);
    } else {
        rt_copy_str(d->base_169, sizeof d->base_169, "http://169.254.169.254");
        rt_copy_str(d->base_alibaba, sizeof d->base_alibaba, "http://100.100.100.200");
    }
    pthread_mutex_init(&d->mu, NULL);
    rt_clock_cond_init(&d->cv); /* waits measured on the monotonic clock: a clock jump moves no bound */
    d->start = rt_mono_secs();
    d->deadline = d->start + DISCOVERY_SECS;
    atomic_init(&d->refs, 1); /* the caller's */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    /* block every signal in the probes: the caller's signal handling stays its own */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_mutex_lock(&d->mu);
    for (int i = 0; i < P_COUNT; i++) {
        probe *p = malloc(sizeof *p);
        pthread_t t;
        if (p) {
            p->d = d;
            p->which = i;
            atomic_fetch_add(&d->refs, 1);
            d->pending++;
        }
        if (!p || pthread_create(&t, &attr, run_probe, p) != 0) {
            if (p) {
                atomic_fetch_sub(&d->refs, 1);
                d->pending--;
                free(p);
            }
            d->done[i] = true; /* could not ask: as if it said no */
        }
    }
    settle(d, d->pending == 0);
    pthread_mutex_unlock(&d->mu);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    *out = d;
    return RT_OK;
}

const rt_cloud *rt_cloud_result(rt_cloud_discovery *d, double wait_secs)
{
    if (!d)
        return NULL;
    pthread_mutex_lock(&d->mu);
    if (!d->finished && wait_secs > 0) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        double t = (double)until.tv_sec + (double)until.tv_nsec / 1e9 + wait_secs;
        until.tv_sec = (time_t)t;
        until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
        while (!d->finished && pthread_cond_timedwait(&d->cv, &d->mu, &until) == 0)
            ;
    }
    const rt_cloud *r = d->finished ? &d->out : NULL;
    pthread_mutex_unlock(&d->mu);
    return r;
}

rt_cloud_discovery *rt_cloud_ref(rt_cloud_discovery *d)
{
    if (d)
        atomic_fetch_add(&d->refs, 1);
    return d;
}

int rt_cloud_refs(rt_cloud_discovery *d)
{
    return atomic_load(&d->refs);
}

void rt_cloud_free(rt_cloud_discovery *d)
{
    if (d)
        unref(d); /* probes still running hold their own references */
}
