/* fuzz_cloud.c - libFuzzer target for every cloud vendor's metadata reply parser (cloud.h):
 * any body is read or rejected without a crash, leak or read past its end, and whatever is
 * kept is a terminated identifier. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/cloud.h"

/* "" or 1 to 100 characters of letters, digits and "-_.:/" */
static void check_ident(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n == cap || n > 100)
        abort();
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("-_.:/", s[i]))
            abort();
}

static void check(const rt_cloud_facts *f)
{
    check_ident(f->account, sizeof f->account);
    check_ident(f->region, sizeof f->region);
    check_ident(f->zone, sizeof f->zone);
    check_ident(f->type, sizeof f->type);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a reply body is exactly its bytes: not NUL-terminated at size */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    bool (*const facts[])(const char *, size_t, rt_cloud_facts *) = {
        rt_cloud_aws_identity_parse, rt_cloud_gcp_zone_parse, rt_cloud_azure_parse,  rt_cloud_alicloud_region_parse,
        rt_cloud_hcloud_parse,       rt_cloud_upcloud_parse,  rt_cloud_vultr_parse, rt_cloud_ovh_meta_parse};
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        rt_cloud_facts f;
        memset(&f, 0, sizeof f);
        facts[i](buf, size, &f);
        check(&f);
    }
    char out[128] = "";
    rt_cloud_text_parse(buf, size, out, sizeof out);
    check_ident(out, sizeof out);
    rt_cloud_gcp_machine_type_parse(buf, size, out, sizeof out);
    check_ident(out, sizeof out);
    rt_cloud_aws_domain_parse(buf, size);
    rt_cloud_ovh_network_parse(buf, size);
    free(buf);
    return 0;
}
