/* hex.h - the value of one hexadecimal digit, shared by the TOML reader's escapes, the JSON
 * scanner's \u escapes and the OTEL_* lists' %XX (header-only, no state). */
#ifndef RT_HEX_H
#define RT_HEX_H

/* Returns 0-15 for '0'-'9', 'a'-'f', 'A'-'F', else -1 (any int, EOF included). */
static inline int rt_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
