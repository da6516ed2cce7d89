/* gzip.c - gzip members through Debian's zlib without linking it: libz.so.1 is opened with
 * dlopen at the first use (a run that never streams does not map it; the static build links a
 * zlib built for musl instead), deflate builds one member
 * incrementally into a buffer that never passes its bound, inflate reads members back: a whole
 * buffer under a bound (rt_gunzip), or a descriptor as a stream in memory that does not grow
 * (rt_gunzip_stream: the recorded runs that summary, recommend and report read). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h> /* types and constants only: every function comes through dlsym (the static
                   * build links zlib itself) */

#include "dl.h"
#include "gzip.h"

#define RT_ZLIB_SONAME "libz.so.1"
#define GZ_CHUNK (1u << 30)     /* the most input handed to zlib per call (avail_in is 32 bits) */
#define GZ_BOUND_MARGIN 64      /* bytes added to zlib's bound: bits in flight, rounding */

/* The zlib functions used, as resolved from the loaded library. */
typedef struct zlib_api {
    int (*deflate_init2)(z_streamp, int, int, int, int, int, const char *, int);
    int (*deflate)(z_streamp, int);
    int (*deflate_end)(z_streamp);
    uLong (*deflate_bound)(z_streamp, uLong);
    int (*inflate_init2)(z_streamp, int, const char *, int);
    int (*inflate)(z_streamp, int);
    int (*inflate_reset)(z_streamp);
    int (*inflate_end)(z_streamp);
} zlib_api;

/* The process-wide library: loaded once, never closed. */
static struct {
    pthread_once_t once;
    void *dl;
    zlib_api api;
    char err[256]; /* why it is not loaded */
} zlib = {.once = PTHREAD_ONCE_INIT};

static void zlib_load_once(void)
{
#ifdef RT_STATIC_BUILD /* zlib is linked in (scripts/build-static builds it for musl) */
    zlib.api = (zlib_api){deflateInit2_, deflate, deflateEnd, deflateBound, inflateInit2_, inflate, inflateReset, inflateEnd};
    zlib.dl = &zlib.api;
    return;
#endif
    static const rt_dl_sym syms[] = {
        {"deflateInit2_", offsetof(zlib_api, deflate_init2)}, {"deflate", offsetof(zlib_api, deflate)},
        {"deflateEnd", offsetof(zlib_api, deflate_end)},      {"deflateBound", offsetof(zlib_api, deflate_bound)},
        {"inflateInit2_", offsetof(zlib_api, inflate_init2)}, {"inflate", offsetof(zlib_api, inflate)},
        {"inflateReset", offsetof(zlib_api, inflate_reset)},  {"inflateEnd", offsetof(zlib_api, inflate_end)},
    };
    zlib.dl = rt_dl_load(RT_ZLIB_SONAME, syms, RT_ARRAY_LEN(syms), &zlib.api, zlib.err, sizeof zlib.err);
}

/* Whether zlib is loaded (loading it the first time). */
static bool zlib_loaded(void)
{
    pthread_once(&zlib.once, zlib_load_once);
    return zlib.dl != NULL;
}

rt_error rt_gzip_available(char *err, size_t errlen)
{
    if (zlib_loaded())
        return RT_OK;
    snprintf(err, errlen, "cannot load %s (%s)", RT_ZLIB_SONAME, zlib.err);
    return RT_ERR_UNSUPPORTED;
}

struct rt_gzip {
    z_stream s;
    bool live;          /* deflateInit2 done, deflateEnd not yet */
    bool finished;      /* the trailer is written */
    bool broken;        /* zlib failed or the bound was passed mid-call: only free remains */
    rt_buf out;         /* the member so far; out.max is max_bytes */
    size_t in_total;    /* uncompressed bytes taken */
    size_t since_flush; /* bytes taken since the last sync flush (or the start) */
};

rt_error rt_gzip_new(size_t max_bytes, rt_gzip **out)
{
    return rt_gzip_new_level(max_bytes, -1, out);
}

