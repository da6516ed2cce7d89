/* energy_words.c - a run's energy by part: the part of a domain, and the parts in words
 * (rt_summary_energy_words: "GPU 6.8 kJ measured by NVML, CPU 0.4 kJ estimated", and the nouns
 * and methods it is made of: energy_words.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "energy_words.h"
#include "text_out.h"

const char *rt_ew_part_kind(const rt_energy_domain *d)
{
    static const struct {
        const char *kind, *part;
    } k[] = {{"package", "cpu"}, {"cpu", "cpu"},   {"dram", "dram"}, {"gpu", "gpu"},
             {"core", NULL},     {"uncore", NULL}, {"psys", NULL},   {"platform", NULL}};
    for (size_t i = 0; d->kind && i < RT_ARRAY_LEN(k); i++)
        if (strcmp(d->kind, k[i].kind) == 0)
            return k[i].part;
    return d->in_total ? (d->kind ? d->kind : "other") : NULL;
}

void rt_energy_parts_copy_into(rt_energy_parts_copy *c, rt_summary *s)
{
    size_t n = s->energy_parts ? s->energy_part_count : 0;
    n = n < RT_ENERGY_PARTS_MAX ? n : RT_ENERGY_PARTS_MAX;
    for (size_t i = 0; i < n; i++) {
        c->part[i] = *s->energy_parts[i];
        c->part[i].kind = rt_copy_cut(c->kind[i], sizeof c->kind[i], c->part[i].kind);
        c->part[i].source = rt_copy_cut(c->source[i], sizeof c->source[i], c->part[i].source);
        c->list[i] = &c->part[i]; /* the method: a static string */
    }
    s->energy_parts = n ? c->list : NULL;
    s->energy_part_count = n;
    s->energy_meter_source = rt_copy_cut(c->meter, sizeof c->meter, s->energy_meter_source);
}

const char *rt_ew_noun(const char *kind, double devices, char *b, size_t cap)
{
    if (kind && strcmp(kind, "gpu") == 0 && devices >= 2)
        snprintf(b, cap, "%.0f GPUs", devices);
    else
        snprintf(b, cap, "%s",
                 !kind                       ? "other"
                 : strcmp(kind, "cpu") == 0  ? "CPU"
                 : strcmp(kind, "dram") == 0 ? "memory"
                 : strcmp(kind, "gpu") == 0  ? "GPU"
                                             : kind);
    return b;
}

const char *rt_ew_how(const char *source, const char *method, char *b, size_t cap)
{
    static const struct {
        const char *source, *words;
    } names[] = {{"nvml", "NVML"}, {"intel-rapl", "RAPL"}, {"amd-rapl", "RAPL"}, {"perf", "perf"}, {"hwmon", "hwmon"}};
    const char *m = method ? method : "unknown";
    if (!source || strcmp(source, "model") == 0) {
        snprintf(b, cap, "%s", m);
        return b;
    }
    const char *w = source;
    for (size_t i = 0; i < RT_ARRAY_LEN(names); i++)
        if (strcmp(source, names[i].source) == 0)
            w = names[i].words;
    snprintf(b, cap, "%s by %s", m, w);
    return b;
}

rt_error rt_summary_energy_words(const rt_summary *s, int job, char *buf, size_t cap, size_t *len)
{
    if (cap)
        buf[0] = '\0';
    if (len)
        *len = 0;
    if (!s)
        return RT_ERR_INVALID;
    size_t n = 0;
    for (size_t i = 0; i < s->energy_part_count && s->energy_parts; i++) {
        const rt_summary_energy_part *p = s->energy_parts[i];
        double j = p ? (job ? p->process_energy_joules : p->energy_joules) : NAN;
        if (!isfinite(j) || !(j > 0)) /* a part of none of the energy (a GPU the job never used) */
            continue;
        char noun[48], fig[32], how[96];
        int k = snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0, "%s%s %s %s", n ? ", " : "",
                         rt_ew_noun(p->kind, job ? 1 : p->devices, noun, sizeof noun), rt_tx_joules(j, fig, sizeof fig),
                         rt_ew_how(p->source, p->method, how, sizeof how));
        if (k > 0)
            n += (size_t)k;
    }
    if (cap && n >= cap)
        buf[cap - 1] = '\0';
    if (len)
        *len = n;
    return RT_OK;
}
