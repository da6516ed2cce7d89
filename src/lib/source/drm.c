/* drm.c - AMD and Intel GPUs through the kernel's DRM: amdgpu, i915 and xe cards found in sysfs
 * with their attribute files kept open, the pure DRM fdinfo parser, a process's DRM clients
 * (its fds on /dev/dri), and the tracked tree's share from the clients' engine counters. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/dirwalk.h"
#include "drm.h"

typedef struct drm_card {
    rt_gpu_facts facts;
    long number; /* N of cardN: the listing order */
    /* attribute files kept open, -1 when absent */
    int busy_fd, vram_used_fd, vram_total_fd, temp_fd, power_fd, freq_fd, energy_fd;
    double freq_to_mhz; /* Hz files: 1e-6; MHz files: 1 */
    /* hwmon energy1_input: the counter at the last reading that gave it (uJ), the
     * running total since the first, and whether the latest reading gave it */
    bool energy_seen, energy_now;
    uint64_t energy_last_uj, energy_total_uj;
    /* the tree's share over the last interval (rt_drm_tree) */
    double busy; /* the busiest engine's fraction of the interval */
    uint64_t vram;
    uint64_t main_vram; /* of it, the clients reached through the root's fds */
    bool present;
    bool timed; /* a client seen at the previous call too: busy covers an interval */
} drm_card;

/* The tree's DRM clients, to turn engine counters into utilization between samples. */
typedef struct drm_seen {
    char pdev[32];
    uint64_t client_id;
    rt_drm_engine engines[RT_DRM_MAX_ENGINES];
    size_t nengines;
    double mono;
    unsigned gen;
} drm_seen;

struct rt_drm {
    const rt_roots *roots;
    drm_card *card;
    size_t ncard, card_cap;
    drm_seen *seen;
    size_t nseen, seen_cap;
    unsigned gen;
    int64_t main_pid;    /* the tree's root (rt_drm_set_main) */
    int64_t walking_pid; /* the process whose fds rt_drm_tree is reading */
    double mono; /* the time of the rt_drm_tree under way */
    char buf[4096];
};

/* ---- the cards ---------------------------------------------------------------------------------- */

/* The last component of a path (the name a link points at). */
static const char *base_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Opens class/drm/CARD/REL under the sys root. Returns the fd, or -1. */
static int open_attr(const rt_drm *d, const char *card, const char *rel)
{
    char path[256];
    if (!rt_pathf(path, sizeof path, "class/drm/%s/%s", card, rel))
        return -1;
    int fd = rt_open_at(d->roots->sys_fd, path);
    return fd < 0 ? -1 : fd;
}

/* Returns a heap copy (caller frees) of the card's attribute REL, trimmed; NULL when missing,
 * empty or out of memory. */
static char *read_card_str(const rt_drm *d, const char *card, const char *rel)
{
    char buf[1024];
    int fd = open_attr(d, card, rel);
    if (fd < 0)
        return NULL;
    ssize_t n = rt_pread_single(fd, buf, sizeof buf);
    close(fd);
    char out[1024];
    return n > 0 && rt_copy_trim(out, sizeof out, buf, (size_t)n) ? rt_strdup(out) : NULL;
}

typedef struct hwmon_find {
    char *out;
    size_t cap;
    bool ok;
} hwmon_find;

/* Walker callback: stops at the first hwmon* entry, its path kept in the hwmon_find. */
static int hwmon_entry(void *user, const char *name, unsigned char d_type)
{
    (void)d_type;
    hwmon_find *h = user;
    if (strncmp(name, "hwmon", 5) != 0)
        return 0;
    h->ok = rt_pathf(h->out, h->cap, "device/hwmon/%s", name);
    return h->ok;
}

/* The first hwmon directory of the card's device, e.g. "device/hwmon/hwmon3", into out[cap].
 * Returns false when the card has none. */
static bool card_hwmon(const rt_drm *d, const char *card, char *out, size_t cap)
{
    char path[256];
    hwmon_find h = {out, cap, false};
    return rt_pathf(path, sizeof path, "class/drm/%s/device/hwmon", card) &&
           rt_dir_walk(d->roots->sys_fd, path, hwmon_entry, &h) > 0 && h.ok;
}

