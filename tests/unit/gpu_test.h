/* gpu_test.h - helpers shared by the GPU unit tests (test_drm, test_nvml, test_gpu): the
 * AMD/Intel fixture's roots, a device's detail by key, a small file written whole. */
#ifndef RT_GPU_TEST_H
#define RT_GPU_TEST_H

#include "unit.h"

#include "source/gpu.h"

/* Opens the roots of tests/fixtures/gpu-amd-intel; with_sys false leaves the sys root out
 * (sys_fd -1), as on a machine without /sys. Fails the test when they do not open. */
static inline void gpu_fixture_roots(rt_roots *r, bool with_sys)
{
    char p[1024], s[1024];
    snprintf(p, sizeof p, "%s/gpu-amd-intel/proc", RT_FIXTURES);
    snprintf(s, sizeof s, "%s/gpu-amd-intel/%s", RT_FIXTURES, with_sys ? "sys" : "no-such-sys");
    assert_int_equal(rt_roots_open(r, p, s), RT_OK);
}

/* The value of g's detail key, or NULL when it has none. */
static inline const char *gpu_detail(const rt_gpu *g, const char *key)
{
    for (size_t i = 0; i < g->detail_count; i++)
        if (strcmp(g->detail[i].key, key) == 0)
            return g->detail[i].value;
    return NULL;
}

/* Writes text as the whole content of the file at path; fails the test when it cannot. */
static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif
