/* since.c - a point in time as `history --since WHEN` takes it: an ISO 8601 date or date and
 * time (2026-11-29, 2026-11-29T07:30, 2026-11-29 07:30:15.5, with Z or an offset +01:00,
 * +0100, +01; without a zone it is UTC, as `history` shows its times), or an age back from now:
 * a number and a unit (90s, 30m, 12h, 7d, 2w; a fraction allowed: 1.5h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* Reads exactly n digits at *p into *v, moving *p past them. Returns 0, or -1. */
static int digits(const char **p, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (!isdigit((unsigned char)**p))
            return -1;
        *v = *v * 10 + (**p - '0');
    }
    return 0;
}

/* An age: a positive number and one of s, m, h, d, w. Returns 0 with its seconds in *secs, or
 * -1 when s is no such age. */
static int parse_age(const char *s, double *secs)
{
    if (!isdigit((unsigned char)s[0]) && s[0] != '.')
        return -1;
    char *end = NULL;
    errno = 0;
    double n = strtod(s, &end);
    if (errno || end == s || !end[0] || end[1] || !isfinite(n) || n <= 0)
        return -1;
    static const char units[] = "smhdw";
    static const double mult[] = {1, 60, 3600, 86400, 604800};
    const char *u = strchr(units, end[0]);
    if (!u)
        return -1;
    *secs = n * mult[u - units];
    return *secs <= 1e11 ? 0 : -1; /* past the calendar's reach: no age */
}

/* A zone at p: "" (UTC), Z, +HH, +HHMM, +HH:MM or the same with '-'. Returns 0 with its offset
 * east of UTC in *off seconds, or -1. */
static int parse_zone(const char *p, long *off)
{
    *off = 0;
    if (!*p || ((p[0] == 'Z' || p[0] == 'z') && !p[1]))
        return 0;
    if (p[0] != '+' && p[0] != '-')
        return -1;
    int sign = p[0] == '-' ? -1 : 1, hh, mm = 0;
    p++;
    if (digits(&p, 2, &hh) < 0)
        return -1;
    if (*p == ':')
        p++;
    if (*p && digits(&p, 2, &mm) < 0)
        return -1;
    if (*p || hh > 23 || mm > 59)
        return -1;
    *off = sign * (hh * 3600L + mm * 60L);
    return 0;
}

/* An ISO 8601 date, or date and time. Returns 0 with its Unix time in *t, or -1. */
static int parse_iso(const char *s, double *t)
{
    const char *p = s;
    int y, mo, d, h = 0, mi = 0, sec = 0;
    double frac = 0;
    if (digits(&p, 4, &y) < 0 || *p++ != '-' || digits(&p, 2, &mo) < 0 || *p++ != '-' || digits(&p, 2, &d) < 0)
        return -1;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (digits(&p, 2, &h) < 0 || *p++ != ':' || digits(&p, 2, &mi) < 0)
            return -1;
        if (*p == ':') {
            p++;
            if (digits(&p, 2, &sec) < 0)
                return -1;
            if (*p == '.' || *p == ',') {
                double scale = 0.1;
                if (!isdigit((unsigned char)p[1]))
                    return -1;
                for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
                    frac += (*p - '0') * scale;
            }
        }
    }
    long off;
    if (parse_zone(p, &off) < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
        return -1;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = sec};
    time_t tt = timegm(&tm);
    if (tm.tm_mday != d || tm.tm_mon != mo - 1) /* normalized away: no such day (2026-02-30) */
        return -1;
    *t = (double)tt - (double)off + frac;
    return 0;
}

int cli_since_parse(const char *s, double now, double *out)
{
    double age;
    if (!s || !*s)
        return -1;
    if (parse_age(s, &age) == 0) {
        *out = now - age;
        return 0;
    }
    return parse_iso(s, out);
}
