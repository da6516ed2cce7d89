/* cpu_power.c - the CPU power model of the energy estimate (cpu_power.h): the model name of
 * /proc/cpuinfo looked up in the shipped TDP table (cpu_tdp.h), a TDP the user gives, or the
 * per-core rule; the model's power for a number of busy logical cores.
 *
 * The model. A package's thermal design power is shared by its logical cores: one fully busy
 * logical core draws busy_watts = TDP / threads per package; an idle one draws idle_watts, a
 * fixed 30% of it. Why 30%: an idle server package does not draw nothing (its uncore: memory
 * controllers, I/O, the interconnect, stays awake), and the package power that Xeon Scalable
 * and EPYC parts report through RAPL at idle is commonly a fifth to two fifths of their TDP;
 * 30% is the middle of that range (desktop and laptop parts idle far lower: there the model
 * overstates the idle part).
 *
 * The per-core rule, for a model not in the table (a VM's "AMD EPYC", an unlisted part) and no
 * TDP given: 3.5 W per busy logical core, the median TDP per thread of the table's server
 * parts (3.54 W; 3.65 W over every row; the middle half of the table lies between 2.8 and
 * 4.3 W), idle 30% of it. One figure for every unknown CPU is a guess, said as one.
 *
 * The expected error, against what a RAPL package counter would read (codecarbon's TDP x load
 * estimate is documented at -60% to +190% against RAPL; ours differs by counting logical cores
 * and an idle floor, not by being precise):
 *  - "table" and "given": -40% to +50%. TDP is the sustained all-core power a part is built
 *    for, not a measurement: a loaded package draws roughly 0.8 to 1.1 times it (desktop parts
 *    more, for a while, under their boost limits); power is not linear in busy cores (a few
 *    busy cores turbo higher and wake the shared uncore: the model reads low at light load;
 *    two busy threads of one core draw less than twice one: it reads high with SMT at full
 *    load); a VM's vCPUs that are whole cores (SMT off) draw about twice the model's figure.
 *  - "per-core": -55% to +150%. On top of the above, the table's TDP per thread runs from
 *    0.9 W (low-power laptop parts) and 1.9 W (96-core EPYC) to 5.6 W (fast Xeons): 3.5 W may
 *    be half or nearly twice the CPU's own figure. */
#define _GNU_SOURCE
#include "cpu_power.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cpu_tdp.h"

#define IDLE_FRACTION 0.30   /* idle_watts / busy_watts (see above) */
#define PER_CORE_BUSY_W 3.5  /* the per-core rule's busy logical core (see above) */

static bool alnum(char c)
{
    return isalnum((unsigned char)c) != 0;
}

/* Whether pat occurs in s as whole tokens, case-insensitively. */
static bool token_match(const char *s, const char *pat)
{
    size_t n = strlen(pat);
    if (!n)
        return false;
    for (const char *p = s; (p = strcasestr(p, pat)) != NULL; p++) {
        bool left = p == s || !alnum(p[-1]) || !alnum(pat[0]);
        bool right = !alnum(p[n]) || !alnum(pat[n - 1]);
        if (left && right)
            return true;
    }
    return false;
}

const rt_cpu_tdp_row *rt_cpu_tdp_find(const char *model)
{
    if (!model)
        return NULL;
    /* runs of white space as one space, as the table writes its patterns */
    char norm[256];
    size_t k = 0;
    for (const char *p = model; *p && k + 1 < sizeof norm; p++) {
        bool space = isspace((unsigned char)*p) != 0;
        if (space && (k == 0 || norm[k - 1] == ' '))
            continue;
        norm[k++] = space ? ' ' : *p;
    }
    norm[k] = '\0';
    const rt_cpu_tdp_row *best = NULL;
    for (size_t i = 0; i < rt_cpu_tdp_count; i++)
        if (token_match(norm, rt_cpu_tdp[i].pattern) &&
            (!best || strlen(rt_cpu_tdp[i].pattern) > strlen(best->pattern)))
            best = &rt_cpu_tdp[i];
    return best;
}

/* The value of cpuinfo's first line "key : N" as a positive integer; 0 when none. */
static long cpuinfo_number(const char *buf, size_t len, const char *key)
{
    const char *p = buf, *end = buf + len, *line, *le;
    size_t kl = strlen(key);
    while (rt_next_line(&p, end, &line, &le)) {
        const char *colon = memchr(line, ':', (size_t)(le - line));
        char k[64], v[32];
        if (!colon || rt_copy_trim(k, sizeof k, line, (size_t)(colon - line)) != kl || memcmp(k, key, kl) != 0)
            continue;
        rt_copy_trim(v, sizeof v, colon + 1, (size_t)(le - colon - 1));
        char *e;
        long n = strtol(v, &e, 10);
        return e != v && *e == '\0' && n > 0 ? n : 0;
    }
    return 0;
}

/* How many "processor" lines cpuinfo has (x86 and arm both write one per logical CPU). */
static long cpuinfo_processors(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len, *line, *le;
    long n = 0;
    while (rt_next_line(&p, end, &line, &le)) {
        const char *colon = memchr(line, ':', (size_t)(le - line));
        char k[64];
        if (colon && rt_copy_trim(k, sizeof k, line, (size_t)(colon - line)) == 9 && memcmp(k, "processor", 9) == 0)
            n++;
    }
    return n;
}

