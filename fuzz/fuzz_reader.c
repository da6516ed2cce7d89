/* fuzz_reader.c - libFuzzer target for the reader of recorded runs: the JSON scanner must
 * agree with jansson (when the scanner accepts a line, jansson accepts it and every figure is
 * the same; when jansson rejects, so does the scanner), and any input read as a whole file
 * (JSON lines or any of the CSV formats) yields records or counted skips, never a crash. */
#define _GNU_SOURCE /* locale_t, newlocale */
#include <locale.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resource_tracker.h"
#include "../tests/unit/jline_oracle.h"

static rt_jline a, b;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static locale_t loc;
    if (!loc)
        loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    /* the input exactly as given, not NUL-terminated: a read past its end is a finding */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    const char *bad = rt_jline_scan(buf, size, loc, &a);
    int o = oracle_jline(buf, size, &b);
    if (!bad && o != 0) {
        fprintf(stderr, "scanner accepts what jansson does not (%d)\n", o);
        abort();
    }
    if (!bad && jline_diff(&a, &b)) {
        fprintf(stderr, "scanner and jansson differ in %s\n", jline_diff(&a, &b));
        abort();
    }
    rt_reader *r;
    if (rt_reader_open_buffer("fuzz", buf, size, NULL, &r) == RT_OK) {
        const rt_record *rec;
        uint64_t n = 0;
        while (rt_reader_next(r, &rec) == RT_OK && rec)
            n++;
        if (n != rt_reader_records(r))
            abort();
        rt_reader_close(r);
    }
    free(buf);
    return 0;
}