/* Adds card (a cardN name) when its driver is amdgpu, i915 or xe, with its static facts and
 * attribute files. Leaves anything else, and gives up quietly when out of memory. */
static void add_card(rt_drm *d, const char *card)
{
    char path[256], target[512];
    if (!rt_pathf(path, sizeof path, "class/drm/%s/device/driver", card))
        return;
    ssize_t n = readlinkat(d->roots->sys_fd, path, target, sizeof target - 1);
    if (n <= 0)
        return;
    target[n] = '\0';
    char driver[32];
    if (!rt_copy_str(driver, sizeof driver, base_of(target)))
        return;
    bool amd = strcmp(driver, "amdgpu") == 0, intel = strcmp(driver, "i915") == 0 || strcmp(driver, "xe") == 0;
    if (!amd && !intel)
        return; /* NVIDIA cards come through NVML; display-only drivers are not GPUs to track */
    if (rt_grow(&d->card, &d->card_cap, d->ncard + 1, sizeof *d->card) < 0)
        return;
    drm_card *c = &d->card[d->ncard++];
    rt_gpu_facts_init(&c->facts);
    c->number = strtol(card + 4, NULL, 10);
    c->busy_fd = c->vram_used_fd = c->vram_total_fd = c->temp_fd = c->power_fd = c->freq_fd = c->energy_fd = -1;
    c->energy_seen = c->energy_now = false;
    c->energy_last_uj = c->energy_total_uj = 0;
    rt_gpu_facts *f = &c->facts;
    /* the PCI address: the device's uevent names it; else the last part of the link */
    char *uevent = read_card_str(d, card, "device/uevent");
    const char *slot = uevent ? strstr(uevent, "PCI_SLOT_NAME=") : NULL;
    if (slot) {
        slot += 14;
        f->host_id = strndup(slot, strcspn(slot, "\n"));
    } else if (rt_pathf(path, sizeof path, "class/drm/%s/device", card) &&
               (n = readlinkat(d->roots->sys_fd, path, target, sizeof target - 1)) > 0) {
        target[n] = '\0';
        f->host_id = rt_strdup(base_of(target));
    }
    free(uevent);
    f->uuid = read_card_str(d, card, "device/unique_id");
    char *vendor = read_card_str(d, card, "device/vendor");
    char *device = read_card_str(d, card, "device/device");
    f->name = read_card_str(d, card, "device/product_name");
    if (!f->name) {
        char nm[96];
        snprintf(nm, sizeof nm, "%s GPU %s", amd ? "AMD" : "Intel", device ? device : "");
        f->name = rt_strdup(nm);
    }
    rt_gpu_facts_add(f, "driver", "%s", driver);
    if (vendor)
        rt_gpu_facts_add(f, "pci_vendor_id", "%s", vendor);
    if (device)
        rt_gpu_facts_add(f, "pci_device_id", "%s", device);
    free(vendor);
    free(device);
    char *vbios = read_card_str(d, card, "device/vbios_version");
    if (vbios)
        rt_gpu_facts_add(f, "vbios_version", "%s", vbios);
    free(vbios);
    rt_gpu_facts_add(f, "card", "%s", card);
    c->busy_fd = open_attr(d, card, "device/gpu_busy_percent");
    c->vram_used_fd = open_attr(d, card, "device/mem_info_vram_used");
    c->vram_total_fd = open_attr(d, card, "device/mem_info_vram_total");
    char hw[128], rel[192];
    if (card_hwmon(d, card, hw, sizeof hw)) {
        rt_pathf(rel, sizeof rel, "%s/temp1_input", hw);
        c->temp_fd = open_attr(d, card, rel);
        rt_pathf(rel, sizeof rel, "%s/power1_average", hw);
        c->power_fd = open_attr(d, card, rel);
        if (c->power_fd < 0) {
            rt_pathf(rel, sizeof rel, "%s/power1_input", hw);
            c->power_fd = open_attr(d, card, rel);
        }
        rt_pathf(rel, sizeof rel, "%s/energy1_input", hw); /* i915, xe: the card's; amdgpu: rarely */
        c->energy_fd = open_attr(d, card, rel);
        rt_pathf(rel, sizeof rel, "%s/freq1_input", hw);
        c->freq_fd = open_attr(d, card, rel);
        c->freq_to_mhz = 1e-6; /* hwmon frequencies are in Hz */
    }
    if (c->freq_fd < 0) { /* Intel: the GPU's actual frequency in MHz */
        static const char *const freq_files[] = {"gt_act_freq_mhz", "device/tile0/gt0/freq0/act_freq"};
        for (size_t i = 0; i < RT_ARRAY_LEN(freq_files) && c->freq_fd < 0; i++)
            c->freq_fd = open_attr(d, card, freq_files[i]);
        c->freq_to_mhz = 1.0;
    }
}

