/* db_url.c - a postgresql:// URL's password, found and taken out (resource_tracker/db.h:
 * rt_db_redact, rt_db_url_password): what a message, a kept row's file or a log line says of a
 * history is the URL without it, and the tool overwrites it in its own argv. */
#include <stdio.h>
#include <string.h>

#include "resource_tracker.h"

/* The authority's start (after "scheme://") and end in t; 0 when t is no URL. */
static size_t authority(const char *t, size_t *end)
{
    if (!rt_db_is_url(t))
        return 0;
    size_t a = (size_t)(strstr(t, "://") - t) + 3;
    *end = a + strcspn(t + a, "/?#");
    return a;
}

size_t rt_db_url_password(const char *t, size_t *start)
{
    size_t end, a = authority(t, &end);
    if (!a)
        return 0;
    const char *at = NULL;
    for (const char *p = t + a; p < t + end; p++)
        if (*p == '@')
            at = p;
    if (!at)
        return 0;
    const char *colon = memchr(t + a, ':', (size_t)(at - (t + a)));
    if (!colon)
        return 0;
    *start = (size_t)(colon + 1 - t);
    return (size_t)(at - (colon + 1));
}

int rt_db_redact(const char *t, char *out, size_t cap)
{
    if (!t)
        return snprintf(out, cap, "%s", "");
    size_t start = 0, n = rt_db_url_password(t, &start);
    char buf[4096];
    if (n || rt_db_is_url(t)) /* user:password@ made user@ (the colon goes too) */
        snprintf(buf, sizeof buf, "%.*s%s", n ? (int)(start - 1) : (int)strlen(t), t, n ? t + start + n : "");
    else
        return snprintf(out, cap, "%s", t);
    /* a password=... parameter left out */
    char *q = strchr(buf, '?');
    for (char *p = q; p && *p;) {
        char *param = p + 1, *amp = strchr(param, '&');
        if (strncmp(param, "password=", 9) == 0) {
            if (amp)
                memmove(param, amp + 1, strlen(amp + 1) + 1);
            else
                *(param == q + 1 ? q : p) = '\0';
            continue;
        }
        p = amp;
    }
    return snprintf(out, cap, "%s", buf);
}
