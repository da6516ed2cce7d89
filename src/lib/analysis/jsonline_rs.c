/* jsonline_rs.c - the Rust resource-tracker's JSON line read back (`--format json-rs`,
 * docs/contracts.md §2 "The Rust tool's line"): what our line's scan (jsonline.c) does not take
 * from it, its interval (actual_interval_ms) and the tracked tree's figures under "cpu"
 * (process_*) with "tracked_pid", each put back into our slots through the Rust view's table
 * (core/schema_rs.c), its unit converted back. The machine's figures share our names and are
 * read by the scan itself. */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>

#include "../core/core.h"
#include "../core/jsonscan.h"
#include "../core/schema.h"
#include "jsonline.h"

/* Whether the raw key k[0..n) is name. */
static bool key_is(const char *k, size_t n, const char *name)
{
    return strlen(name) == n && memcmp(k, name, n) == 0;
}

/* A number, or NaN for null; false when it is neither. */
static bool num_or_null(rt_js *j, double *out)
{
    rt_js_type t = rt_js_peek(j);
    if (t == RT_JS_NULL) {
        *out = NAN;
        return rt_js_skip(j);
    }
    return t == RT_JS_NUMBER && rt_js_number(j, out);
}

/* The "cpu" object's members that show the tree's figures (rt_rs_cpu's members of our
 * rt_process), by their index in rt_rs_cpu, into v. */
static bool rs_cpu(rt_js *j, double v[])
{
    if (rt_js_peek(j) != RT_JS_OBJECT)
        return rt_js_skip(j);
    if (!rt_js_open(j, '{'))
        return false;
    bool first = true;
    const char *k;
    size_t n;
    int m;
    while ((m = rt_js_member(j, &first, &k, &n)) == 1) {
        size_t i = 0;
        while (i < rt_rs_cpu.n && !(rt_rs_cpu.f[i].st == &rt_schema_process && key_is(k, n, rt_rs_cpu.f[i].name)))
            i++;
        if (i == rt_rs_cpu.n ? !rt_js_skip(j) : !num_or_null(j, &v[i]))
            return false;
    }
    return m == 0;
}

/* The figure of the Rust view's member f (its value v) back in our unit. */
static double rs_back(const rt_rs_field *f, double v)
{
    switch (f->conv) {
    case RS_PER_100: return v * 100.0;
    case RS_TO_MIB: return v * 1048576.0;
    default: return v;
    }
}

bool rt_jline_rs(const char *line, size_t len, locale_t c_locale, rt_jline *jl)
{
    rt_js j = {.p = line, .end = line + len, .c_locale = c_locale};
    double cpu[RT_SCHEMA_MAX_FIELDS], pid = NAN, ms = NAN;
    rt_jline_nan(cpu, RT_ARRAY_LEN(cpu));
    bool rust = false, first = true;
    const char *k;
    size_t n;
    int m;
    if (rt_js_peek(&j) != RT_JS_OBJECT || !rt_js_open(&j, '{'))
        return false;
    while ((m = rt_js_member(&j, &first, &k, &n)) == 1) {
        bool ok;
        if (key_is(k, n, "tracked_pid")) {
            rust = true;
            ok = num_or_null(&j, &pid);
        } else if (key_is(k, n, "actual_interval_ms")) {
            ok = num_or_null(&j, &ms);
        } else if (key_is(k, n, "cpu")) {
            ok = rs_cpu(&j, cpu);
        } else {
            ok = rt_js_skip(&j);
        }
        if (!ok)
            return false;
    }
    if (m != 0 || !rust)
        return false;
    if (ms >= 0)
        RT_JL_TOP(jl, interval_secs) = ms / 1000.0;
    if (isnan(pid))
        return true; /* the whole machine */
    rt_jline_process_reset(jl, true);
    RT_JL_PROC(jl, pid) = pid;
    RT_JL_PROC(jl, cores_used) = RT_JL_CPU(jl, process_cores_used);
    RT_JL_PROC(jl, child_count) = RT_JL_CPU(jl, process_child_count);
    for (size_t i = 0; i < rt_rs_cpu.n && i < RT_ARRAY_LEN(cpu); i++) {
        const rt_rs_field *f = &rt_rs_cpu.f[i];
        if (f->st == &rt_schema_process)
            jl->proc[f->off / 4] = rs_back(f, cpu[i]);
    }
    return true;
}