rt_error rt_gzip_new_level(size_t max_bytes, int level, rt_gzip **out)
{
    *out = NULL;
    if (!zlib_loaded())
        return RT_ERR_UNSUPPORTED;
    rt_gzip *z = calloc(1, sizeof *z);
    if (!z)
        return RT_ERR_NOMEM;
    rt_buf_init(&z->out, max_bytes);
    /* the level (-1: zlib's default, 6), gzip wrapper (15 + 16), default memory: about 256 KiB
     * of zlib state */
    if (level < -1 || level > 9)
        level = Z_DEFAULT_COMPRESSION;
    if (zlib.api.deflate_init2(&z->s, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                               ZLIB_VERSION, (int)sizeof(z_stream)) != Z_OK) {
        free(z);
        return RT_ERR_NOMEM;
    }
    z->live = true;
    /* an empty member must fit, or no write could ever be finished */
    if ((size_t)zlib.api.deflate_bound(&z->s, 0) + GZ_BOUND_MARGIN > max_bytes) {
        rt_gzip_free(z);
        return RT_ERR_NOMEM;
    }
    *out = z;
    return RT_OK;
}

/* Runs deflate over len bytes of data (may be 0) with flush, growing the output buffer up to its
 * bound. Returns RT_OK, or RT_ERR_NOMEM (bound reached or allocation failed) / RT_ERR_IO (zlib
 * refused) with z marked broken. */
static rt_error run_deflate(rt_gzip *z, const void *data, size_t len, int flush)
{
    const unsigned char *p = data;
    for (;;) {
        if (z->s.avail_in == 0 && len > 0) {
            uInt n = len > GZ_CHUNK ? GZ_CHUNK : (uInt)len;
            z->s.next_in = (Bytef *)p; /* zlib does not write through next_in */
            z->s.avail_in = n;
            p += n;
            len -= n;
        }
        if (z->out.cap - z->out.len < 1024) {
            size_t want = z->out.len + (z->out.len > 4096 ? z->out.len : 4096);
            if (want > z->out.max)
                want = z->out.max;
            if (want <= z->out.len || rt_buf_reserve(&z->out, want) < 0) {
                z->broken = true;
                return RT_ERR_NOMEM;
            }
        }
        size_t room = z->out.cap - z->out.len;
        z->s.next_out = (Bytef *)z->out.data + z->out.len;
        z->s.avail_out = room > GZ_CHUNK ? GZ_CHUNK : (uInt)room;
        uInt before = z->s.avail_out;
        int rc = zlib.api.deflate(&z->s, flush);
        z->out.len += before - z->s.avail_out;
        if (rc == Z_STREAM_END)
            return RT_OK;
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            z->broken = true;
            return RT_ERR_IO;
        }
        /* done when every byte is in and zlib had room to spare (it holds nothing back) */
        if (len == 0 && z->s.avail_in == 0 && z->s.avail_out > 0 && flush != Z_FINISH)
            return RT_OK;
    }
}

/* The most bytes the member can reach if n more bytes follow the last sync flush and the member
 * is then finished: what is out already plus zlib's bound for n bytes (with their own header and
 * trailer, so the trailer is counted) and a margin. Saturates at SIZE_MAX. */
static size_t worst_case(const rt_gzip *z, size_t n)
{
    uLong b = zlib.api.deflate_bound((z_streamp)&z->s, n > ULONG_MAX / 2 ? ULONG_MAX / 2 : (uLong)n);
    size_t more = (size_t)b + GZ_BOUND_MARGIN;
    return more > SIZE_MAX - z->out.len ? SIZE_MAX : z->out.len + more;
}

rt_error rt_gzip_write(rt_gzip *z, const void *data, size_t len)
{
    if (!z || z->finished || z->broken || (len && !data))
        return RT_ERR_INVALID;
    if (len == 0)
        return RT_OK;
    size_t pending = len > SIZE_MAX - z->since_flush ? SIZE_MAX : z->since_flush + len;
    if (worst_case(z, pending) > z->out.max) {
        /* near the bound: push out what zlib holds, so that only the new bytes are uncertain */
        if (z->since_flush > 0) {
            rt_error rc = run_deflate(z, NULL, 0, Z_SYNC_FLUSH);
            if (rc != RT_OK)
                return rc;
            z->since_flush = 0;
        }
        if (worst_case(z, len) > z->out.max)
            return RT_ERR_NOMEM; /* nothing taken; the member can still be finished */
    }
    rt_error rc = run_deflate(z, data, len, Z_NO_FLUSH);
    if (rc != RT_OK)
        return rc;
    z->in_total += len;
    z->since_flush += len;
    return RT_OK;
}

rt_error rt_gzip_finish(rt_gzip *z, const void **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (!z || z->broken)
        return RT_ERR_INVALID;
    if (!z->finished) {
        rt_error rc = run_deflate(z, NULL, 0, Z_FINISH);
        if (rc != RT_OK)
            return rc;
        z->finished = true;
        zlib.api.deflate_end(&z->s); /* the zlib state (about 256 KiB) is not needed any more */
        z->live = false;
    }
    *data = z->out.data;
    *len = z->out.len;
    return RT_OK;
}

