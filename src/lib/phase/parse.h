/* parse.h - one line of the phase protocol (docs/contracts.md §18): `start NAME` or `stop NAME`,
 * then optional TAB-separated key=value fields (`t=MONO_NS`, the sender's CLOCK_MONOTONIC in
 * nanoseconds; other keys are ignored), ended by LF or CRLF. A pure parser over the bytes of one
 * line (not NUL-terminated). Internal. */
#ifndef RT_PHASE_PARSE_H
#define RT_PHASE_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RT_PHASE_LINE_MAX 512 /* bytes of a line, its LF included */

typedef struct rt_phase_line {
    int kind;          /* RT_PHASE_START or RT_PHASE_STOP */
    const char *name;  /* into the caller's buffer: name_len bytes, not NUL-terminated */
    size_t name_len;
    bool has_t;        /* a well-formed t= came (the last one counts) */
    uint64_t t_ns;
} rt_phase_line;

/* Parses buf[0..len) as one line: its LF (and a CR before it) may end it; a line of more than
 * RT_PHASE_LINE_MAX bytes (the LF counted) is too long. Returns 0 and *out; else the refusal
 * (rt_phase_refusal): RT_PHASE_REFUSED_TOO_LONG, or RT_PHASE_REFUSED_MALFORMED (a verb other than
 * `start`/`stop` followed by one space, a name that rt_phase_name_ok refuses, a LF inside). A t=
 * that is not a decimal number is ignored as an unknown field would be. */
int rt_phase_parse_line(const char *buf, size_t len, rt_phase_line *out);

#endif
