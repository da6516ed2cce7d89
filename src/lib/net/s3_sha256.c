/* s3_sha256.c - the SHA-256 of an S3 payload (s3.h), from libcrypto.so.3 (opened with dlopen at
 * first use: libcurl has mapped it already); in the static build, from the target's libcrypto
 * through a loader helper (core/bridge.h), which runs this same file's dynamic branch. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../core/bridge.h"
#include "../core/dl.h"
#include "s3.h"

#define RT_CRYPTO_SONAME "libcrypto.so.3"

#ifdef RT_STATIC_BUILD
rt_error rt_s3_sha256_hex(const void *data, size_t len, char hex[65], char *err, size_t errlen)
{
    hex[0] = '\0';
    rt_wire q, a;
    rt_wire_init(&q);
    rt_wire_init(&a);
    rt_wire_put_i64(&q, RT_BRIDGE_SHA256);
    rt_wire_put_bytes(&q, len ? data : "", len);
    rt_error rc = RT_ERR_UNSUPPORTED;
    rt_bridge b;
    char why[256];
    if (rt_bridge_start(&b, why, sizeof why) < 0) {
        snprintf(err, errlen, "cannot load %s: %s", RT_CRYPTO_SONAME, why);
    } else {
        if (rt_bridge_call(&b, &q, &a, rt_mono_secs() + 60, NULL, why, sizeof why) < 0) {
            snprintf(err, errlen, "SHA-256 through the helper failed: %s", why);
        } else {
            int64_t r = rt_wire_get_i64(&a);
            size_t n;
            const char *text = rt_wire_get_bytes(&a, &n);
            if (a.bad || !text)
                snprintf(err, errlen, "the helper's SHA-256 answer is malformed");
            else if (r != RT_OK)
                snprintf(err, errlen, "%s", text);
            else if (n == 64)
                memcpy(hex, text, 65), rc = RT_OK;
            else
                snprintf(err, errlen, "the helper's SHA-256 answer is malformed");
        }
        rt_bridge_stop(&b);
    }
    rt_wire_free(&q);
    rt_wire_free(&a);
    return rc;
}
#else
/* The libcrypto functions used (OpenSSL 3), typed without OpenSSL's headers. */
typedef struct crypto_api {
    int (*digest)(const void *, size_t, unsigned char *, unsigned int *, const void *, void *); /* EVP_Digest */
    const void *(*sha256)(void);                                                                /* EVP_sha256 */
} crypto_api;

static struct {
    pthread_once_t once;
    void *dl;
    crypto_api api;
    char err[256];
} crypto = {.once = PTHREAD_ONCE_INIT};

static void crypto_load_once(void)
{
    static const rt_dl_sym syms[] = {{"EVP_Digest", offsetof(crypto_api, digest)},
                                     {"EVP_sha256", offsetof(crypto_api, sha256)}};
    crypto.dl = rt_dl_load(RT_CRYPTO_SONAME, syms, RT_ARRAY_LEN(syms), &crypto.api, crypto.err, sizeof crypto.err);
}

rt_error rt_s3_sha256_hex(const void *data, size_t len, char hex[65], char *err, size_t errlen)
{
    hex[0] = '\0';
    pthread_once(&crypto.once, crypto_load_once);
    if (!crypto.dl) {
        snprintf(err, errlen, "cannot load %s (%s)", RT_CRYPTO_SONAME, crypto.err);
        return RT_ERR_UNSUPPORTED;
    }
    unsigned char md[32];
    unsigned int mdlen = 0;
    static const unsigned char none = 0;
    if (crypto.api.digest(len ? data : &none, len, md, &mdlen, crypto.api.sha256(), NULL) != 1 || mdlen != 32) {
        snprintf(err, errlen, "SHA-256 failed in %s", RT_CRYPTO_SONAME);
        return RT_ERR_UNSUPPORTED;
    }
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
    return RT_OK;
}
#endif