/* Walker callback over class/drm: adds each cardN (user: the rt_drm); never stops. */
static int card_entry(void *user, const char *name, unsigned char d_type)
{
    (void)d_type; /* class/drm holds links */
    if (strncmp(name, "card", 4) == 0 && name[4] && strspn(name + 4, "0123456789") == strlen(name + 4))
        add_card(user, name); /* connectors (card0-DP-1) and render nodes are not devices */
    return 0;
}

/* qsort order of cards: by N of cardN. */
static int by_number(const void *a, const void *b)
{
    long x = ((const drm_card *)a)->number, y = ((const drm_card *)b)->number;
    return (x > y) - (x < y);
}

rt_drm *rt_drm_open(const rt_roots *roots)
{
    rt_drm *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->roots = roots;
    if (roots->sys_fd >= 0 && rt_dir_walk(roots->sys_fd, "class/drm", card_entry, d) > 0 && d->ncard > 1)
        qsort(d->card, d->ncard, sizeof *d->card, by_number); /* card0, card1, ... in number order */
    return d;
}

size_t rt_drm_count(const rt_drm *d)
{
    return d ? d->ncard : 0;
}

/* Reads a decimal attribute from a kept-open fd. Returns false when fd is -1 or unreadable. */
static bool read_u64_fd(rt_drm *d, int fd, uint64_t *out)
{
    if (fd < 0)
        return false;
    ssize_t n = rt_pread_single(fd, d->buf, sizeof d->buf);
    const char *q = d->buf;
    return n > 0 && rt_parse_u64(&q, d->buf + n, out);
}

void rt_drm_read(rt_drm *d, size_t i, rt_gpu *o)
{
    drm_card *c = &d->card[i];
    rt_gpu_facts_out(&c->facts, o);
    uint64_t v, t;
    if (read_u64_fd(d, c->busy_fd, &v) && v <= 100)
        o->utilization_pct = (double)v;
    if (read_u64_fd(d, c->vram_total_fd, &t)) {
        o->vram_total_bytes = t;
        if (read_u64_fd(d, c->vram_used_fd, &v)) {
            o->vram_used_bytes = v;
            o->vram_used_pct = t ? (double)v / (double)t * 100.0 : NAN;
        }
    }
    if (read_u64_fd(d, c->temp_fd, &v))
        o->temperature_celsius = (double)v / 1000.0; /* millidegrees */
    if (read_u64_fd(d, c->power_fd, &v))
        o->power_watts = (double)v / 1e6; /* microwatts */
    if (read_u64_fd(d, c->freq_fd, &v))
        o->frequency_mhz = (double)v * c->freq_to_mhz;
    c->energy_now = read_u64_fd(d, c->energy_fd, &v);
    if (c->energy_now) {
        if (c->energy_seen) /* backwards: the counter was reset, and counts again from 0 */
            c->energy_total_uj += v >= c->energy_last_uj ? v - c->energy_last_uj : v;
        c->energy_seen = true;
        c->energy_last_uj = v;
    }
}

int rt_drm_energy(const rt_drm *d, size_t i, double *joules)
{
    if (!d || i >= d->ncard || !d->card[i].energy_now)
        return 0;
    *joules = (double)d->card[i].energy_total_uj / 1e6;
    return 1;
}

