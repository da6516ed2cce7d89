/* nvml_text.c - the pure parsers of the strings NVML gives in fixed buffers it may leave without
 * a NUL (see nvml.h): any such string made printable, and the PCI bus id in the sysfs form. */
#include <stdio.h>

#include "nvml.h"

size_t rt_nvml_text(const char *in, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    while (n < len && in[n] != '\0' && n + 1 < cap) {
        unsigned char c = (unsigned char)in[n];
        out[n] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        n++;
    }
    out[n] = '\0';
    return n;
}

/* Reads up to max hex digits at in[*at..len) into *v. Returns whether there was at least one. */
static bool hex_field(const char *in, size_t len, size_t *at, int max, unsigned *v)
{
    int k = 0;
    *v = 0;
    while (*at < len && k < max) {
        char c = in[*at];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            break;
        *v = *v << 4 | d;
        (*at)++;
        k++;
    }
    return k > 0;
}

bool rt_nvml_norm_bus_id(const char *in, size_t len, char *out, size_t cap)
{
    /* domain:bus:device.function, hex: at most 8, 2, 2 and 1 digits, nothing after */
    static const struct {
        int digits;
        char after;
    } field[4] = {{8, ':'}, {2, ':'}, {2, '.'}, {1, '\0'}};
    unsigned v[4];
    size_t at = 0;
    bool ok = true;
    for (int f = 0; f < 4 && ok; f++) {
        ok = hex_field(in, len, &at, field[f].digits, &v[f]);
        if (ok && field[f].after)
            ok = at < len && in[at++] == field[f].after;
        else if (ok)
            ok = at == len || in[at] == '\0';
    }
    if (ok) {
        int n = snprintf(out, cap, "%04x:%02x:%02x.%x", v[0], v[1], v[2], v[3]);
        if (n > 0 && (size_t)n < cap)
            return true;
    }
    rt_nvml_text(in, len, out, cap);
    return false;
}
