/* fuzz_host.c - libFuzzer target for the host-fact parsers (/proc/cpuinfo's CPU model,
 * os-release's PRETTY_NAME, /proc/net/route's default interface): any input is parsed or
 * rejected without a crash or a read past its end, and out is always a terminated string. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/sources.h"

static void check(bool found, const char *out, size_t cap)
{
    size_t n = strnlen(out, cap);
    if (n == cap || (!found && n != 0))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* parsers get exactly the bytes read: not NUL-terminated at size */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    char out[256], small[17];
    check(rt_cpuinfo_model_parse(buf, size, out, sizeof out), out, sizeof out);
    check(rt_os_release_parse(buf, size, out, sizeof out), out, sizeof out);
    check(rt_os_release_parse(buf, size, small, sizeof small), small, sizeof small);
    check(rt_net_route_default_parse(buf, size, small, sizeof small), small, sizeof small);
    check(rt_net_route_default_parse(buf, size, out, 1), out, 1);
    free(buf);
    return 0;
}