void rt_drm_close(rt_drm *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->ncard; i++) {
        drm_card *c = &d->card[i];
        rt_gpu_facts_free(&c->facts);
        rt_close_all(&c->busy_fd, &c->vram_used_fd, &c->vram_total_fd, &c->temp_fd, &c->power_fd, &c->freq_fd,
                     &c->energy_fd);
    }
    free(d->card);
    free(d->seen);
    free(d);
}

/* ---- DRM fdinfo ----------------------------------------------------------------------------------- */
/* The engine called name[0..len) in c, added (capacity 1) when new. Returns NULL when the name
 * is empty or too long to keep, or c already holds RT_DRM_MAX_ENGINES engines. */
static rt_drm_engine *engine(rt_drm_client *c, const char *name, size_t len)
{
    if (len == 0 || len >= sizeof c->engines[0].name)
        return NULL;
    for (size_t i = 0; i < c->nengines; i++)
        if (strlen(c->engines[i].name) == len && memcmp(c->engines[i].name, name, len) == 0)
            return &c->engines[i];
    if (c->nengines == RT_DRM_MAX_ENGINES)
        return NULL;
    rt_drm_engine *e = &c->engines[c->nengines++];
    memset(e, 0, sizeof *e);
    memcpy(e->name, name, len);
    e->capacity = 1;
    return e;
}

/* A number with an optional unit (KiB, MiB, GiB scale memory to bytes) into *out. Returns
 * false when no number is there. */
static bool value_bytes(const char *p, const char *end, uint64_t *out)
{
    uint64_t v;
    if (!rt_parse_u64(&p, end, &v))
        return false;
    while (p < end && *p == ' ')
        p++;
    uint64_t mul = 1;
    if (end - p >= 3 && memcmp(p, "KiB", 3) == 0)
        mul = 1024;
    else if (end - p >= 3 && memcmp(p, "MiB", 3) == 0)
        mul = 1024 * 1024;
    else if (end - p >= 3 && memcmp(p, "GiB", 3) == 0)
        mul = 1024ull * 1024 * 1024;
    *out = v * mul;
    return true;
}

/* Whether the key k[0..kl) starts with prefix and has more after it; *rest is then the
 * prefix's length. */
static bool starts(const char *k, size_t kl, const char *prefix, size_t *rest)
{
    size_t pl = strlen(prefix);
    if (kl <= pl || memcmp(k, prefix, pl) != 0)
        return false;
    *rest = pl;
    return true;
}

