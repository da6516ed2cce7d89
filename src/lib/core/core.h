/* core.h - internal helpers shared by every module of the library: file reading, the
 * proc/sys path roots, the clock, bounded growable buffers and logging. Not public. */
#ifndef RT_CORE_H
#define RT_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "resource_tracker.h"
#include "../../common/owned.h" /* rt_free_all */

/* ---- reading ---------------------------------------------------------------------------- */

/* Reads fd from offset 0 into buf until EOF or cap-1 bytes, retrying on EINTR, and
 * NUL-terminates. Returns the byte count, or -errno. A file larger than the buffer is
 * truncated: see rt_read_fd_grow. Multi-record procfs files (diskstats, net/dev, mountinfo,
 * children) hand over at most about a page per read, so this reads on to EOF. */
ssize_t rt_pread_all(int fd, char *buf, size_t cap);

/* As rt_pread_all for files the kernel shows as one record (a sysfs attribute, /proc/stat,
 * meminfo, /proc/PID/{stat,io,schedstat,smaps_rollup}): one read returns the whole file when
 * the buffer is large enough, so a short read is the end and no second read is made. */
ssize_t rt_pread_single(int fd, char *buf, size_t cap);

/* Opens path relative to dirfd (O_RDONLY|O_CLOEXEC), reads it whole into buf (as
 * rt_pread_all) and closes it. Returns the byte count or -errno. */
ssize_t rt_read_at(int dirfd, const char *path, char *buf, size_t cap);

/* As rt_read_at, then strips trailing whitespace (newline). Returns the length or -errno. */
ssize_t rt_read_line_at(int dirfd, const char *path, char *buf, size_t cap);

/* Reads a decimal integer attribute file (e.g. sysfs "size"). Returns 0 and *out, or -errno
 * (-EINVAL when the file does not hold a number). */
int rt_read_i64_at(int dirfd, const char *path, int64_t *out);

/* Opens path relative to dirfd read-only with O_CLOEXEC. Returns the fd or -errno. */
int rt_open_at(int dirfd, const char *path);

/* The descriptor number below which a descriptor may be kept open between readings: the soft
 * RLIMIT_NOFILE less a headroom left to the rest of the process (an eighth of the limit, 16 to
 * 4096); INT_MAX without a limit. Past it, files are opened for each read and closed. */
int rt_fds_keep_below(void);
/* The same for a soft limit of soft descriptors (INT_MAX for one negative or past INT_MAX / 2). */
int rt_fds_keep_below_at(long long soft);

/* Under a small open files limit (rt_fds_keep_below under 4096), holds the n lowest free
 * descriptors in fds[] (close-on-exec duplicates; -1 where none is left, or with no such
 * limit), so that files opened meanwhile take the numbers above them; rt_fds_give_back closes
 * them, for the few files that are to be kept first (the job group's counters: the sampler). */
void rt_fds_hold(int *fds, int n);
void rt_fds_give_back(int *fds, int n);

/* rt_open_at for a descriptor to be kept open between readings: -EMFILE also when the
 * descriptor would be at or past rt_fds_keep_below (it is closed: the caller reads the file by
 * opening it each time, or goes without). */
int rt_open_keep(int dirfd, const char *path);

/* Closes *fd if it is open and sets it to -1. */
void rt_close(int *fd);
/* rt_close on each of the n descriptors fds point at; rt_close_all(&x->a_fd, &x->b_fd, ...)
 * does it for its arguments, in place of a run of rt_close lines in a destructor. */
void rt_close_each(int *const *fds, size_t n);
#define rt_close_all(...)                                                                                              \
    rt_close_each((int *const[]){__VA_ARGS__}, sizeof((int *const[]){__VA_ARGS__}) / sizeof(int *))

/* Writes all n bytes of p to fd, retrying short writes and EINTR. Returns 0, or -1 with errno
 * (EIO when write(2) wrote nothing). */
int rt_write_all(int fd, const void *p, size_t n);
/* Hands the n bytes of p to fn (with user) again and again with the rest until it took them all.
 * Returns 0, or -1 with errno (EIO where a call took none, or more than it was given, and set
 * no errno). */
int rt_write_fn_all(rt_write_fn fn, void *user, const void *p, size_t n);

/* ---- bounded growable buffer ------------------------------------------------------------ */

typedef struct rt_buf {
    char *data;
    size_t len, cap, max; /* max: the most the buffer may grow to */
} rt_buf;

/* Initialises an empty buffer that may grow to max bytes. */
void rt_buf_init(rt_buf *b, size_t max);
/* Makes room for at least need bytes in total. Returns 0, or -1 when that exceeds max or
 * allocation fails. */
int rt_buf_reserve(rt_buf *b, size_t need);
/* Appends n bytes. Returns 0 or -1 (see rt_buf_reserve). */
int rt_buf_append(rt_buf *b, const void *p, size_t n);
/* Frees the storage and resets the buffer. */
void rt_buf_free(rt_buf *b);

/* How a whole-file read knows it reached the end. */
typedef enum rt_read_mode {
    RT_READ_TO_EOF,      /* read until a read returns 0 */
    RT_READ_SINGLE,      /* one record (see rt_pread_single): a short read is the end */
    RT_READ_SHORT_LINES, /* a seq_file list of lines under 256 bytes (diskstats, net/dev,
                          * children): a read that stops a line short of a page is the end,
                          * which saves the read that would return 0 */
} rt_read_mode;

/* Reads a whole file from offset 0 into b, growing it as needed up to its maximum (for files
 * whose size is unknown, such as mountinfo); mode tells where it ends. NUL-terminates.
 * Returns the length or -errno (-EFBIG when the file exceeds the maximum). */
ssize_t rt_read_fd_grow(int fd, rt_buf *b, rt_read_mode mode);

/* ---- path roots --------------------------------------------------------------------------- */

/* The proc and sys roots, opened as directory fds; every source reads relative to them. */
typedef struct rt_roots {
    int proc_fd, sys_fd;
    char proc[4096], sys[4096];
} rt_roots;

/* Opens the roots: the given paths, else (NULL or "") the standard mounts. Returns RT_OK, RT_ERR_NOT_FOUND (proc root missing; sys root may be absent:
 * sys_fd is then -1) or RT_ERR_INVALID (path too long). */
rt_error rt_roots_open(rt_roots *r, const char *proc_root, const char *sys_root);
void rt_roots_close(rt_roots *r);

/* ---- clock ------------------------------------------------------------------------------ */

double rt_mono_secs(void); /* CLOCK_MONOTONIC in seconds */
double rt_thread_cpu_secs(void); /* the calling thread's CPU time in seconds (0 when unreadable) */
double rt_real_secs(void); /* CLOCK_REALTIME (Unix time) in seconds */
double rt_boot_secs(void); /* CLOCK_BOOTTIME in seconds (a suspended machine's time too) */

/* ---- logging ---------------------------------------------------------------------------- */

typedef struct rt_logger {
    rt_log_fn fn;
    void *user;
} rt_logger;

