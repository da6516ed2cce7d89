/* unit.h - common includes for the cmocka unit tests, plus a helper to read fixture files.
 * Include it first: it asks for the GNU extensions (mkdtemp, usleep). */
#ifndef RT_UNIT_H
#define RT_UNIT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif
