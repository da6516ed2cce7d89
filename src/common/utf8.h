/* utf8.h - one UTF-8 decoder shared by the library's JSON writer and the tool's TOML reader
 * (header-only, no state): the length of a well-formed sequence, or 0. */
#ifndef RT_UTF8_H
#define RT_UTF8_H

#include <stddef.h>

/* Returns the length (1-4) of the UTF-8 sequence at s, which has n bytes left, or 0 when it is
 * not well-formed: overlong forms, surrogates (U+D800-DFFF) and values past U+10FFFF are not. */
static inline size_t rt_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return len;
}

#endif