/* Formats and hands a message to the logger's callback, if any. */
void rt_log(const rt_logger *lg, rt_log_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- secrets kept out of messages ----------------------------------------------------------- */

/* Replaces every occurrence of secret (when non-empty) in text with "[redacted]" (or as much of
 * it as the secret is long), in place: a token, key or header value out of a message before it
 * is logged. Pure. */
void rt_redact(char *text, const char *secret);

/* ---- small parsing helpers ---------------------------------------------------------------- */

/* Parses an unsigned decimal at *p (skipping leading blanks), advancing *p past it. Returns
 * true on success; false (and *p unchanged) when no digit is there or the value overflows. */
bool rt_parse_u64(const char **p, const char *end, uint64_t *out);
/* Parses all of s[0..n) as an unsigned decimal: digits only (at least one, no blanks or sign),
 * within 64 bits. False (and *out unchanged) otherwise. */
bool rt_parse_u64_all(const char *s, size_t n, uint64_t *out);

/* Line and token scanning over [p, end): rt_next_line sets the line bounds to the next line
 * (without its newline) and returns false at the end; rt_next_token skips blanks and sets the
 * next blank-separated token, returning false when the line has no more. */
bool rt_next_line(const char **p, const char *end, const char **line, const char **line_end);
bool rt_next_token(const char **p, const char *end, const char **tok, size_t *len);
/* The next max tokens at most, as rt_next_token, into tok[] and len[]; returns how many. */
int rt_next_tokens(const char **p, const char *end, const char **tok, size_t *len, int max);

/* Copies at most cap-1 bytes of src[0..n) into dst, NUL-terminated, trimming surrounding
 * whitespace. Returns the copied length. */
size_t rt_copy_trim(char *dst, size_t cap, const char *src, size_t n);

/* Makes the array *arr (of *cap elements of elem bytes) hold at least need elements,
 * doubling; new elements are zeroed. Returns 0, or -1 (the array unchanged) on no memory. */
int rt_grow(void *arr, size_t *cap, size_t need, size_t elem);
/* rt_grow without zeroing the new elements: for an array whose elements are each set when
 * taken (a large one's unused room then costs no resident memory: realloc's fresh pages are
 * not touched until used). */
int rt_grow_uninit(void *arr, size_t *cap, size_t need, size_t elem);
/* Makes the array *arr exactly n elements of elem bytes (n > 0), its contents kept up to the
 * smaller size: for arrays sized in step with another. Returns 0, or -1 (*arr unchanged) on no
 * memory or an overflowing size. */
int rt_resize(void *arr, size_t n, size_t elem);
/* rt_grow starting from one element: for one of many small arrays that usually hold one (a
 * process's threads: 16 bytes, not 8 of them). */
int rt_grow_small(void *arr, size_t *cap, size_t need, size_t elem);

/* Formats into buf like snprintf; returns false when the result did not fit (or failed). */
bool rt_pathf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* printf-style into a byte sink: the text (cut at RT_PUTF_MAX - 1 bytes: for the short pieces
 * the text, Markdown and HTML writers make) handed to put(ctx, text, its length), unless empty. */
typedef void (*rt_put_fn)(void *ctx, const char *s, size_t n);
enum { RT_PUTF_MAX = 2048 };
void rt_putf(rt_put_fn put, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Copies the string src into dst[cap]; returns false (dst empty) when it does not fit. */
bool rt_copy_str(char *dst, size_t cap, const char *src);

/* Copies src into dst[cap] (cap > 0), cut to fit without splitting a UTF-8 sequence; returns
 * dst, or NULL (dst untouched) for a NULL src. */
const char *rt_copy_cut(char *dst, size_t cap, const char *src);
/* rt_copy_cut for a string that says something: NULL (dst untouched) for a NULL or empty src. */
const char *rt_copy_cut_said(char *dst, size_t cap, const char *src);

/* Returns a heap copy of s (NULL stays NULL), or NULL on allocation failure. */
char *rt_strdup(const char *s);

/* Replaces *slot with a heap copy of s (freeing the old one). Returns 0 or -1. */
int rt_set_str(char **slot, const char *s);

/* cur - prev for a counter that only grows; 0 when it went backwards (a reset). */
uint64_t rt_delta_u64(uint64_t cur, uint64_t prev);

/* Folds the string s into the FNV-style hash h (to notice when a list of names changed). */
uint64_t rt_hash_str(uint64_t h, const char *s);

/* Copies a caller's options struct that begins with `size_t struct_size` into dst (dst_size
 * bytes, already holding the defaults): only the bytes within the caller's struct_size, so
 * a caller built against an older, shorter struct gets the defaults for the newer fields.
 * Returns 0, or -1 (dst untouched) when src->struct_size is smaller than a size_t. NULL src:
 * the defaults stay. */
int rt_struct_copy(void *dst, size_t dst_size, const void *src);
/* rt_struct_copy for a struct a copy keeps (rt_member_keep, rt_request_keep): src must hold at
 * least its first `least` bytes (the members the keeper reads). Returns 1 when copied, 0 for a
 * NULL src (nothing copied), -1 (dst untouched) when src's struct_size is below least or a
 * size_t. */
int rt_struct_copy_least(void *dst, size_t dst_size, const void *src, size_t least);

#define RT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* a + b where NaN means "no figure": NaN only when both are. */
static inline double rt_add_known(double a, double b)
{
    return a != a ? b : b != b ? a : a + b;
}

/* *acc = min(*acc, x) where NaN means "no figure": a NaN x changes nothing. */
static inline void rt_min_known(double *acc, double x)
{
    if (x == x && (*acc != *acc || x < *acc))
        *acc = x;
}

#endif
