/* prom_http.c - the /metrics server's parser of one HTTP/1.x request head: method, path,
 * version, the Accept header's choice between OpenMetrics and the text format, keep-alive and
 * whether a body follows. Pure: (buf, len, out), no allocation, no NUL needed. */
#include <string.h>

#include "prom_http.h"

/* RFC 9110 tchar: the bytes of a token (methods, header names, media types). */
static int is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return 1;
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* Whether s[0..n) equals the lowercase word w, ignoring case. */
static int ieq(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    if (n != wl)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)s[i]) != w[i])
            return 0;
    return 1;
}

/* Trims blanks (SP, HTAB) at both ends of [*s, *e). */
static void trim(const char **s, const char **e)
{
    while (*s < *e && (**s == ' ' || **s == '\t'))
        (*s)++;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
        (*e)--;
}

/* The end of the list element starting at p (the next ',' outside a quoted string, or end). */
static const char *element_end(const char *p, const char *end, char sep)
{
    int quoted = 0;
    for (; p < end; p++) {
        if (quoted && *p == '\\' && p + 1 < end)
            p++;
        else if (*p == '"')
            quoted = !quoted;
        else if (!quoted && *p == sep)
            return p;
    }
    return end;
}

/* Parses a qvalue ("0", "0.5", "1.000"; RFC 9110 weight) into thousandths. Returns -1 when
 * it is not one. */
static int parse_q(const char *s, const char *e)
{
    if (s >= e || (*s != '0' && *s != '1'))
        return -1;
    int q = (*s - '0') * 1000;
    s++;
    if (s == e)
        return q;
    if (*s != '.' || e - s > 4)
        return -1;
    int scale = 100;
    for (s++; s < e; s++, scale /= 10) {
        if (*s < '0' || *s > '9')
            return -1;
        q += (*s - '0') * scale;
    }
    return q > 1000 ? -1 : q;
}

/* What the Accept headers say of the two formats: for each, the q (thousandths) of the most
 * specific media range that matches it (3 exact, 2 type/x, 1 x/x; 0 none). */
typedef struct accept_state {
    int seen; /* an Accept header was there */
    int spec[2], q[2]; /* [0] text/plain, [1] application/openmetrics-text */
} accept_state;

static void accept_offer(accept_state *a, int which, int spec, int q)
{
    if (spec > a->spec[which] || (spec == a->spec[which] && q > a->q[which])) {
        a->spec[which] = spec;
        a->q[which] = q;
    }
}

/* Folds one Accept header's value into a (a malformed range is ignored). */
static void accept_header(accept_state *a, const char *v, const char *end)
{
    a->seen = 1;
    while (v < end) {
        const char *e = element_end(v, end, ',');
        const char *type = v, *params = element_end(v, e, ';'), *type_end = params;
        trim(&type, &type_end);
        int q = 1000;
        for (const char *p = params; p < e;) { /* p at a ';' */
            const char *ps = p + 1, *pe = element_end(ps, e, ';');
            const char *eq = memchr(ps, '=', (size_t)(pe - ps));
            if (eq) {
                const char *ks = ps, *ke = eq, *vs = eq + 1, *ve = pe;
                trim(&ks, &ke);
                trim(&vs, &ve);
                if (ieq(ks, (size_t)(ke - ks), "q"))
                    q = parse_q(vs, ve);
            }
            p = pe;
        }
        const char *slash = memchr(type, '/', (size_t)(type_end - type));
        if (q >= 0 && slash) {
            size_t tl = (size_t)(slash - type), sl = (size_t)(type_end - slash - 1);
            const char *sub = slash + 1;
            if (ieq(type, tl, "*") && ieq(sub, sl, "*")) {
                accept_offer(a, 0, 1, q);
                accept_offer(a, 1, 1, q);
            } else if (ieq(type, tl, "text")) {
                if (ieq(sub, sl, "plain"))
                    accept_offer(a, 0, 3, q);
                else if (ieq(sub, sl, "*"))
                    accept_offer(a, 0, 2, q);
            } else if (ieq(type, tl, "application")) {
                if (ieq(sub, sl, "openmetrics-text"))
                    accept_offer(a, 1, 3, q);
                else if (ieq(sub, sl, "*"))
                    accept_offer(a, 1, 2, q);
            }
        }
        v = e < end ? e + 1 : end;
    }
}

/* OpenMetrics when its q is above 0 and above the text format's, or equal with a more
 * specific range (the client named it); the text format otherwise (and without Accept). */
static int accept_openmetrics(const accept_state *a)
{
    if (!a->seen || a->spec[1] == 0 || a->q[1] <= 0)
        return 0;
    int qt = a->spec[0] ? a->q[0] : 0;
    return a->q[1] > qt || (a->q[1] == qt && a->spec[1] > a->spec[0]);
}

/* Parses the request line [s, e) (without its line end) into out. Returns 0 or -1. */
static int request_line(const char *s, const char *e, rt_prom_request *out)
{
    const char *p = s;
    while (p < e && is_tchar((unsigned char)*p))
        p++;
    if (p == s || p >= e || *p != ' ')
        return -1;
    out->method_str = s;
    out->method_len = (size_t)(p - s);
    out->method = out->method_len == 3 && memcmp(s, "GET", 3) == 0    ? RT_PROM_GET
                  : out->method_len == 4 && memcmp(s, "HEAD", 4) == 0 ? RT_PROM_HEAD
                                                                      : RT_PROM_OTHER;
    const char *t = ++p;
    while (p < e && (unsigned char)*p > ' ' && (unsigned char)*p < 0x7f)
        p++;
    const char *t_end = p;
    if (t == t_end || p >= e || *p != ' ')
        return -1;
    p++;
    /* HTTP/1.<digit>: a later 1.x is answered as 1.1 */
    if (e - p != 8 || memcmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' || p[7] > '9')
        return -1;
    out->version_minor = p[7] - '0';
    if (*t != '/') { /* absolute form: scheme://authority[/path] */
        const char *sep = NULL;
        for (const char *q = t; q + 2 < t_end; q++)
            if (q[0] == ':' && q[1] == '/' && q[2] == '/') {
                sep = q;
                break;
            }
        if (!sep || !(ieq(t, (size_t)(sep - t), "http") || ieq(t, (size_t)(sep - t), "https")))
            return -1;
        const char *a = sep + 3, *slash = a;
        while (slash < t_end && *slash != '/' && *slash != '?' && *slash != '#')
            slash++;
        if (slash == a)
            return -1; /* no host */
        if (slash == t_end || *slash != '/') {
            out->path = "/";
            out->path_len = 1;
            return 0;
        }
        t = slash;
    }
    const char *q = t;
    while (q < t_end && *q != '?' && *q != '#')
        q++;
    out->path = t;
    out->path_len = (size_t)(q - t);
    return 0;
}

/* Parses a Content-Length value [s, e) into *n. Returns 0 or -1 (not digits, overflow). */
static int content_length(const char *s, const char *e, unsigned long long *n)
{
    if (s == e)
        return -1;
    unsigned long long v = 0;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9' || v > (~0ULL - 9) / 10)
            return -1;
        v = v * 10 + (unsigned)(*s - '0');
    }
    *n = v;
    return 0;
}

/* Folds a Connection value's tokens into *close_seen / *keep_seen. */
static void connection_header(const char *v, const char *end, int *close_seen, int *keep_seen)
{
    while (v < end) {
        const char *e = element_end(v, end, ','), *s = v, *te = e;
        trim(&s, &te);
        if (ieq(s, (size_t)(te - s), "close"))
            *close_seen = 1;
        else if (ieq(s, (size_t)(te - s), "keep-alive"))
            *keep_seen = 1;
        v = e < end ? e + 1 : end;
    }
}

/* What the header lines said so far. */
typedef struct head_state {
    accept_state accept;
    int close_seen, keep_seen, chunked, have_len;
    unsigned long long len;
} head_state;

/* Checks one header line [s, e) (no line end) and folds what matters into h. Returns 0 or -1
 * (malformed). */
static int header_line(const char *s, const char *e, head_state *h)
{
    const char *colon = s;
    while (colon < e && is_tchar((unsigned char)*colon))
        colon++;
    if (colon == s || colon >= e || *colon != ':')
        return -1; /* no name, a blank before the colon, or no colon */
    for (const char *p = colon + 1; p < e; p++)
        if (((unsigned char)*p < ' ' && *p != '\t') || *p == 0x7f)
            return -1;
    size_t nl = (size_t)(colon - s);
    const char *v = colon + 1, *ve = e;
    trim(&v, &ve);
    if (ieq(s, nl, "accept")) {
        accept_header(&h->accept, v, ve);
    } else if (ieq(s, nl, "connection")) {
        connection_header(v, ve, &h->close_seen, &h->keep_seen);
    } else if (ieq(s, nl, "transfer-encoding")) {
        h->chunked = 1;
    } else if (ieq(s, nl, "content-length")) {
        unsigned long long n;
        if (content_length(v, ve, &n) < 0 || (h->have_len && n != h->len))
            return -1;
        h->have_len = 1;
        h->len = n;
    }
    return 0;
}

rt_prom_parse rt_prom_parse_request(const char *buf, size_t len, rt_prom_request *out)
{
    memset(out, 0, sizeof *out);
    size_t lim = len < RT_PROM_HEAD_MAX ? len : RT_PROM_HEAD_MAX;
    const char *p = buf, *end = buf + lim;
    while (p < end && (*p == '\r' || *p == '\n')) /* empty lines before the request line */
        p++;
    head_state h;
    memset(&h, 0, sizeof h);
    int first = 1;
    for (;;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            /* an incomplete line: wrong already when it holds a byte no head may hold, or
             * when what began as the method is no token */
            const char *m = p;
            while (first && m < end && is_tchar((unsigned char)*m))
                m++;
            if (first && m < end && *m != ' ')
                return RT_PROM_BAD;
            if (memchr(p, '\0', (size_t)(end - p)))
                return RT_PROM_BAD;
            return len >= RT_PROM_HEAD_MAX ? RT_PROM_TOO_LARGE : RT_PROM_MORE;
        }
        const char *le = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
        if (memchr(p, '\r', (size_t)(le - p)))
            return RT_PROM_BAD; /* a bare CR inside a line */
        if (first) {
            if (request_line(p, le, out) < 0)
                return RT_PROM_BAD;
            first = 0;
        } else if (le == p) { /* the blank line: the head is complete */
            out->consumed = (size_t)(nl + 1 - buf);
            out->openmetrics = accept_openmetrics(&h.accept);
            out->keep_alive = out->version_minor >= 1 ? !h.close_seen : h.keep_seen && !h.close_seen;
            out->has_body = h.chunked || (h.have_len && h.len > 0);
            return RT_PROM_DONE;
        } else if (*p == ' ' || *p == '\t' || header_line(p, le, &h) < 0) {
            return RT_PROM_BAD; /* obsolete line folding, or a malformed header */
        }
        p = nl + 1;
    }
}
