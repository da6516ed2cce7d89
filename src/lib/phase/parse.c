/* parse.c - one line of the phase protocol (`start NAME` / `stop NAME`, optional TAB-separated
 * key=value fields, LF or CRLF): the verb, the name (checked by rt_phase_name_ok, the one rule
 * for names) and the sender's t=. A pure function over the line's bytes. */
#include <string.h>

#include "resource_tracker.h"
#include "../core/core.h"
#include "parse.h"
#include "phase.h"

int rt_phase_parse_line(const char *buf, size_t len, rt_phase_line *out)
{
    if (!buf || !out)
        return RT_PHASE_REFUSED_MALFORMED;
    memset(out, 0, sizeof *out);
    if (len > RT_PHASE_LINE_MAX)
        return RT_PHASE_REFUSED_TOO_LONG;
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    if (memchr(buf, '\n', len))
        return RT_PHASE_REFUSED_MALFORMED; /* more than one line */
    size_t vlen;
    if (len >= 6 && memcmp(buf, "start ", 6) == 0) {
        out->kind = RT_PHASE_START;
        vlen = 6;
    } else if (len >= 5 && memcmp(buf, "stop ", 5) == 0) {
        out->kind = RT_PHASE_STOP;
        vlen = 5;
    } else {
        return RT_PHASE_REFUSED_MALFORMED;
    }
    const char *name = buf + vlen, *end = buf + len;
    const char *tab = memchr(name, '\t', (size_t)(end - name));
    size_t nlen = (size_t)((tab ? tab : end) - name);
    if (!rt_phase_name_ok(name, nlen)) {
        out->kind = 0;
        return RT_PHASE_REFUSED_MALFORMED;
    }
    out->name = name;
    out->name_len = nlen;
    for (const char *f = tab; f && f < end;) {
        f++; /* past the TAB */
        const char *next = memchr(f, '\t', (size_t)(end - f));
        size_t flen = (size_t)((next ? next : end) - f);
        uint64_t v; /* t=: nanoseconds, 1 to 20 digits */
        if (flen > 2 && flen - 2 <= 20 && f[0] == 't' && f[1] == '=' && rt_parse_u64_all(f + 2, flen - 2, &v)) {
            out->has_t = true;
            out->t_ns = v;
        }
        f = next;
    }
    return 0;
}
