/* mountinfo.c - pure parser for /proc/PID/mountinfo: one callback per mount with the device
 * number, root, mount point, filesystem type and source, octal escapes undone. */
#include <stdlib.h>
#include <string.h>

#include "sources.h"

bool rt_mountinfo_unescape(char *dst, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
            s[i + 3] >= '0' && s[i + 3] <= '7') {
            c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        }
        if (o + 1 >= cap)
            return false;
        dst[o++] = c;
    }
    dst[o] = '\0';
    return true;
}

/* A field unescaped into dst; dst, or NULL when it does not fit. */
static const char *unescape(const char *s, size_t n, char *dst, size_t cap)
{
    return rt_mountinfo_unescape(dst, cap, s, n) ? dst : NULL;
}

size_t rt_mountinfo_parse(const char *buf, size_t len, rt_mountinfo_cb cb, void *user)
{
    const char *p = buf, *end = buf + len, *line, *le;
    size_t bad = 0;
    char root[4096], mnt[4096], fstype[256], source[4096];
    while (rt_next_line(&p, end, &line, &le)) {
        if (le == line)
            continue;
        const char *q = line, *tok[6];
        size_t tlen[6];
        int n = rt_next_tokens(&q, le, tok, tlen, 6);
        /* optional fields up to the "-" separator */
        const char *t;
        size_t tl;
        bool sep = false;
        while (rt_next_token(&q, le, &t, &tl))
            if (tl == 1 && t[0] == '-') {
                sep = true;
                break;
            }
        const char *ft = NULL, *src = NULL;
        size_t ftl = 0, srcl = 0;
        if (sep && rt_next_token(&q, le, &ft, &ftl))
            rt_next_token(&q, le, &src, &srcl);
        if (n < 6 || !sep || !ft) {
            bad++;
            continue;
        }
        /* major:minor */
        const char *d = tok[2], *dend = tok[2] + tlen[2];
        uint64_t major, minor;
        if (!rt_parse_u64(&d, dend, &major) || d >= dend || *d != ':' || (d++, !rt_parse_u64(&d, dend, &minor)) ||
            d != dend || major > UINT32_MAX || minor > UINT32_MAX) {
            bad++;
            continue;
        }
        rt_mountinfo_entry e;
        e.major = (unsigned)major;
        e.minor = (unsigned)minor;
        e.root = unescape(tok[3], tlen[3], root, sizeof root);
        e.mount_point = unescape(tok[4], tlen[4], mnt, sizeof mnt);
        e.fstype = unescape(ft, ftl, fstype, sizeof fstype);
        e.source = src ? unescape(src, srcl, source, sizeof source) : "";
        if (!e.root || !e.mount_point || !e.fstype || !e.source) {
            bad++;
            continue;
        }
        cb(user, &e);
    }
    return bad;
}
