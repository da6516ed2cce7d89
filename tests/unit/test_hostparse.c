/* test_hostparse.c - the host-fact parsers: the CPU model of /proc/cpuinfo, PRETTY_NAME of
 * os-release and the default route's interface in /proc/net/route. */
#include "unit.h"

#include "source/sources.h"

/* The parsers get exactly the bytes: a copy without a terminating NUL, so ASan sees any read
 * past the end. */
static char *bytes(const char *s, size_t *len)
{
    *len = strlen(s);
    char *b = malloc(*len ? *len : 1);
    assert_non_null(b);
    memcpy(b, s, *len);
    return b;
}

typedef bool (*host_parser)(const char *, size_t, char *, size_t);

/* Runs parse over text; returns whether it found a value, with that value in out. */
static bool run(host_parser parse, const char *text, char *out, size_t cap)
{
    size_t n;
    char *b = bytes(text, &n);
    bool ok = parse(b, n, out, cap);
    free(b);
    return ok;
}

static void cpuinfo_shapes(void **state)
{
    (void)state;
    char out[256];
    /* x86: "model name", with a tab before the colon */
    assert_true(run(rt_cpuinfo_model_parse,
                    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
                    "model name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz  \nstepping\t: 4\n\n"
                    "processor\t: 1\nmodel name\t: second\n",
                    out, sizeof out));
    assert_string_equal(out, "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz");
    /* arm (Raspberry Pi): both Hardware and Model; Model comes first in the order of keys */
    assert_true(run(rt_cpuinfo_model_parse,
                    "processor\t: 0\nBogoMIPS\t: 108.00\nCPU part\t: 0xd08\n\nHardware\t: BCM2835\n"
                    "Revision\t: c03111\nModel\t\t: Raspberry Pi 4 Model B Rev 1.1\n",
                    out, sizeof out));
    assert_string_equal(out, "Raspberry Pi 4 Model B Rev 1.1");
    /* older arm: only Hardware */
    assert_true(run(rt_cpuinfo_model_parse, "Processor\t: ARMv7 Processor rev 4 (v7l)\nHardware\t: BCM2709\n", out,
                    sizeof out));
    assert_string_equal(out, "BCM2709");
    /* s390: "cpu model" (and "model" alone is not a key) */
    assert_true(run(rt_cpuinfo_model_parse, "vendor_id       : IBM/S390\nmodel           : 2964\ncpu model       : 2964",
                    out, sizeof out));
    assert_string_equal(out, "2964");
    /* an empty "model name" gives way to the next key; a last line without a newline */
    assert_true(run(rt_cpuinfo_model_parse, "model name\t:   \nHardware\t: Generic DT", out, sizeof out));
    assert_string_equal(out, "Generic DT");
    /* nothing known */
    assert_false(run(rt_cpuinfo_model_parse, "processor\t: 0\nflags\t: fpu vme\nmodel name without colon\n", out,
                     sizeof out));
    assert_string_equal(out, "");
    assert_false(run(rt_cpuinfo_model_parse, "", out, sizeof out));
    assert_false(rt_cpuinfo_model_parse(NULL, 0, out, sizeof out));
    /* a long model is cut to the buffer */
    char small[8];
    assert_true(run(rt_cpuinfo_model_parse, "model name : ABCDEFGHIJ", small, sizeof small));
    assert_string_equal(small, "ABCDEFG");
}

static void os_release(void **state)
{
    (void)state;
    char out[128];
    assert_true(run(rt_os_release_parse,
                    "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n", out,
                    sizeof out));
    assert_string_equal(out, "Debian GNU/Linux 12 (bookworm)");
    assert_true(run(rt_os_release_parse, "ID=alpine\nPRETTY_NAME='Alpine Linux v3.19'", out, sizeof out));
    assert_string_equal(out, "Alpine Linux v3.19");
    assert_true(run(rt_os_release_parse, "PRETTY_NAME=Fedora Linux 40\n", out, sizeof out));
    assert_string_equal(out, "Fedora Linux 40");
    /* only an opening quote: it goes, the rest stays */
    assert_true(run(rt_os_release_parse, "PRETTY_NAME=\"Unclosed\n", out, sizeof out));
    assert_string_equal(out, "Unclosed");
    /* a bare PRETTY_NAME= is skipped for a later one; a key with a longer name is not it */
    assert_true(run(rt_os_release_parse, "PRETTY_NAME_X=no\nPRETTY_NAME=\nPRETTY_NAME=\"Later\"\n", out, sizeof out));
    assert_string_equal(out, "Later");
    /* missing */
    assert_false(run(rt_os_release_parse, "NAME=\"Debian GNU/Linux\"\nID=debian\n", out, sizeof out));
    assert_string_equal(out, "");
    assert_false(run(rt_os_release_parse, "", out, sizeof out));
    assert_false(rt_os_release_parse(NULL, 0, out, sizeof out));
    /* cut to the buffer */
    char small[7];
    assert_true(run(rt_os_release_parse, "PRETTY_NAME=\"Ubuntu 24.04 LTS\"", small, sizeof small));
    assert_string_equal(small, "Ubuntu");
}

#define ROUTE_HEAD "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"

static void net_route(void **state)
{
    (void)state;
    char out[17];
    /* the default route is not the first line */
    assert_true(run(rt_net_route_default_parse,
                    ROUTE_HEAD "wlan0\t0000A8C0\t00000000\t0001\t0\t0\t600\t00FFFFFF\t0\t0\t0\n"
                               "enp3s0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n",
                    out, sizeof out));
    assert_string_equal(out, "enp3s0");
    /* a default route that is down (no RTF_UP) is passed over for the one that is up */
    assert_true(run(rt_net_route_default_parse,
                    ROUTE_HEAD "docker0\t00000000\t010011AC\t0002\t0\t0\t0\t00000000\t0\t0\t0\n"
                               "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0",
                    out, sizeof out));
    assert_string_equal(out, "eth0");
    /* the kernel pads lines with spaces; flags as 0x hex or lower case */
    assert_true(run(rt_net_route_default_parse,
                    ROUTE_HEAD "eth1\t00000000\t010200C0\t0x000b\t0\t0\t0\t00000000\t0\t0\t0          \n", out,
                    sizeof out));
    assert_string_equal(out, "eth1");
    /* no default route; only a down one; too few columns */
    assert_false(run(rt_net_route_default_parse,
                     ROUTE_HEAD "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n", out, sizeof out));
    assert_string_equal(out, "");
    assert_false(run(rt_net_route_default_parse, ROUTE_HEAD "eth0\t00000000\t010200C0\t0002\n", out, sizeof out));
    assert_false(run(rt_net_route_default_parse, ROUTE_HEAD "eth0\t00000000\t010200C0\n", out, sizeof out));
    assert_false(run(rt_net_route_default_parse, ROUTE_HEAD "eth0\t00000000\t010200C0\tzz01\n", out, sizeof out));
    assert_false(run(rt_net_route_default_parse, "", out, sizeof out));
    assert_false(rt_net_route_default_parse(NULL, 0, out, sizeof out));
    /* a name too long for the buffer is not cut: no answer */
    assert_false(run(rt_net_route_default_parse, "averyveryverylongname 00000000 0 0001\n", out, sizeof out));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpuinfo_shapes),
        cmocka_unit_test(os_release),
        cmocka_unit_test(net_route),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
