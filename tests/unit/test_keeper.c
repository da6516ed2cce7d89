/* test_keeper.c - the Keeper lookup's pure parts (analysis/keeper.h): the GB values and query it
 * sends, its reply parsers (real shapes, garbage, hostile strings), the URL escaper and loader
 * of net/curl.h, and the lookups' argument checks and failure on a closed port. */
#include "unit.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "analysis/keeper.h"
#include "net/curl.h"

#define body unit_body

static rt_recommendation rec_of(int64_t cpu, int64_t mem, int64_t gpu, int64_t vram)
{
    rt_recommendation r = RT_RECOMMENDATION_INIT;
    r.cpu = cpu;
    r.memory_mib = mem;
    r.gpu = gpu;
    r.vram_mib = vram;
    r.runs = 1;
    return r;
}

static void gb_values(void **state)
{
    (void)state;
    char b[32];
    const struct {
        int64_t mib;
        const char *gb;
    } cases[] = {{3072, "3"},   {1536, "1.5"},      {128, "0.125"},   {256, "0.25"}, {0, "0"},
                 {1, "0.0009765625"}, {1025, "1.0009765625"}, {1048576, "1024"}, {2047, "1.9990234375"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_true(rt_keeper_gb(cases[i].mib, b, sizeof b));
        assert_string_equal(b, cases[i].gb);
        assert_true(fabs(strtod(b, NULL) * 1024 - (double)cases[i].mib) < 1e-9); /* exact */
    }
    assert_false(rt_keeper_gb(-1, b, sizeof b));
    assert_false(rt_keeper_gb(1536, b, 3)); /* "1.5" needs 4 bytes */
    assert_string_equal(b, "");
    assert_true(rt_keeper_gb(1536, b, 4));
    assert_true(rt_keeper_gb(INT64_MAX, b, sizeof b));
}

static void servers_url(void **state)
{
    (void)state;
    char u[1024];
    rt_recommendation r = rec_of(2, 3072, 0, 0);
    assert_true(rt_keeper_servers_url("http://127.0.0.1:8080/", &r, u, sizeof u));
    assert_string_equal(u, "http://127.0.0.1:8080/servers?vcpus_min=2&memory_min=3"
                           "&order_by=min_price_ondemand&order_dir=asc&limit=10");
    r = rec_of(8, 1536, 2, 40960);
    assert_true(rt_keeper_servers_url("https://keeper.sparecores.net", &r, u, sizeof u));
    assert_string_equal(u, "https://keeper.sparecores.net/servers?vcpus_min=8&memory_min=1.5&gpu_min=2"
                           "&gpu_memory_total=40&order_by=min_price_ondemand&order_dir=asc&limit=10");
    /* 0.19: the GPU ask's memory of each GPU, and that times the GPUs asked as the total */
    r.vram_per_gpu_mib = 40960;
    assert_true(rt_keeper_servers_url("http://k", &r, u, sizeof u));
    assert_non_null(strstr(u, "&gpu_min=2&gpu_memory_min=40&gpu_memory_total=80&order_by"));
    r.gpu = 1;
    r.vram_per_gpu_mib = 46068; /* an L40S: 44.98828125 GiB, exactly */
    assert_true(rt_keeper_servers_url("http://k", &r, u, sizeof u));
    assert_non_null(strstr(u, "&gpu_min=1&gpu_memory_min=44.98828125&gpu_memory_total=44.98828125&order_by"));
    r = rec_of(1, 128, 1, 0); /* a GPU without a VRAM figure: no gpu_memory_total */
    assert_true(rt_keeper_servers_url("http://k", &r, u, sizeof u));
    assert_non_null(strstr(u, "&gpu_min=1&order_by"));
    assert_non_null(strstr(u, "memory_min=0.125&"));
    r = rec_of(0, 128, 0, 0);
    assert_false(rt_keeper_servers_url("http://k", &r, u, sizeof u));
    r = rec_of(1, 128, 0, 0);
    assert_false(rt_keeper_servers_url("http://k", &r, u, 40)); /* too small */
    assert_string_equal(u, "");
    assert_false(rt_keeper_servers_url(NULL, &r, u, sizeof u));
    assert_false(rt_keeper_servers_url("http://k", NULL, u, sizeof u));
}

#define SRV(vendor, type, name, vcpus, mem, gpus, price)                                                            \
    "{\"vendor_id\":\"" vendor "\",\"server_id\":\"" type "\",\"api_reference\":\"" type "\",\"display_name\":\"" name \
    "\",\"vcpus\":" #vcpus ",\"memory_amount\":" #mem ",\"gpu_count\":" #gpus ",\"min_price_ondemand\":" price     \
    ",\"vendor\":{\"vendor_id\":\"" vendor "\"}}"

static rt_error servers(const char *json, const rt_recommendation *rec, rt_server *out)
{
    size_t n;
    const char *b = body(json, &n);
    rt_server s = RT_SERVER_INIT;
    *out = s;
    return rt_keeper_parse_servers(b, n, rec, out);
}

static void parse_servers_real(void **state)
{
    (void)state;
    rt_server s;
    rt_recommendation r = rec_of(2, 3072, 0, 0);
    const char *list = "[" SRV("hcloud", "cx22", "CX22", 2, 4096, 0, "0.006") ","
                       SRV("aws", "t3a.medium", "t3a.medium", 2, 4096, 0, "0.0376") ","
                       SRV("gcp", "e2-medium", "e2-medium", 2, 4096, 0.0, "0.0335") "]";
    assert_int_equal(servers(list, &r, &s), RT_OK);
    assert_int_equal(s.struct_size, sizeof s);
    assert_string_equal(s.vendor_id, "hcloud");
    assert_string_equal(s.api_reference, "cx22");
    assert_string_equal(s.display_name, "CX22");
    assert_int_equal(s.vcpus, 2);
    assert_true(s.memory_mib == 4096);
    assert_int_equal(s.gpu_count, 0);
    assert_true(fabs(s.price_usd_per_hour - 0.006) < 1e-12);

    /* not in price order: the cheapest still wins; one without a price is passed over */
    list = "[" SRV("aws", "m5.large", "m5.large", 2, 8192, 0, "0.096") ","
           SRV("aws", "t3.medium", "t3.medium", 2, 4096, 0, "0.0416") ","
           SRV("x", "free", "free", 2, 4096, 0, "null") "]";
    assert_int_equal(servers(list, &r, &s), RT_OK);
    assert_string_equal(s.api_reference, "t3.medium");

    /* entries that do not fit (a Keeper that ignored the filter) are passed over */
    r = rec_of(4, 16384, 1, 16384);
    list = "[" SRV("a", "small", "s", 2, 16384, 1, "0.1") "," SRV("a", "lowmem", "l", 4, 8192, 1, "0.1") ","
           SRV("a", "nogpu", "n", 4, 16384, 0, "0.1") ","
           "{\"vendor_id\":\"a\",\"api_reference\":\"lowvram\",\"vcpus\":4,\"memory_amount\":16384,"
           "\"gpu_count\":1,\"gpu_memory_total\":8192,\"min_price_ondemand\":0.2},"
           "{\"vendor_id\":\"aws\",\"api_reference\":\"g4dn.xlarge\",\"vcpus\":4,\"memory_amount\":16384,"
           "\"gpu_count\":1,\"gpu_memory_total\":16384,\"min_price_ondemand\":0.526}]";
    assert_int_equal(servers(list, &r, &s), RT_OK);
    assert_string_equal(s.api_reference, "g4dn.xlarge");
    assert_string_equal(s.display_name, ""); /* none given */
    assert_string_equal(s.cpu_model, "");    /* none given (0.15) */
    assert_int_equal(s.gpu_count, 1);
    /* 0.19: each GPU's memory asked: a server of two small GPUs is passed over, though its total
     * is enough */
    r = rec_of(4, 16384, 1, 0);
    r.vram_per_gpu_mib = 40960;
    list = "[{\"vendor_id\":\"a\",\"api_reference\":\"twosmall\",\"vcpus\":4,\"memory_amount\":16384,"
           "\"gpu_count\":2,\"gpu_memory_min\":24576,\"gpu_memory_total\":49152,\"min_price_ondemand\":0.2},"
           "{\"vendor_id\":\"gcp\",\"api_reference\":\"a2-highgpu-1g\",\"vcpus\":12,\"memory_amount\":87040,"
           "\"gpu_count\":1,\"gpu_memory_min\":40960,\"gpu_memory_total\":40960,\"min_price_ondemand\":3.67}]";
    assert_int_equal(servers(list, &r, &s), RT_OK);
    assert_string_equal(s.api_reference, "a2-highgpu-1g");

    /* the primary CPU as Keeper names it (0.15); null as "" */
    r = rec_of(2, 3072, 0, 0);
    list = "[{\"vendor_id\":\"aws\",\"api_reference\":\"m6i.large\",\"vcpus\":2,\"memory_amount\":8192,"
           "\"cpu_manufacturer\":\"Intel\",\"cpu_family\":\"Xeon\",\"cpu_model\":\"8375C\",\"min_price_ondemand\":0.096},"
           "{\"vendor_id\":\"hcloud\",\"api_reference\":\"cx22\",\"vcpus\":2,\"memory_amount\":4096,"
           "\"cpu_manufacturer\":\"Intel\",\"cpu_family\":null,\"cpu_model\":null,\"min_price_ondemand\":0.1}]";
    assert_int_equal(servers(list, &r, &s), RT_OK);
    assert_string_equal(s.cpu_manufacturer, "Intel");
    assert_string_equal(s.cpu_family, "Xeon");
    assert_string_equal(s.cpu_model, "8375C");
    rt_server_energy e = RT_SERVER_ENERGY_INIT;
    /* 265 W / 64 threads: 4.140625 W busy, 1.2421875 W idle; 60 s on 2 vCPUs with 30 CPU seconds */
    assert_int_equal(rt_server_energy_estimate(&s, 30, 60, &e), RT_OK);
    assert_true(fabs(e.energy_joules - (60 * 2 * 1.2421875 + 30 * (4.140625 - 1.2421875))) < 1e-9);
    assert_string_equal(e.method, "estimated");
    assert_string_equal(e.words, "estimated: Intel Xeon 8375C, 265 W TDP / 64 threads");
    assert_int_equal(rt_server_energy_estimate(&s, NAN, 60, &e), RT_ERR_NOT_FOUND); /* CPU time unknown */
    assert_true(isnan(e.energy_joules) && e.method == NULL);
    assert_int_equal(rt_server_energy_estimate(&s, 30, 0, &e), RT_ERR_NOT_FOUND);
    list = "[{\"vendor_id\":\"hcloud\",\"api_reference\":\"cx22\",\"vcpus\":2,\"memory_amount\":4096,"
           "\"cpu_manufacturer\":\"Intel\",\"cpu_family\":null,\"cpu_model\":null,\"min_price_ondemand\":0.1}]";
    assert_int_equal(servers(list, &r, &s), RT_OK);
    assert_string_equal(s.cpu_family, "");
    assert_string_equal(s.cpu_model, "");
    assert_int_equal(rt_server_energy_estimate(&s, 30, 60, &e), RT_ERR_NOT_FOUND); /* no model: not shown */
    assert_int_equal(rt_server_energy_estimate(NULL, 30, 60, &e), RT_ERR_INVALID);
    r = rec_of(4, 16384, 1, 16384);
    list = "[" SRV("a", "small", "s", 2, 16384, 1, "0.1") "]";
    assert_int_equal(servers(list, &r, &s), RT_ERR_NOT_FOUND);
    assert_int_equal(servers("[]", &r, &s), RT_ERR_NOT_FOUND);
    /* without a recommendation anything priced fits */
    assert_int_equal(servers(list, NULL, &s), RT_OK);
}

static void parse_servers_hostile(void **state)
{
    (void)state;
    rt_server s;
    rt_recommendation r = rec_of(1, 128, 0, 0);
    const char *junk[] = {"", "   ", "{}", "{\"vendor_id\":\"a\"}", "\"x\"", "null", "[1,2", "<html>502</html>",
                          "[1,\"a\",null,[]]", "[{\"vendor_id\":1,\"api_reference\":\"x\",\"vcpus\":1,\"memory_amount\":1}]",
                          "[{\"vendor_id\":\"a\",\"api_reference\":\"x\",\"vcpus\":\"2\",\"memory_amount\":1}]",
                          "[{\"vendor_id\":\"a\",\"api_reference\":\"x\",\"vcpus\":-2,\"memory_amount\":1}]",
                          "[{\"vendor_id\":\"a\",\"api_reference\":\"\",\"vcpus\":2,\"memory_amount\":1}]",
                          "[{\"vendor_id\":\"a b\",\"api_reference\":\"x\",\"vcpus\":2,\"memory_amount\":1}]",
                          "[{\"vendor_id\":\"a\",\"api_reference\":\"x\",\"vcpus\":1e300,\"memory_amount\":1}]"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        if (servers(junk[i], &r, &s) != RT_ERR_PARSE)
            fail_msg("took \"%s\"", junk[i]);
    assert_int_equal(rt_keeper_parse_servers(NULL, 0, &r, &s), RT_ERR_INVALID);
    const char *ok = "[{\"vendor_id\":\"a\",\"api_reference\":\"x\",\"vcpus\":1,\"memory_amount\":128,"
                     "\"min_price_ondemand\":0.01}]";
    size_t n;
    const char *b = body(ok, &n);
    assert_int_equal(rt_keeper_parse_servers(b, n, &r, NULL), RT_ERR_INVALID);
    assert_int_equal(servers(ok, &r, &s), RT_OK);
    assert_true(s.gpu_count == RT_NULL_I64); /* not said: null, not 0 */

    /* an identifier too long is skipped, never cut; a long name is cut at a character */
    char big[1200], name[300];
    memset(name, 0, sizeof name);
    for (size_t i = 0; i < 100; i++)
        memcpy(name + 2 * i, "\xc3\xa9", 2); /* 100 x "é": 200 bytes */
    snprintf(big, sizeof big,
             "[{\"vendor_id\":\"%0100d\",\"api_reference\":\"x\",\"vcpus\":1,\"memory_amount\":128,\"min_price_ondemand\":0.01},"
             "{\"vendor_id\":\"v\",\"api_reference\":\"y\",\"display_name\":\"%s\\u001b[31m\",\"vcpus\":1,"
             "\"memory_amount\":128,\"min_price_ondemand\":0.5}]",
             0, name);
    assert_int_equal(servers(big, &r, &s), RT_OK);
    assert_string_equal(s.vendor_id, "v");
    assert_int_equal(strlen(s.display_name), 126); /* 63 whole characters in 127 bytes */
    assert_int_equal(memcmp(s.display_name, name, 126), 0);
    snprintf(big, sizeof big,
             "[{\"vendor_id\":\"v\",\"api_reference\":\"y\",\"display_name\":\"a\\nb\\u001b[31m\",\"vcpus\":1,"
             "\"memory_amount\":128,\"min_price_ondemand\":0.5}]");
    assert_int_equal(servers(big, &r, &s), RT_OK);
    assert_string_equal(s.display_name, "a?b?[31m"); /* control characters shown as '?' */
}

static rt_error prices(const char *json, const char *region, double *p)
{
    size_t n;
    const char *b = body(json, &n);
    *p = -1;
    return rt_keeper_parse_prices(b, n, region, p);
}

#define PRICE(region, zone, alloc, os, price)                                                                      \
    "{\"vendor_id\":\"aws\",\"region_id\":\"" region "\",\"zone_id\":\"" zone "\",\"server_id\":\"t3.medium\","   \
    "\"operating_system\":\"" os "\",\"allocation\":\"" alloc "\",\"unit\":\"hour\",\"price\":" price               \
    ",\"currency\":\"USD\",\"status\":\"active\"}"

static void parse_prices(void **state)
{
    (void)state;
    double p;
    const char *list = "[" PRICE("us-east-1", "use1-az1", "ondemand", "Linux", "0.0416") ","
                       PRICE("us-east-1", "use1-az1", "spot", "Linux", "0.0125") ","
                       PRICE("eu-central-1", "euc1-az1", "ondemand", "Linux", "0.048") ","
                       PRICE("eu-central-1", "euc1-az2", "ondemand", "Linux", "0.047") ","
                       PRICE("ap-south-1", "aps1-az1", "ondemand", "Windows", "0.01") "]";
    assert_int_equal(prices(list, NULL, &p), RT_OK);
    assert_true(p == 0.0416);
    assert_int_equal(prices(list, "eu-central-1", &p), RT_OK);
    assert_true(p == 0.047);
    assert_int_equal(prices(list, "ap-south-1", &p), RT_ERR_NOT_FOUND); /* Windows only */
    assert_true(p == -1);
    assert_int_equal(prices("[]", NULL, &p), RT_ERR_NOT_FOUND);
    assert_int_equal(prices("[{\"allocation\":\"ondemand\",\"operating_system\":\"Linux\",\"price\":1,"
                            "\"currency\":\"EUR\"},{\"allocation\":\"ondemand\",\"operating_system\":\"Linux\","
                            "\"price\":\"2\"},{\"allocation\":\"ondemand\",\"operating_system\":\"Linux\",\"price\":-1}]",
                            NULL, &p),
                     RT_ERR_NOT_FOUND);
    assert_int_equal(prices("[{\"allocation\":\"ondemand\",\"operating_system\":\"Linux\",\"price\":2}, 7]", NULL, &p),
                     RT_OK);
    assert_true(p == 2);
    const char *junk[] = {"", "{}", "{\"detail\":\"Not Found\"}", "nan", "[", "\xff\xfe"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        assert_int_equal(prices(junk[i], NULL, &p), RT_ERR_PARSE);
    assert_int_equal(rt_keeper_parse_prices(NULL, 0, NULL, &p), RT_ERR_INVALID);
}

static void url_escape(void **state)
{
    (void)state;
    char b[64];
    assert_true(rt_url_escape("t3.medium", b, sizeof b));
    assert_string_equal(b, "t3.medium");
    assert_true(rt_url_escape("Standard_D2s v3/../x?y=1&z#é~", b, sizeof b));
    assert_string_equal(b, "Standard_D2s%20v3%2F..%2Fx%3Fy%3D1%26z%23%C3%A9~");
    assert_true(rt_url_escape("", b, sizeof b));
    assert_string_equal(b, "");
    assert_false(rt_url_escape("abc", b, 3));
    assert_string_equal(b, "");
    assert_true(rt_url_escape("abc", b, 4));
    assert_false(rt_url_escape("a/", b, 4)); /* "a%2F" needs 5 */
    assert_false(rt_url_escape(NULL, b, sizeof b));
}

static void loader(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(rt_fetch_probe("libcurl.so.4", err, sizeof err), RT_OK);
    assert_int_equal(rt_fetch_probe("libno-such-curl.so.9", err, sizeof err), RT_ERR_UNSUPPORTED);
    assert_non_null(strstr(err, "libno-such-curl.so.9"));
    assert_int_equal(rt_fetch_probe("libm.so.6", err, sizeof err), RT_ERR_UNSUPPORTED); /* no curl_* in it */
    assert_non_null(strstr(err, "curl_global_init"));
    assert_int_equal(rt_fetch_available(err, sizeof err), RT_OK);

    rt_fetch_request req = {.url = "ftp://127.0.0.1/x", .timeout_secs = 1, .max_body = 10};
    rt_fetch_reply rep;
    assert_int_equal(rt_fetch(&req, &rep, err, sizeof err), RT_ERR_INVALID);
    rt_fetch_reply_free(&rep);
    req.url = "http://127.0.0.1/";
    req.timeout_secs = 0;
    assert_int_equal(rt_fetch(&req, &rep, err, sizeof err), RT_ERR_INVALID);
    rt_fetch_reply_free(&rep);
    assert_int_equal(rt_fetch(NULL, &rep, err, sizeof err), RT_ERR_INVALID);
    rt_fetch_reply_free(&rep);
}

/* A port on 127.0.0.1 that nothing listens on: bound, then closed. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static int warnings;
static char last_warning[512];
static void on_log(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    if (level >= RT_LOG_WARN) {
        warnings++;
        snprintf(last_warning, sizeof last_warning, "%s", msg);
    }
}

static void lookups(void **state)
{
    (void)state;
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
    rt_keeper_options o = RT_KEEPER_OPTIONS_INIT;
    o.url = url;
    o.log = on_log;
    rt_recommendation r = rec_of(2, 3072, 0, 0);
    rt_server s = RT_SERVER_INIT;
    warnings = 0;
    assert_int_equal(rt_keeper_cheapest(&o, &r, &s), RT_ERR_IO);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, url));
    assert_non_null(strstr(last_warning, "not reached"));
    double p = 7;
    assert_int_equal(rt_keeper_price(&o, "aws", "t3.medium", NULL, &p), RT_ERR_IO);
    assert_true(p == 7);
    assert_int_equal(warnings, 2);
    /* 0.18: no reply at all (a closed port) is offline, and says why without the URL */
    char why[200] = "stale";
    o.offline_why = why;
    o.offline_why_cap = sizeof why;
    assert_int_equal(rt_keeper_cheapest(&o, &r, &s), RT_ERR_IO);
    assert_true(why[0] != '\0');
    assert_null(strstr(why, "http://"));
    snprintf(why, sizeof why, "stale");
    assert_int_equal(rt_keeper_price(&o, "aws", "t3.medium", NULL, &p), RT_ERR_IO);
    assert_true(why[0] != '\0' && strcmp(why, "stale") != 0);
    o.offline_why_cap = 4; /* cut, still a string */
    assert_int_equal(rt_keeper_cheapest(&o, &r, &s), RT_ERR_IO);
    assert_int_equal(strlen(why), 3);
    snprintf(why, sizeof why, "stale");
    rt_recommendation huge0 = rec_of(512, 128, 0, 0);
    o.offline_why_cap = sizeof why;
    assert_int_equal(rt_keeper_cheapest(&o, &huge0, &s), RT_ERR_NOT_FOUND); /* no request: not offline */
    assert_string_equal(why, "");
    o.offline_why = NULL;
    warnings = 2;

    assert_int_equal(rt_keeper_cheapest(&o, NULL, &s), RT_ERR_INVALID);
    assert_int_equal(rt_keeper_cheapest(&o, &r, NULL), RT_ERR_INVALID);
    rt_recommendation zero = rec_of(0, 128, 0, 0);
    assert_int_equal(rt_keeper_cheapest(&o, &zero, &s), RT_ERR_INVALID);
    rt_recommendation huge = rec_of(512, 128, 0, 0);
    assert_int_equal(rt_keeper_cheapest(&o, &huge, &s), RT_ERR_NOT_FOUND); /* no request made */
    o.timeout_secs = -1;
    assert_int_equal(rt_keeper_cheapest(&o, &r, &s), RT_ERR_INVALID);
    o.timeout_secs = NAN;
    assert_int_equal(rt_keeper_price(&o, "aws", "t3.medium", NULL, &p), RT_ERR_INVALID);
    o.timeout_secs = 0;
    assert_int_equal(rt_keeper_price(&o, "", "t3.medium", NULL, &p), RT_ERR_INVALID);
    assert_int_equal(rt_keeper_price(&o, "aws", NULL, NULL, &p), RT_ERR_INVALID);
    assert_int_equal(warnings, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gb_values),         cmocka_unit_test(servers_url),  cmocka_unit_test(parse_servers_real),
        cmocka_unit_test(parse_servers_hostile), cmocka_unit_test(parse_prices), cmocka_unit_test(url_escape),
        cmocka_unit_test(loader),            cmocka_unit_test(lookups),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unit_body(NULL, NULL);
    return rc;
}
