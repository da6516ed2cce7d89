/* unit.h - common includes for the cmocka unit tests, plus helpers to read fixture files and
 * to build fake proc trees in temp dirs. Include it first: it asks for the GNU extensions
 * (mkdtemp, usleep). */
#ifndef RT_UNIT_H
#define RT_UNIT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* Reads RT_FIXTURES/rel into a static buffer; fails the test when missing. */
static inline const char *fixture_text(const char *rel, size_t *len)
{
    static char buf[1 << 16];
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", RT_FIXTURES, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("missing fixture %s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Makes a fresh temp dir from tmpl (ending in XXXXXX, rewritten in place). */
static inline void unit_tmpdir(char *tmpl)
{
    if (!mkdtemp(tmpl))
        fail_msg("mkdtemp %s failed", tmpl);
}

/* Writes text to dir/rel, making the folders on the way. An existing file is rewritten in
 * place (same inode), as a kernel file changes under a descriptor the library keeps open. */
static inline void unit_put(const char *dir, const char *rel, const char *text)
{
    char path[2048];
    if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path)
        fail_msg("path too long: %s/%s", dir, rel);
    for (char *s = path + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        fail_msg("cannot write %s", path);
    size_t n = strlen(text);
    if (write(fd, text, n) != (ssize_t)n)
        fail_msg("short write to %s", path);
    close(fd);
}

/* Runs the shell command cmd; fails the test if it fails. */
static inline void unit_system(const char *cmd)
{
    if (system(cmd) != 0)
        fail_msg("failed: %s", cmd);
}

/* Removes dir and everything under it. */
static inline void unit_rmtree(const char *dir)
{
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    unit_system(cmd);
}

/* Copies the fixture folder RT_FIXTURES/rel (e.g. "awkward/proc") to dst, which must not exist. */
static inline void unit_copy_fixture(const char *rel, const char *dst)
{
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "cp -a '%s/%s' '%s'", RT_FIXTURES, rel, dst);
    unit_system(cmd);
}

/* The proctree fixture (a bash, a python3 101 and its children) copied to a new folder
 * /tmp/NAME-XXXXXX (its path into dir) as dir/proc (into proc), for a test that rewrites its
 * counters in place (unit_proctree_counters). */
static inline void unit_proctree_copy(const char *name, char *dir, size_t dir_cap, char *proc, size_t proc_cap)
{
    snprintf(dir, dir_cap, "/tmp/%s-XXXXXX", name);
    unit_tmpdir(dir);
    snprintf(proc, proc_cap, "%s/proc", dir);
    unit_copy_fixture("proctree/proc", proc);
}

/* Rewrites the copy's /proc/stat (one core: busy and idle ticks) and, unless tree_gone,
 * 101's stat with utime and stime ticks. */
static inline void unit_proctree_counters(const char *proc, unsigned long busy, unsigned long idle, unsigned long ut101,
                                          unsigned long st101, bool tree_gone)
{
    char text[512];
    snprintf(text, sizeof text, "cpu  %lu 0 0 %lu 0 0 0 0\ncpu0 %lu 0 0 %lu 0 0 0 0\nprocs_running 2\n", busy, idle,
             busy, idle);
    unit_put(proc, "stat", text);
    if (tree_gone)
        return;
    snprintf(text, sizeof text,
             "101 (python3) S 100 101 101 0 -1 4194560 100 0 0 0 %lu %lu 0 0 20 0 2 0 5010 12345678 5000 "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
             ut101, st101);
    unit_put(proc, "101/stat", text);
}

/* The fixture case name's roots for a replay: its proc tree copied to proc_dst (unless
 * already there, to be rewritten in place by the test) and its captured sys root's path. */
static inline void unit_case_roots(const char *name, const char *proc_dst, char *sys, size_t cap)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s/proc", name);
    if (access(proc_dst, F_OK) != 0)
        unit_copy_fixture(rel, proc_dst);
    snprintf(sys, cap, "%s/%s/sys", RT_FIXTURES, name);
}

/* A heap copy of s without its terminating NUL (ASan sees any read past the end); the
 * previous copy is freed, and unit_body(NULL, NULL) frees the last one. */
static inline const char *unit_body(const char *s, size_t *len)
{
    static char *held;
    free(held);
    held = NULL;
    if (len)
        *len = 0;
    if (!s)
        return NULL;
    *len = strlen(s);
    held = malloc(*len ? *len : 1);
    assert_non_null(held);
    memcpy(held, s, *len);
    return held;
}

#endif