size_t rt_gzip_in_bytes(const rt_gzip *z) { return z ? z->in_total : 0; }

size_t rt_gzip_out_bytes(const rt_gzip *z) { return z ? z->out.len : 0; }

void rt_gzip_free(rt_gzip *z)
{
    if (!z)
        return;
    if (z->live)
        zlib.api.deflate_end(&z->s);
    rt_buf_free(&z->out);
    free(z);
}

rt_error rt_gunzip(const void *data, size_t len, size_t max_out, rt_buf *out)
{
    rt_buf_init(out, max_out < SIZE_MAX ? max_out + 1 : SIZE_MAX); /* + the NUL kept after the data */
    if (!zlib_loaded())
        return RT_ERR_UNSUPPORTED;
    if (!data || len == 0 || len > GZ_CHUNK)
        return len == 0 ? RT_ERR_PARSE : RT_ERR_INVALID;
    z_stream s;
    memset(&s, 0, sizeof s);
    if (zlib.api.inflate_init2(&s, 15 + 16, ZLIB_VERSION, (int)sizeof(z_stream)) != Z_OK)
        return RT_ERR_NOMEM;
    s.next_in = (Bytef *)data; /* zlib does not write through next_in */
    s.avail_in = (uInt)len;
    rt_error result = RT_OK;
    for (;;) {
        unsigned char spare; /* at the bound: room for one byte, to tell whether more would come */
        if (out->cap - out->len < 2 && out->cap < out->max) {
            size_t want = out->len + (out->len > 4096 ? out->len : 4096);
            if (rt_buf_reserve(out, want < out->max ? want : out->max) < 0) {
                result = RT_ERR_NOMEM;
                break;
            }
        }
        size_t room = out->cap > out->len ? out->cap - out->len - 1 : 0; /* one byte kept for the NUL */
        s.next_out = room ? (Bytef *)out->data + out->len : &spare;
        s.avail_out = room > GZ_CHUNK ? GZ_CHUNK : room ? (uInt)room : 1;
        uInt before = s.avail_out;
        int rc = zlib.api.inflate(&s, Z_NO_FLUSH);
        if (!room && s.avail_out == 0) { /* a byte beyond max_out */
            result = RT_ERR_NOMEM;
            break;
        }
        if (room)
            out->len += before - s.avail_out;
        if (rc == Z_STREAM_END) {
            if (s.avail_in == 0)
                break;
            zlib.api.inflate_reset(&s); /* another member follows */
            continue;
        }
        if (rc == Z_BUF_ERROR && s.avail_in == 0) { /* the input ended inside a member */
            result = RT_ERR_PARSE;
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            result = rc == Z_MEM_ERROR ? RT_ERR_NOMEM : RT_ERR_PARSE;
            break;
        }
    }
    zlib.api.inflate_end(&s);
    if (out->data)
        out->data[out->len] = '\0';
    return result;
}

/* ---- reading a gzip file as a stream ---------------------------------------------------- */

#define GZ_IN_BUF (64u * 1024u) /* compressed bytes read from the descriptor at a time */

struct rt_gunzip_stream {
    z_stream s;
    int fd;
    bool in_eof;      /* fd said end of file */
    bool member_done; /* the last inflate ended a member: another may follow */
    ssize_t end;      /* 0, -1 or -2 once the stream is over (what every later read returns) */
    int err;          /* errno of a failed read */
    uint64_t in_total, out_total;
    unsigned char *in; /* the input buffer, in_cap bytes */
    size_t in_cap;
};

rt_error rt_gunzip_stream_new(int fd, const void *head, size_t head_len, rt_gunzip_stream **out)
{
    *out = NULL;
    if (!zlib_loaded())
        return RT_ERR_UNSUPPORTED;
    rt_gunzip_stream *z = calloc(1, sizeof *z);
    if (!z)
        return RT_ERR_NOMEM;
    z->fd = fd;
    z->in_cap = head_len > GZ_IN_BUF ? head_len : GZ_IN_BUF;
    z->in = malloc(z->in_cap);
    if (!z->in || zlib.api.inflate_init2(&z->s, 15 + 16, ZLIB_VERSION, (int)sizeof(z_stream)) != Z_OK) {
        free(z->in);
        free(z);
        return RT_ERR_NOMEM;
    }
    if (head_len)
        memcpy(z->in, head, head_len);
    z->s.next_in = z->in;
    z->s.avail_in = (uInt)head_len; /* at most the first read's size (a few MiB) */
    z->in_total = head_len;
    *out = z;
    return RT_OK;
}

/* Refills the input buffer when zlib has taken all of it. 0, or -1 on a read error. */
static int gz_refill(rt_gunzip_stream *z)
{
    while (z->s.avail_in == 0 && !z->in_eof) {
        size_t want = z->in_cap < GZ_IN_BUF ? z->in_cap : GZ_IN_BUF;
        ssize_t k = read(z->fd, z->in, want);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            z->err = errno;
            return -1;
        }
        if (k == 0)
            z->in_eof = true;
        z->s.next_in = z->in;
        z->s.avail_in = (uInt)k;
        z->in_total += (uint64_t)k;
    }
    return 0;
}

ssize_t rt_gunzip_stream_read(rt_gunzip_stream *z, void *buf, size_t cap)
{
    if (z->end || cap == 0) {
        if (z->end == -1)
            errno = z->err;
        return z->end;
    }
    if (cap > GZ_CHUNK)
        cap = GZ_CHUNK;
    for (;;) {
        if (gz_refill(z) < 0) {
            z->end = -1;
            errno = z->err;
            return -1;
        }
        if (z->member_done) { /* a member ended: the input's end, or the next member */
            if (z->s.avail_in == 0)
                return z->end = 0;
            zlib.api.inflate_reset(&z->s);
            z->member_done = false;
        }
        z->s.next_out = buf;
        z->s.avail_out = (uInt)cap;
        int rc = zlib.api.inflate(&z->s, Z_NO_FLUSH);
        size_t got = cap - z->s.avail_out;
        z->out_total += got;
        if (rc == Z_STREAM_END)
            z->member_done = true;
        else if (rc == Z_BUF_ERROR && (z->s.avail_in > 0 || z->in_eof))
            z->end = -2; /* the input ended inside a member (or zlib can make no progress) */
        else if (rc != Z_OK && rc != Z_BUF_ERROR)
            z->end = -2; /* no gzip, or corrupt (Z_MEM_ERROR too: the state is unusable) */
        if (got > 0)
            return (ssize_t)got; /* a bad end is said by the next call */
        if (z->end)
            return z->end;
    }
}

uint64_t rt_gunzip_stream_in(const rt_gunzip_stream *z) { return z ? z->in_total : 0; }

uint64_t rt_gunzip_stream_out(const rt_gunzip_stream *z) { return z ? z->out_total : 0; }

void rt_gunzip_stream_free(rt_gunzip_stream *z)
{
    if (!z)
        return;
    zlib.api.inflate_end(&z->s);
    free(z->in);
    free(z);
}

/* ---- a whole descriptor gzipped to another (rt_gzip_fd) ---------------------------------- */

#define GZ_FD_PIECE (4u << 20) /* the plain bytes of one member: the memory it takes is bounded */

RT_API rt_error rt_gzip_fd(int in_fd, int out_fd)
{
    if (in_fd < 0 || out_fd < 0)
        return RT_ERR_INVALID;
    if (!zlib_loaded())
        return RT_ERR_UNSUPPORTED;
    char *buf = malloc(GZ_FD_PIECE);
    if (!buf)
        return RT_ERR_NOMEM;
    rt_error e = RT_OK;
    bool any = false;
    for (;;) {
        size_t n = 0;
        while (n < GZ_FD_PIECE) { /* a piece: read until it is full or the input ends */
            ssize_t k = read(in_fd, buf + n, GZ_FD_PIECE - n);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0) {
                e = RT_ERR_IO;
                break;
            }
            if (k == 0)
                break;
            n += (size_t)k;
        }
        if (e != RT_OK || (n == 0 && any))
            break;
        /* one member a piece (an empty input: one empty member, still a gzip file) */
        rt_gzip *z = NULL;
        const void *data;
        size_t len;
        e = rt_gzip_new_level(GZ_FD_PIECE + GZ_FD_PIECE / 8 + 4096, 6, &z);
        if (e == RT_OK)
            e = rt_gzip_write(z, buf, n);
        if (e == RT_OK)
            e = rt_gzip_finish(z, &data, &len);
        if (e == RT_OK && rt_write_all(out_fd, data, len) < 0)
            e = RT_ERR_IO;
        rt_gzip_free(z);
        any = true;
        if (e != RT_OK || n < GZ_FD_PIECE)
            break;
    }
    int saved = errno;
    free(buf);
    errno = saved;
    return e;
}
