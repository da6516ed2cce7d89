/* dirwalk.h - the library's one directory listing loop: getdents64 into a stack buffer, so a
 * walk allocates nothing and can run in the steady-state sampling loop. Not public. */
#ifndef RT_DIRWALK_H
#define RT_DIRWALK_H

#include <stdint.h>

/* Bytes of the stack buffer one getdents64 call fills; a larger directory takes more calls. */
#define RT_DIR_WALK_BUF 4096

/* Called once per entry, "." and ".." left out. name is valid only during the call; d_type is
 * the DT_* value the file system reports (DT_UNKNOWN where it reports none). Returning
 * non-zero stops the walk. */
typedef int (*rt_dir_fn)(void *user, const char *name, unsigned char d_type);

/* Lists the directory at path relative to dirfd (opened O_DIRECTORY, closed before return).
 * Returns the number of entries handed to cb (the one that stopped the walk included), or
 * -errno: -ENOENT when path is missing, -ENOTDIR when it is not a directory, or the error of
 * a failed read (entries already handed over stay handed over). */
long rt_dir_walk(int dirfd, const char *path, rt_dir_fn cb, void *user);

/* As rt_dir_walk over an open directory fd, which stays open and is walked from its start
 * (the fd's offset is rewound first), so a kept-open directory can be listed again. */
long rt_dir_walk_fd(int fd, rt_dir_fn cb, void *user);

/* Called once per entry whose name is a decimal number (a pid in /proc, a thread id in
 * PID/task); returning non-zero stops the walk. */
typedef int (*rt_id_fn)(void *user, int64_t id);

/* As rt_dir_walk / rt_dir_walk_fd, handing cb only the entries named by a number, as that
 * number. Returns the number of entries read (numbered or not), or -errno as rt_dir_walk. */
long rt_dir_walk_ids(int dirfd, const char *path, rt_id_fn cb, void *user);
long rt_dir_walk_ids_fd(int fd, rt_id_fn cb, void *user);

/* The number of entries of dirfd/path named by a number (of the proc root: every process), or
 * -1 when it cannot be listed. */
int64_t rt_dir_count_ids(int dirfd, const char *path);
/* As rt_dir_count_ids over an open directory fd (kept open, walked from its start). */
int64_t rt_dir_count_ids_fd(int fd);

#endif
