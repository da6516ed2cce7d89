/* state.c - a run's phases as the pipeline keeps them between samples: interned names (at most
 * RT_PHASE_MAX_NAMES, looked up through a small open-addressing table), the open instances
 * (matched by name: a stop closes the most recent open instance of its name), the marks taken
 * since the last sample (copies, their names pointing at the interned ones) and the run's counts
 * of marks taken and refused. Memory is taken at the first mark and grows to fixed caps; a run
 * without marks costs nothing. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "phase.h"

#define HASH_SLOTS 2048 /* a power of two, twice RT_PHASE_MAX_NAMES */

struct rt_phase_state {
    char **names; /* interned, NUL-terminated; the pointers never move */
    size_t n_names, cap_names;
    uint32_t *slots; /* HASH_SLOTS: 0 empty, else a name's index + 1 */
    uint32_t open[RT_PHASE_MAX_OPEN]; /* the open instances' names, in the order they opened */
    const char *open_names[RT_PHASE_MAX_OPEN];
    size_t n_open;
    rt_phase_mark *pending; /* the marks the next sample carries */
    const rt_phase_mark **pending_ptrs;
    size_t n_pending, cap_pending;
    rt_phase_counts counts;
    rt_phases view;
    bool any; /* a mark came (taken or refused) */
};

bool rt_phase_name_ok(const char *s, size_t n)
{
    if (!s || n == 0 || n > RT_PHASE_NAME_MAX)
        return false;
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        unsigned c = *p;
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f)
                return false;
            p++;
            continue;
        }
        size_t len;
        unsigned cp, min;
        if ((c & 0xe0) == 0xc0) {
            len = 2, cp = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
            len = 3, cp = c & 0x0f, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if ((size_t)(end - p) < len)
            return false;
        for (size_t i = 1; i < len; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp < 0xa0))
            return false; /* overlong, out of range, a surrogate, a C1 control character */
        p += len;
    }
    return true;
}

rt_phase_state *rt_phase_state_new(void)
{
    return calloc(1, sizeof(rt_phase_state));
}

