/* fuzz_keeper.c - libFuzzer target for the Keeper reply parsers (analysis/keeper.h): any body is
 * read or rejected without a crash, leak or read past its end; a server kept fits the
 * recommendation, has a price and terminated, bounded strings; a price kept is a real one. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/keeper.h"

static void check_str(const char *s, size_t cap, bool nonempty)
{
    size_t n = strnlen(s, cap);
    if (n == cap || (nonempty && n == 0))
        abort();
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1); /* exactly size bytes: no NUL after them */
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    /* the recommendation comes from the first bytes, so the fit check is fuzzed too */
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    rec.cpu = size > 0 ? data[0] % 8 + 1 : 1;
    rec.memory_mib = size > 1 ? (int64_t)data[1] * 128 : 128;
    rec.gpu = size > 2 ? data[2] % 3 : 0;
    rec.vram_mib = rec.gpu ? (int64_t)(size > 3 ? data[3] : 0) * 256 : 0;
    const rt_recommendation *recs[2] = {&rec, NULL};
    for (int k = 0; k < 2; k++) {
        rt_server s = RT_SERVER_INIT;
        rt_error rc = rt_keeper_parse_servers(buf, size, recs[k], &s);
        if (rc != RT_OK && rc != RT_ERR_NOT_FOUND && rc != RT_ERR_PARSE)
            abort();
        if (rc == RT_OK) {
            check_str(s.vendor_id, sizeof s.vendor_id, true);
            check_str(s.api_reference, sizeof s.api_reference, true);
            check_str(s.display_name, sizeof s.display_name, false);
            if (s.struct_size != sizeof s || !(s.price_usd_per_hour >= 0) || !isfinite(s.price_usd_per_hour) ||
                !(s.memory_mib >= 0) || s.vcpus < 0)
                abort();
            if (recs[k] && (s.vcpus < rec.cpu || s.memory_mib < (double)rec.memory_mib ||
                            (rec.gpu > 0 && (s.gpu_count == RT_NULL_I64 || s.gpu_count < rec.gpu))))
                abort();
        }
    }
    const char *regions[2] = {NULL, "us-east-1"};
    for (int k = 0; k < 2; k++) {
        double p = -7;
        rt_error rc = rt_keeper_parse_prices(buf, size, regions[k], &p);
        if (rc == RT_OK ? !(p >= 0 && isfinite(p)) : (p != -7 || (rc != RT_ERR_NOT_FOUND && rc != RT_ERR_PARSE)))
            abort();
    }
    free(buf);
    return 0;
}