int rt_drm_fdinfo_parse(const char *buf, size_t len, rt_drm_client *out)
{
    memset(out, 0, sizeof *out);
    bool has_driver = false;
    uint64_t resident = 0, memory = 0, total = 0;
    bool has_resident = false, has_memory = false, has_total = false;
    const char *p = buf, *end = buf + len, *line, *le;
    while (rt_next_line(&p, end, &line, &le)) {
        const char *colon = memchr(line, ':', (size_t)(le - line));
        if (!colon || le - line < 5 || memcmp(line, "drm-", 4) != 0)
            continue;
        const char *k = line;
        size_t kl = (size_t)(colon - line);
        const char *v = colon + 1;
        while (v < le && (*v == ' ' || *v == '\t'))
            v++;
        size_t r;
        uint64_t x;
        if (kl == 10 && memcmp(k, "drm-driver", 10) == 0) {
            has_driver = rt_copy_trim(out->driver, sizeof out->driver, v, (size_t)(le - v)) > 0;
        } else if (kl == 8 && memcmp(k, "drm-pdev", 8) == 0) {
            rt_copy_trim(out->pdev, sizeof out->pdev, v, (size_t)(le - v));
        } else if (kl == 13 && memcmp(k, "drm-client-id", 13) == 0) {
            const char *q = v;
            out->has_client_id = rt_parse_u64(&q, le, &out->client_id);
        } else if (starts(k, kl, "drm-engine-capacity-", &r)) {
            rt_drm_engine *e = engine(out, k + r, kl - r);
            const char *q = v;
            if (e && rt_parse_u64(&q, le, &x) && x > 0)
                e->capacity = x;
        } else if (starts(k, kl, "drm-engine-", &r)) {
            rt_drm_engine *e = engine(out, k + r, kl - r);
            const char *q = v;
            if (e && rt_parse_u64(&q, le, &e->busy_ns))
                e->has_ns = true;
        } else if (starts(k, kl, "drm-total-cycles-", &r)) {
            rt_drm_engine *e = engine(out, k + r, kl - r);
            const char *q = v;
            if (e)
                rt_parse_u64(&q, le, &e->total_cycles);
        } else if (starts(k, kl, "drm-cycles-", &r)) {
            rt_drm_engine *e = engine(out, k + r, kl - r);
            const char *q = v;
            if (e && rt_parse_u64(&q, le, &e->cycles))
                e->has_cycles = true;
        } else {
            /* memory regions: drm-resident-<r>, drm-total-<r>, drm-memory-<r> (older); the
             * device's own memory is called vram (amdgpu, xe) or local (i915) */
            const char *prefixes[] = {"drm-resident-", "drm-total-", "drm-memory-"};
            uint64_t *acc[] = {&resident, &total, &memory};
            bool *flag[] = {&has_resident, &has_total, &has_memory};
            for (int i = 0; i < 3; i++) {
                if (!starts(k, kl, prefixes[i], &r))
                    continue;
                size_t rl = kl - r;
                const char *region = k + r;
                bool vram = (rl >= 4 && memcmp(region, "vram", 4) == 0) || (rl >= 5 && memcmp(region, "local", 5) == 0);
                if (vram && value_bytes(v, le, &x)) {
                    *acc[i] += x;
                    *flag[i] = true;
                }
                break;
            }
        }
    }
    if (has_resident || has_memory || has_total) {
        out->has_vram = true;
        out->vram_bytes = has_resident ? resident : has_memory ? memory : total;
    }
    return has_driver && out->has_client_id ? 0 : -1;
}

/* ---- a process's clients ------------------------------------------------------------------------ */

typedef struct pid_walk {
    rt_drm *d;
    int dfd; /* PID/fd */
    int64_t pid;
    void (*fn)(void *user, const rt_drm_client *c);
    void *user;
    long clients;
} pid_walk;

/* Walker callback over PID/fd (user: the pid_walk): hands each DRM client to its fn. */
static int fd_entry(void *user, const char *name, unsigned char d_type)
{
    (void)d_type;
    pid_walk *w = user;
    char target[64];
    ssize_t tl = readlinkat(w->dfd, name, target, sizeof target - 1);
    if (tl < 9 || memcmp(target, "/dev/dri/", 9) != 0)
        return 0; /* only GPU device nodes carry DRM usage statistics */
    char info[320];
    if (!rt_pathf(info, sizeof info, "%lld/fdinfo/%s", (long long)w->pid, name))
        return 0;
    ssize_t m = rt_read_at(w->d->roots->proc_fd, info, w->d->buf, sizeof w->d->buf);
    rt_drm_client c;
    if (m > 0 && rt_drm_fdinfo_parse(w->d->buf, (size_t)m, &c) == 0) {
        w->clients++;
        w->fn(w->user, &c);
    }
    return 0;
}