/* The model's name in words: at most 60 bytes of it, "unknown CPU" when empty. */
static const char *model_words(const rt_cpu_power *m, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.60s", m->model[0] ? m->model : "unknown CPU");
    return buf;
}

/* Fills out's figures from its rule and tdp_watts for threads per package: busy_watts the TDP per
 * thread, idle_watts IDLE_FRACTION of it, the error band and the words. */
static void set_tdp(rt_cpu_power *out, const char *name, int threads)
{
    out->threads_per_package = threads;
    out->busy_watts = out->tdp_watts / threads;
    out->idle_watts = out->busy_watts * IDLE_FRACTION;
    out->error_low_pct = -40;
    out->error_high_pct = 50;
    snprintf(out->words, sizeof out->words,
             "%s: TDP %.4g W %s, %d threads; %.3g W per busy logical core, %.3g W idle; expect %+.0f%% to %+.0f%%",
             name, out->tdp_watts, strcmp(out->rule, "given") == 0 ? "given" : "from the table", threads,
             out->busy_watts, out->idle_watts, out->error_low_pct, out->error_high_pct);
}

int rt_cpu_power_model(const rt_roots *r, double tdp_given, rt_cpu_power *out)
{
    memset(out, 0, sizeof *out);
    rt_buf b;
    rt_buf_init(&b, 8u << 20);
    int fd = r ? rt_open_at(r->proc_fd, "cpuinfo") : -1;
    long siblings = 0, processors = 0;
    if (fd >= 0 && rt_read_fd_grow(fd, &b, RT_READ_TO_EOF) > 0) {
        rt_cpuinfo_model_parse(b.data, b.len, out->model, sizeof out->model);
        siblings = cpuinfo_number(b.data, b.len, "siblings");
        processors = cpuinfo_processors(b.data, b.len);
    }
    if (fd >= 0)
        close(fd);
    rt_buf_free(&b);

    const rt_cpu_tdp_row *row = out->model[0] ? rt_cpu_tdp_find(out->model) : NULL;
    char name[64];
    model_words(out, name, sizeof name);
    int threads = row ? (int)row->threads : (int)(siblings ? siblings : processors);
    if (isfinite(tdp_given) && tdp_given > 0 && threads > 0) {
        out->rule = "given";
        out->tdp_watts = tdp_given;
    } else if (row && !(isfinite(tdp_given) && tdp_given > 0)) {
        out->rule = "table";
        out->tdp_watts = row->tdp_watts;
    } else {
        /* no TDP, or a TDP given without knowing how many threads share it */
        out->rule = "per-core";
    }
    if (strcmp(out->rule, "per-core") == 0) {
        out->tdp_watts = NAN;
        out->threads_per_package = 0;
        out->busy_watts = PER_CORE_BUSY_W;
        out->idle_watts = PER_CORE_BUSY_W * IDLE_FRACTION;
        out->error_low_pct = -55;
        out->error_high_pct = 150;
        snprintf(out->words, sizeof out->words,
                 "%s: %s; %.3g W per busy logical core (the TDP table's median per thread), %.3g W idle; "
                 "expect %+.0f%% to %+.0f%%",
                 name, isfinite(tdp_given) && tdp_given > 0 ? "threads per package unknown" : "not in the TDP table",
                 out->busy_watts, out->idle_watts, out->error_low_pct, out->error_high_pct);
        return 0;
    }
    set_tdp(out, name, threads);
    return 0;
}

/* The one row whose pattern's last word is word (case-insensitive); NULL for none or several. */
static const rt_cpu_tdp_row *row_by_last_word(const char *word)
{
    const rt_cpu_tdp_row *found = NULL;
    for (size_t i = 0; i < rt_cpu_tdp_count; i++) {
        const char *p = rt_cpu_tdp[i].pattern, *sp = strrchr(p, ' ');
        if (strcasecmp(sp ? sp + 1 : p, word) != 0)
            continue;
        if (found)
            return NULL;
        found = &rt_cpu_tdp[i];
    }
    return found;
}

int rt_cpu_power_of_part(const char *family, const char *model, rt_cpu_power *out)
{
    memset(out, 0, sizeof *out);
    family = family ? family : "";
    model = model ? model : "";
    snprintf(out->model, sizeof out->model, "%s%s%s", family, *family && *model ? " " : "", model);
    const rt_cpu_tdp_row *row = *model ? rt_cpu_tdp_find(model) : NULL;
    if (!row && out->model[0])
        row = rt_cpu_tdp_find(out->model);
    if (!row && strpbrk(model, "0123456789") && !strchr(model, ' '))
        row = row_by_last_word(model);
    if (!row || !(row->threads >= 1) || !(row->tdp_watts > 0)) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    char name[64];
    out->rule = "table";
    out->tdp_watts = row->tdp_watts;
    set_tdp(out, model_words(out, name, sizeof name), (int)row->threads);
    return 0;
}

double rt_cpu_power_watts(const rt_cpu_power *m, double busy_cores, double cores)
{
    if (!m || isnan(busy_cores) || isnan(cores))
        return NAN;
    if (busy_cores < 0)
        busy_cores = 0;
    if (busy_cores > cores)
        busy_cores = cores;
    return cores * m->idle_watts + busy_cores * (m->busy_watts - m->idle_watts);
}
