/* fuzz_phase_line.c - libFuzzer target for the phase protocol's line parser (parse.c): any bytes
 * are taken or refused without a crash or a read past their end; a line taken has a verb, and
 * its name lies within the input, passes the one rule for names, and ends before the first TAB. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "phase/parse.h"
#include "phase/phase.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the parser gets exactly the bytes read: not NUL-terminated at size */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    rt_phase_line pl;
    int r = rt_phase_parse_line(buf, size, &pl);
    if (r == 0) {
        if ((pl.kind != RT_PHASE_START && pl.kind != RT_PHASE_STOP) || pl.name < buf ||
            pl.name + pl.name_len > buf + size || !rt_phase_name_ok(pl.name, pl.name_len) ||
            memchr(pl.name, '\t', pl.name_len) || size > RT_PHASE_LINE_MAX)
            abort();
    } else if (r != RT_PHASE_REFUSED_MALFORMED && r != RT_PHASE_REFUSED_TOO_LONG) {
        abort();
    }
    free(buf);
    return 0;
}
