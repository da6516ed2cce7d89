/* zfs.c - ZFS pools' space, as the Rust tool 0.1.14 and the Python tracker 0.5 take it: only
 * where the kernel module is loaded (<proc root>/spl/kstat/zfs, a directory per imported pool),
 * `zpool list -Hp -o name,size,allocated,free` run through the bounded runner of place_query.c
 * (posix_spawn, never a shell; a pipe; killed and reaped past its deadline; only PATH and
 * LC_ALL=C in its environment), its tab-separated
 * answer parsed (a pure function), and each pool's shallowest zfs mount found in mountinfo. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place.h"
#include "sources.h"

bool rt_zfs_loaded(const rt_roots *r)
{
    return r->proc_fd >= 0 && faccessat(r->proc_fd, "spl/kstat/zfs", F_OK, 0) == 0;
}

/* Parses a whole decimal field [s, s+n) into *v. */
static bool whole_u64(const char *s, size_t n, uint64_t *v)
{
    const char *p = s, *end = s + n;
    if (n == 0 || *s < '0' || *s > '9')
        return false;
    return rt_parse_u64(&p, end, v) && p == end;
}

size_t rt_zpool_list_parse(const char *buf, size_t len, rt_zpool *out, size_t cap, size_t *bad)
{
    size_t n = 0, skipped = 0;
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) { /* a line cut short (the answer did not fit): not trusted */
            skipped++;
            break;
        }
        const char *line = p;
        p = nl + 1;
        if (nl == line)
            continue;
        const char *f[4];
        size_t fl[4];
        int k = 0;
        const char *q = line;
        while (k < 4 && q <= nl) {
            const char *tab = memchr(q, '\t', (size_t)(nl - q));
            const char *fe = tab ? tab : nl;
            f[k] = q;
            fl[k] = (size_t)(fe - q);
            k++;
            q = fe + 1;
            if (!tab)
                break;
        }
        rt_zpool z;
        bool unknown = false; /* "-": a pool that cannot say (faulted): left out, not an error */
        for (int i = 1; i < k; i++)
            unknown |= fl[i] == 1 && f[i][0] == '-';
        if (k == 4 && fl[0] > 0 && unknown)
            continue;
        if (k != 4 || fl[0] == 0 || fl[0] >= sizeof z.name || memchr(f[0], '\0', fl[0]) ||
            !whole_u64(f[1], fl[1], &z.size) || !whole_u64(f[2], fl[2], &z.allocated) ||
            !whole_u64(f[3], fl[3], &z.free)) {
            skipped++; /* fewer than four fields, a number that is not one */
            continue;
        }
        if (z.size == 0)
            continue; /* no space to count (both peers leave it out) */
        memcpy(z.name, f[0], fl[0]);
        z.name[fl[0]] = '\0';
        if (n < cap)
            out[n] = z;
        n++;
    }
    if (bad)
        *bad = skipped;
    return n;
}

int rt_zpool_list_run(double timeout_secs, char *out, size_t cap, char *why, size_t whylen)
{
    static const char *const argv[] = {"zpool", "list", "-Hp", "-o", "name,size,allocated,free", NULL};
    /* its environment: the PATH and the C locale only (no token of ours reaches it) */
    const char *path = getenv("PATH");
    char pathvar[4096];
    /* zpool lives in /usr/sbin or /sbin, which a user's PATH often lacks: both are searched last */
    if (!rt_pathf(pathvar, sizeof pathvar, "PATH=%s:/usr/sbin:/sbin", path ? path : "/usr/local/sbin:/usr/bin:/bin"))
        return 1; /* a PATH too long to pass on: as if zpool were not on it */
    const char *const envp[] = {pathvar, "LC_ALL=C", NULL};
    return rt_place_run(argv, envp, timeout_secs, out, cap, why, whylen);
}

typedef struct pool_mount {
    const char *pool;
    size_t pool_len, best_depth;
    char *out;
    size_t cap;
    bool found;
} pool_mount;

/* rt_mountinfo_parse callback: keeps the pool's zfs mount with the fewest dataset levels. */
static void pick_mount(void *user, const rt_mountinfo_entry *e)
{
    pool_mount *pm = user;
    if (strcmp(e->fstype, "zfs") != 0 || strncmp(e->source, pm->pool, pm->pool_len) != 0 ||
        (e->source[pm->pool_len] != '\0' && e->source[pm->pool_len] != '/'))
        return;
    size_t depth = 1;
    for (const char *s = e->source; *s; s++)
        depth += *s == '/';
    if (pm->found && depth >= pm->best_depth)
        return; /* the first of the shallowest stands */
    if (strlen(e->mount_point) < pm->cap) {
        memcpy(pm->out, e->mount_point, strlen(e->mount_point) + 1);
        pm->best_depth = depth;
        pm->found = true;
    }
}

bool rt_zfs_pool_mount(const char *mountinfo, size_t len, const char *pool, char *out, size_t cap)
{
    pool_mount pm = {.pool = pool, .pool_len = strlen(pool), .out = out, .cap = cap};
    if (cap)
        out[0] = '\0';
    if (mountinfo && len)
        rt_mountinfo_parse(mountinfo, len, pick_mount, &pm);
    return pm.found;
}