long rt_drm_pid_clients(rt_drm *d, int64_t pid, void (*fn)(void *user, const rt_drm_client *c), void *user)
{
    char path[64];
    if (!rt_pathf(path, sizeof path, "%lld/fd", (long long)pid))
        return -ENAMETOOLONG;
    pid_walk w = {d, -1, pid, fn, user, 0};
    w.dfd = openat(d->roots->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (w.dfd < 0)
        return -errno;
    long n = rt_dir_walk_fd(w.dfd, fd_entry, &w);
    close(w.dfd);
    return n < 0 ? n : w.clients;
}

/* ---- the tree's share ---------------------------------------------------------------------------- */

/* The card at PCI address pdev, or NULL. */
static drm_card *card_by_pdev(rt_drm *d, const char *pdev)
{
    for (size_t i = 0; i < d->ncard; i++)
        if (d->card[i].facts.host_id && strcmp(d->card[i].facts.host_id, pdev) == 0)
            return &d->card[i];
    return NULL;
}

/* Adds what client c did since it was last seen to its card's figures (user: the rt_drm). */
static void account(void *user, const rt_drm_client *c)
{
    rt_drm *d = user;
    drm_card *card = card_by_pdev(d, c->pdev);
    if (!card)
        return;
    card->present = true;
    drm_seen *s = NULL;
    for (size_t i = 0; i < d->nseen; i++)
        if (d->seen[i].client_id == c->client_id && strcmp(d->seen[i].pdev, c->pdev) == 0)
            s = &d->seen[i];
    if (s && s->gen == d->gen)
        return; /* the same client through another fd: counted once */
    if (c->has_vram) {
        card->vram += c->vram_bytes;
        if (d->walking_pid == d->main_pid && d->main_pid > 0)
            card->main_vram += c->vram_bytes;
    }
    if (s && d->mono > s->mono) {
        card->timed = true;
        double dt_ns = (d->mono - s->mono) * 1e9;
        for (size_t e = 0; e < c->nengines; e++) {
            const rt_drm_engine *now = &c->engines[e];
            const rt_drm_engine *was = NULL;
            for (size_t k = 0; k < s->nengines; k++)
                if (strcmp(s->engines[k].name, now->name) == 0)
                    was = &s->engines[k];
            if (!was)
                continue;
            double u = 0;
            if (now->has_ns && now->busy_ns >= was->busy_ns)
                u = (double)(now->busy_ns - was->busy_ns) / dt_ns / (double)now->capacity;
            else if (now->has_cycles && now->total_cycles > was->total_cycles && now->cycles >= was->cycles)
                u = (double)(now->cycles - was->cycles) / (double)(now->total_cycles - was->total_cycles);
            if (u > card->busy)
                card->busy = u;
        }
    }
    if (!s) {
        if (rt_grow(&d->seen, &d->seen_cap, d->nseen + 1, sizeof *d->seen) < 0)
            return;
        s = &d->seen[d->nseen++];
        rt_copy_str(s->pdev, sizeof s->pdev, c->pdev);
        s->client_id = c->client_id;
    }
    memcpy(s->engines, c->engines, sizeof s->engines);
    s->nengines = c->nengines;
    s->mono = d->mono;
    s->gen = d->gen;
}

void rt_drm_tree(rt_drm *d, const int64_t *pids, size_t npids, double mono)
{
    for (size_t i = 0; i < d->ncard; i++) {
        d->card[i].busy = 0;
        d->card[i].vram = d->card[i].main_vram = 0;
        d->card[i].present = d->card[i].timed = false;
    }
    if (d->ncard == 0)
        return;
    d->gen++;
    d->mono = mono;
    /* the root first: a client it shares with a child (an inherited fd) counts as the root's */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < npids; i++) {
            if ((pids[i] == d->main_pid) != (pass == 0))
                continue;
            d->walking_pid = pids[i];
            rt_drm_pid_clients(d, pids[i], account, d);
        }
    d->walking_pid = 0;
    size_t k = 0;
    for (size_t i = 0; i < d->nseen; i++) /* clients gone: forget them */
        if (d->seen[i].gen == d->gen)
            d->seen[k++] = d->seen[i];
    d->nseen = k;
}

void rt_drm_tree_card(const rt_drm *d, size_t i, double *util_pct, uint64_t *vram_bytes, bool *present)
{
    const drm_card *c = &d->card[i];
    *util_pct = c->busy * 100.0 > 100 ? 100 : c->busy * 100.0;
    *vram_bytes = c->vram;
    *present = c->present;
}

bool rt_drm_tree_card_timed(const rt_drm *d, size_t i)
{
    return d->card[i].timed;
}

void rt_drm_set_main(rt_drm *d, int64_t pid)
{
    d->main_pid = pid;
}

uint64_t rt_drm_tree_card_main(const rt_drm *d, size_t i)
{
    return d->card[i].main_vram;
}
