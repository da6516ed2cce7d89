/* fuzz_nvml.c - libFuzzer target for the strings NVML gives that the tracker reads: the PCI bus
 * id (rt_nvml_norm_bus_id) and the names, UUIDs, serials and driver versions (rt_nvml_text),
 * each handed over as a fixed buffer that NVML may leave without a NUL. Any input must give a
 * terminated string within its bounds, without control bytes, and a normalised bus id must be
 * in the form sysfs uses. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/nvml.h"

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* Whether s is DOMAIN:BB:DD.F in lowercase hex, the domain 4 to 8 digits. */
static bool sysfs_form(const char *s)
{
    size_t n = 0;
    while (is_hex(s[n]))
        n++;
    if (n < 4 || n > 8 || s[n] != ':')
        return false;
    s += n + 1;
    return is_hex(s[0]) && is_hex(s[1]) && s[2] == ':' && is_hex(s[3]) && is_hex(s[4]) && s[5] == '.' && is_hex(s[6]) &&
           s[7] == '\0';
}

/* out holds a terminated string of at most cap - 1 bytes (and at most len), none a control byte. */
static void check_text(const char *out, size_t cap, size_t len)
{
    size_t n = strnlen(out, cap);
    if (n == cap || n > len)
        abort();
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* as NVML fills them: exactly size bytes, not NUL-terminated */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    static const size_t caps[] = {1, 2, 8, 13, 64};
    for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
        char out[64];
        size_t cap = caps[k];
        if (rt_nvml_norm_bus_id(buf, size, out, cap)) {
            if (!sysfs_form(out))
                abort();
        } else {
            check_text(out, cap, size);
        }
        size_t n = rt_nvml_text(buf, size, out, cap);
        check_text(out, cap, size);
        if (n != strlen(out))
            abort();
    }
    free(buf);
    return 0;
}
