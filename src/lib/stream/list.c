/* list.c - rt_stream_list: what is left in the spill directories (docs/contracts.md §5), run by
 * run, for `resource-tracker upload --list`: each run's record read (or found damaged), its
 * batch files counted and their rows read, whether its credentials are the caller's and
 * whether a live tracker or a delivery holds it. Sends nothing; a run's lock is taken only for
 * the look (without waiting: a held one is reported held). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream_int.h"

#define BATCH_MAX ((size_t)256 << 20) /* the most raw CSV a spill file may hold */

/* Rows in one spill file (0 when it cannot be read). */
static uint64_t file_rows(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    rt_buf gz, raw = {0};
    rt_buf_init(&gz, BATCH_MAX);
    ssize_t n = rt_read_fd_grow(fd, &gz, RT_READ_TO_EOF);
    close(fd);
    uint64_t rows = 0;
    if (n > 0 && rt_gunzip(gz.data, gz.len, BATCH_MAX, &raw) == RT_OK)
        for (size_t i = 0; i < raw.len; i++)
            rows += ((char *)raw.data)[i] == '\n';
    rt_buf_free(&gz);
    rt_buf_free(&raw);
    return rows ? rows - 1 : 0; /* the header */
}

/* Counts run key's batch files in dir past done_seq (and their rows) into r, and the seqs below
 * closed with no file (nor one set aside as damaged) as missing. */
static void count_batches(const char *dir, const char *key, long long done_seq, unsigned closed, rt_spilled_run *r)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t klen = strlen(key);
    unsigned char *seen = closed ? calloc(closed, 1) : NULL;
    for (struct dirent *e; (e = readdir(d));) {
        const char *name = e->d_name;
        size_t len = strlen(name);
        bool damaged = len == klen + 22 && strcmp(name + len - 15, ".csv.gz.damaged") == 0;
        if (!(len == klen + 14 && strcmp(name + len - 7, ".csv.gz") == 0) && !damaged)
            continue;
        if (strncmp(name, key, klen) != 0 || name[klen] != '-' || strspn(name + klen + 1, "0123456789") != 6)
            continue;
        long long seq = strtoll(name + klen + 1, NULL, 10);
        if (seen && seq >= 0 && seq < (long long)closed)
            seen[seq] = 1;
        if (damaged || seq <= done_seq)
            continue;
        char path[4200];
        r->batches++;
        if (rt_pathf(path, sizeof path, "%s/%s", dir, name))
            r->rows += file_rows(path);
    }
    closedir(d);
    for (long long s = done_seq + 1; seen && s < (long long)closed; s++)
        r->missing += !seen[s];
    free(seen);
}

rt_error rt_stream_list(const rt_stream_options *opts, void (*fn)(const rt_spilled_run *run, void *user), void *user)
{
    if (!opts || !fn || opts->struct_size < sizeof(size_t))
        return RT_ERR_INVALID;
    rt_stream_options o = RT_STREAM_OPTIONS_INIT;
    if (rt_struct_copy(&o, sizeof o, opts) < 0)
        return RT_ERR_INVALID;
    char fp[33] = "";
    if (o.token && *o.token)
        rt_stream_fingerprint(o.api_url && *o.api_url ? o.api_url : RT_SENTINEL_DEFAULT_URL, o.token, fp);
    char *dirs[64];
    size_t ndirs = 0;
    rt_spill_dirs(&o, dirs, RT_ARRAY_LEN(dirs), &ndirs);
    if (!ndirs)
        return RT_ERR_NOMEM;
    for (size_t di = 0; di < ndirs; di++) {
        char **keys;
        size_t stranded, n = rt_spill_run_keys(dirs[di], &keys, &stranded);
        for (size_t i = 0; i < n; i++) {
            rt_spilled_run r = {.key = keys[i], .dir = dirs[di], .run_id = ""};
            rt_run_record rec;
            int fd = rt_record_lock(dirs[di], keys[i]);
            r.held = fd < 0;
            bool loaded = i < n - stranded && rt_record_load(dirs[di], keys[i], &rec, NULL);
            if (loaded) {
                r.run_id = rec.run_id;
                r.ended = rec.ended;
                r.exit_code = rec.exit_code;
                r.finish_sent = rec.finish_sent;
                r.ours = fp[0] && strcmp(fp, rec.fp) == 0;
                count_batches(dirs[di], keys[i], rec.done_seq, rec.closed, &r);
            } else {
                r.damaged = !r.held || i >= n - stranded; /* a held one may be mid-write: not judged */
                count_batches(dirs[di], keys[i], -1, 0, &r);
            }
            rt_record_unlock(dirs[di], keys[i], fd, fd >= 0 && i >= n - stranded); /* ours made: removed */
            fn(&r, user);
            if (loaded)
                rt_record_clear(&rec);
        }
        for (size_t i = 0; i < n; i++)
            free(keys[i]);
        free(keys);
    }
    for (size_t i = 0; i < ndirs; i++)
        free(dirs[i]);
    return RT_OK;
}