uint32_t rt_phase_name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The name's index, interning it when new. -1: no room (too many names, or out of memory). */
static long intern(rt_phase_state *st, const char *name)
{
    if (!st->slots && !(st->slots = calloc(HASH_SLOTS, sizeof *st->slots)))
        return -1;
    uint32_t i = rt_phase_name_hash(name) & (HASH_SLOTS - 1);
    for (; st->slots[i]; i = (i + 1) & (HASH_SLOTS - 1))
        if (strcmp(st->names[st->slots[i] - 1], name) == 0)
            return (long)st->slots[i] - 1;
    if (st->n_names >= RT_PHASE_MAX_NAMES)
        return -1;
    if (st->n_names == st->cap_names) {
        size_t cap = st->cap_names ? st->cap_names * 2 : 16;
        char **names = realloc(st->names, cap * sizeof *names);
        if (!names)
            return -1;
        st->names = names;
        st->cap_names = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return -1;
    st->names[st->n_names] = copy;
    st->slots[i] = (uint32_t)++st->n_names;
    return (long)st->n_names - 1;
}

/* The index of a name already interned, or -1. */
static long lookup(const rt_phase_state *st, const char *name)
{
    if (!st->slots)
        return -1;
    for (uint32_t i = rt_phase_name_hash(name) & (HASH_SLOTS - 1); st->slots[i]; i = (i + 1) & (HASH_SLOTS - 1))
        if (strcmp(st->names[st->slots[i] - 1], name) == 0)
            return (long)st->slots[i] - 1;
    return -1;
}

/* Room for one more pending mark; false when RT_PHASE_MAX_PENDING wait or memory ran out. */
static bool pending_room(rt_phase_state *st)
{
    if (st->n_pending < st->cap_pending)
        return true;
    if (st->cap_pending >= RT_PHASE_MAX_PENDING)
        return false;
    size_t cap = st->cap_pending ? st->cap_pending * 4 : 64;
    if (cap > RT_PHASE_MAX_PENDING)
        cap = RT_PHASE_MAX_PENDING;
    rt_phase_mark *m = realloc(st->pending, cap * sizeof *m);
    if (!m)
        return false;
    st->pending = m;
    const rt_phase_mark **pp = realloc(st->pending_ptrs, cap * sizeof *pp);
    if (!pp)
        return false;
    st->pending_ptrs = pp;
    st->cap_pending = cap;
    return true;
}

rt_error rt_phase_state_mark(rt_phase_state *st, const rt_phase_mark *caller)
{
    if (!st || !caller)
        return RT_ERR_INVALID;
    st->any = true;
    rt_phase_mark m = RT_PHASE_MARK_INIT;
    if (rt_struct_copy(&m, sizeof m, caller) < 0 || !m.name ||
        !rt_phase_name_ok(m.name, strnlen(m.name, RT_PHASE_NAME_MAX + 1)) ||
        (m.kind != RT_PHASE_START && m.kind != RT_PHASE_STOP)) {
        st->counts.malformed++;
        return RT_ERR_INVALID;
    }
    m.struct_size = sizeof m;
    if (!pending_room(st)) {
        st->counts.dropped++;
        return RT_ERR_NOMEM;
    }
    long idx;
    if (m.kind == RT_PHASE_START) {
        if (st->n_open >= RT_PHASE_MAX_OPEN) {
            st->counts.too_deep++;
            return RT_ERR_NOMEM;
        }
        if ((idx = intern(st, m.name)) < 0) {
            st->counts.too_many_names++;
            return RT_ERR_NOMEM;
        }
        st->open[st->n_open] = (uint32_t)idx;
        st->open_names[st->n_open++] = st->names[idx];
    } else {
        size_t i = st->n_open;
        if ((idx = lookup(st, m.name)) >= 0)
            while (i > 0 && st->open[i - 1] != (uint32_t)idx)
                i--;
        if (idx < 0 || i == 0) {
            st->counts.unknown_stop++;
            return RT_ERR_INVALID;
        }
        memmove(&st->open[i - 1], &st->open[i], (st->n_open - i) * sizeof st->open[0]);
        memmove(&st->open_names[i - 1], &st->open_names[i], (st->n_open - i) * sizeof st->open_names[0]);
        st->n_open--;
    }
    m.name = st->names[idx];
    st->pending[st->n_pending++] = m;
    st->counts.accepted++;
    return RT_OK;
}

void rt_phase_state_refused(rt_phase_state *st, int why, uint64_t n)
{
    if (!st || n == 0)
        return;
    st->any = true;
    rt_phase_counts *c = &st->counts;
    uint64_t *count = why == RT_PHASE_REFUSED_TOO_LONG     ? &c->too_long
                      : why == RT_PHASE_REFUSED_FLOOD      ? &c->flood
                      : why == RT_PHASE_REFUSED_DROPPED    ? &c->dropped
                      : why == RT_PHASE_REFUSED_CONNECTION ? &c->refused
                                                           : &c->malformed; /* RT_PHASE_REFUSED_MALFORMED, and any other */
    *count += n;
}

const rt_phases *rt_phase_state_view(rt_phase_state *st)
{
    if (!st || !st->any)
        return NULL;
    for (size_t i = 0; i < st->n_pending; i++) /* pending may have moved since the last view */
        st->pending_ptrs[i] = &st->pending[i];
    st->view.marks = (const rt_phase_mark *const *)st->pending_ptrs;
    st->view.mark_count = st->n_pending;
    st->view.open = st->open_names;
    st->view.open_count = st->n_open;
    st->view.counts = &st->counts;
    return &st->view;
}

void rt_phase_state_carried(rt_phase_state *st)
{
    if (st)
        st->n_pending = 0;
}

const rt_phase_counts *rt_phase_state_counts(const rt_phase_state *st)
{
    return st ? &st->counts : NULL;
}

void rt_phase_state_end(rt_phase_state *st)
{
    if (st)
        st->counts.unterminated = st->n_open;
}

void rt_phase_state_free(rt_phase_state *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->n_names; i++)
        free(st->names[i]);
    rt_free_all(st->names, st->slots, st->pending, st->pending_ptrs);
    free(st);
}
