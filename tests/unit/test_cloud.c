/* test_cloud.c - the cloud vendors' metadata reply parsers (cloud.h): each vendor's real reply
 * shape, garbage, and values of the wrong type; and the threaded discovery (rt_cloud_start) against
 * local servers, for the sanitizers (ThreadSanitizer in scripts/test). */
#include "unit.h"

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "resource_tracker.h"
#include "source/cloud.h"

#define body unit_body

typedef bool (*facts_parser)(const char *, size_t, rt_cloud_facts *);

static rt_cloud_facts facts(facts_parser parse, const char *s, bool *ret)
{
    rt_cloud_facts f;
    memset(&f, 0, sizeof f);
    size_t n;
    const char *b = body(s, &n);
    *ret = parse(b, n, &f);
    return f;
}

static bool is_empty(const rt_cloud_facts *f)
{
    return !f->found && !f->account[0] && !f->region[0] && !f->zone[0] && !f->type[0];
}

/* Every facts parser given garbage, nothing, JSON that is not an object, or NULL: no facts. */
static void garbage(void **state)
{
    (void)state;
    facts_parser all[] = {rt_cloud_aws_identity_parse, rt_cloud_gcp_zone_parse, rt_cloud_azure_parse,
                          rt_cloud_alicloud_region_parse, rt_cloud_hcloud_parse,  rt_cloud_upcloud_parse,
                          rt_cloud_vultr_parse,        rt_cloud_ovh_meta_parse};
    const char *junk[] = {"", "   \n", "<html>oops { not json", "[1,2,3]", "\"string\"", "null", "{\"a\":1,\"a\":2}",
                          "{\"region\":", "\xff\xfe\x07 with spaces", "{}"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        for (size_t k = 0; k < sizeof junk / sizeof junk[0]; k++) {
            bool ret;
            rt_cloud_facts f = facts(all[i], junk[k], &ret);
            if (all[i] == rt_cloud_gcp_zone_parse && strcmp(junk[k], "null") == 0)
                continue; /* a plain word is a GCP zone: the Metadata-Flavor header proves GCP */
            if (!is_empty(&f))
                fail_msg("parser %zu took \"%s\"", i, junk[k]);
        }
        rt_cloud_facts f;
        memset(&f, 0, sizeof f);
        all[i](NULL, 0, &f);
        assert_true(is_empty(&f));
    }
    const char *b = "\x00\xff<html>oops"; /* 12 bytes, a NUL first */
    assert_false(rt_cloud_aws_domain_parse(b, 12));
    assert_false(rt_cloud_ovh_network_parse(b, 12));
    char out[128] = "";
    assert_false(rt_cloud_text_parse(b, 12, out, sizeof out));
    assert_false(rt_cloud_gcp_machine_type_parse(b, 12, out, sizeof out));
    assert_string_equal(out, "");
}

static void text_values(void **state)
{
    (void)state;
    char out[128] = "";
    size_t n;
    const char *b = body("  g4dn.xlarge\n", &n);
    assert_true(rt_cloud_text_parse(b, n, out, sizeof out));
    assert_string_equal(out, "g4dn.xlarge");
    b = body("two words", &n);
    assert_false(rt_cloud_text_parse(b, n, out, sizeof out));
    assert_string_equal(out, "g4dn.xlarge"); /* unchanged */
    char longv[102];
    memset(longv, 'a', 101);
    longv[101] = '\0';
    b = body(longv, &n);
    assert_false(rt_cloud_text_parse(b, n, out, sizeof out)); /* over 100 */
    assert_true(rt_cloud_text_parse(b, 100, out, sizeof out));
    assert_int_equal(strlen(out), 100);
    char tiny[4];
    b = body("abcd", &n);
    assert_false(rt_cloud_text_parse(b, n, tiny, sizeof tiny)); /* never cut */
    assert_false(rt_cloud_text_parse("a\0b", 3, out, sizeof out)); /* a NUL byte is garbage */
}

static void aws(void **state)
{
    (void)state;
    size_t n;
    const char *b = body("amazonaws.com\n", &n);
    assert_true(rt_cloud_aws_domain_parse(b, n));
    b = body("amazonaws.com.cn", &n);
    assert_true(rt_cloud_aws_domain_parse(b, n));
    b = body("amazonaws.com.evil", &n);
    assert_false(rt_cloud_aws_domain_parse(b, n));
    b = body("amazonaws.co", &n);
    assert_false(rt_cloud_aws_domain_parse(b, n));
    assert_false(rt_cloud_aws_domain_parse(NULL, 0));

    bool ret;
    rt_cloud_facts f = facts(rt_cloud_aws_identity_parse,
                             "{\n  \"accountId\": \"123456789012\",\n  \"architecture\": \"x86_64\",\n"
                             "  \"availabilityZone\": \"eu-central-1b\",\n  \"instanceType\": \"g4dn.xlarge\",\n"
                             "  \"region\": \"eu-central-1\",\n  \"version\": \"2017-09-30\"\n}",
                             &ret);
    assert_true(ret);
    assert_false(f.found); /* the services domain decides that */
    assert_string_equal(f.account, "123456789012");
    assert_string_equal(f.region, "eu-central-1");
    assert_string_equal(f.zone, "eu-central-1b");
    assert_string_equal(f.type, "g4dn.xlarge");
    /* wrong types and garbage values are left out, the rest kept */
    f = facts(rt_cloud_aws_identity_parse,
              "{\"accountId\": 123456789012, \"region\": \"eu west\", \"availabilityZone\": null, "
              "\"instanceType\": \"m5.large\"}",
              &ret);
    assert_true(ret);
    assert_string_equal(f.account, "");
    assert_string_equal(f.region, "");
    assert_string_equal(f.zone, "");
    assert_string_equal(f.type, "m5.large");
}

static void gcp(void **state)
{
    (void)state;
    bool ret;
    rt_cloud_facts f = facts(rt_cloud_gcp_zone_parse, "projects/424242424242/zones/europe-west4-a", &ret);
    assert_true(ret && f.found);
    assert_string_equal(f.zone, "europe-west4-a");
    assert_string_equal(f.region, "europe-west4");
    f = facts(rt_cloud_gcp_zone_parse, "nodash", &ret); /* no '-': a zone, no region */
    assert_true(ret && f.found);
    assert_string_equal(f.zone, "nodash");
    assert_string_equal(f.region, "");
    f = facts(rt_cloud_gcp_zone_parse, "projects/1/zones/", &ret);
    assert_false(ret || f.found);
    f = facts(rt_cloud_gcp_zone_parse, "projects/1/zones/europe west", &ret);
    assert_false(ret || f.found);

    char out[128] = "";
    size_t n;
    const char *b = body("projects/424242424242/machineTypes/n2-standard-8\n", &n);
    assert_true(rt_cloud_gcp_machine_type_parse(b, n, out, sizeof out));
    assert_string_equal(out, "n2-standard-8");
    b = body("e2-micro", &n);
    assert_true(rt_cloud_gcp_machine_type_parse(b, n, out, sizeof out));
    assert_string_equal(out, "e2-micro");
    b = body("projects/1/machineTypes/", &n);
    assert_false(rt_cloud_gcp_machine_type_parse(b, n, out, sizeof out));
    b = body("my-ml-project", &n);
    assert_true(rt_cloud_text_parse(b, n, out, sizeof out)); /* project-id */
    assert_string_equal(out, "my-ml-project");
}

static void azure(void **state)
{
    (void)state;
    bool ret;
    rt_cloud_facts f = facts(rt_cloud_azure_parse,
                             "{\"compute\": {\"azEnvironment\": \"AzurePublicCloud\", \"location\": \"westeurope\", "
                             "\"name\": \"vm1\", \"subscriptionId\": \"8d10da13-8125-4ba9-a717-bf7490507b3d\", "
                             "\"vmId\": \"02aab8a4-74ef-476e\", \"vmSize\": \"Standard_NC6s_v3\", \"zone\": \"2\"}, "
                             "\"network\": {\"interface\": []}}",
                             &ret);
    assert_true(ret && f.found);
    assert_string_equal(f.region, "westeurope");
    assert_string_equal(f.zone, "2");
    assert_string_equal(f.type, "Standard_NC6s_v3");
    assert_string_equal(f.account, "8d10da13-8125-4ba9-a717-bf7490507b3d");
    /* an empty zone (no zones in the region) stays out */
    f = facts(rt_cloud_azure_parse, "{\"compute\": {\"location\": \"eastus\", \"vmId\": \"x\", \"zone\": \"\"}}", &ret);
    assert_true(ret);
    assert_string_equal(f.zone, "");
    /* without vmId or azEnvironment, or with compute of the wrong type: not Azure */
    f = facts(rt_cloud_azure_parse, "{\"compute\": {\"location\": \"westeurope\"}}", &ret);
    assert_false(ret || f.found);
    f = facts(rt_cloud_azure_parse, "{\"compute\": [\"location\", \"westeurope\"]}", &ret);
    assert_false(ret || f.found);
    f = facts(rt_cloud_azure_parse, "{\"compute\": {\"location\": 5, \"vmId\": \"x\"}}", &ret);
    assert_false(ret || f.found);
}

static void alicloud(void **state)
{
    (void)state;
    bool ret;
    rt_cloud_facts f = facts(rt_cloud_alicloud_region_parse, "cn-hangzhou\n", &ret);
    assert_true(ret && f.found);
    assert_string_equal(f.region, "cn-hangzhou");
    f = facts(rt_cloud_alicloud_region_parse, "hangzhou", &ret); /* no '-' */
    assert_false(ret || f.found);
    f = facts(rt_cloud_alicloud_region_parse, "<html>cn-hangzhou</html> x", &ret);
    assert_false(ret || f.found);
}

static void hcloud(void **state)
{
    (void)state;
    bool ret;
    rt_cloud_facts f = facts(rt_cloud_hcloud_parse,
                             "availability-zone: fsn1-dc14\nhostname: trainer-1\ninstance-id: 42424242\n"
                             "local-ipv4: ''\npublic-ipv4: 203.0.113.7\nregion: eu-central\npublic-keys: []\n",
                             &ret);
    assert_true(ret && f.found);
    assert_string_equal(f.zone, "fsn1-dc14");
    assert_string_equal(f.region, "fsn1");
    f = facts(rt_cloud_hcloud_parse, "instance-id: 1\navailability-zone: hel1", &ret); /* no "-dc" */
    assert_true(ret);
    assert_string_equal(f.region, "hel1");
    f = facts(rt_cloud_hcloud_parse, "availability-zone: fsn1-dc14\n", &ret); /* no instance-id */
    assert_false(ret || f.found);
    f = facts(rt_cloud_hcloud_parse, "instance-id: 1\navailability-zone: not a zone\n", &ret);
    assert_false(ret || f.found);
    f = facts(rt_cloud_hcloud_parse, "instance-id 1\navailability-zone fsn1-dc14\n", &ret); /* no colons */
    assert_false(ret || f.found);
}

static void upcloud(void **state)
{
    (void)state;
    bool ret;
    rt_cloud_facts f = facts(rt_cloud_upcloud_parse,
                             "{\"cloud_name\": \"upcloud\", \"instance_id\": \"00abcdef-1234\", \"hostname\": \"worker\", "
                             "\"platform\": \"servers\", \"region\": \"fi-hel2\", \"public_keys\": []}",
                             &ret);
    assert_true(ret && f.found);
    assert_string_equal(f.region, "fi-hel2");
    assert_string_equal(f.zone, "fi-hel2");
    f = facts(rt_cloud_upcloud_parse, "{\"cloud_name\": \"digitalocean\", \"region\": \"fra1\"}", &ret);
    assert_false(ret || f.found);
    f = facts(rt_cloud_upcloud_parse, "{\"cloud_name\": \"upcloud\", \"region\": [\"fi-hel2\"]}", &ret);
    assert_false(ret || f.found);
}

static void vultr(void **state)
{
    (void)state;
    bool ret;
    rt_cloud_facts f = facts(rt_cloud_vultr_parse,
                             "{\"bgp\": {}, \"hostname\": \"vultr-guest\", \"instanceid\": \"a1b2c3d4\", "
                             "\"region\": {\"regioncode\": \"AMS\"}, \"public-keys\": []}",
                             &ret);
    assert_true(ret && f.found);
    assert_string_equal(f.region, "ams");
    f = facts(rt_cloud_vultr_parse, "{\"instanceid\": \"a1\", \"region\": \"AMS\"}", &ret); /* region not an object */
    assert_true(ret && f.found);
    assert_string_equal(f.region, "");
    f = facts(rt_cloud_vultr_parse, "{\"instanceid\": 42, \"region\": {\"regioncode\": \"AMS\"}}", &ret);
    assert_false(ret || f.found);
}

static void ovh(void **state)
{
    (void)state;
    size_t n;
    const char *b = body("{\"links\": [], \"networks\": [], \"services\": [{\"type\": \"dns\", \"address\": \"10.0.0.2\"}, "
                         "{\"type\": \"dns\", \"address\": \"213.186.33.99\"}]}",
                         &n);
    assert_true(rt_cloud_ovh_network_parse(b, n));
    b = body("{\"services\": [{\"type\": \"dns\", \"address\": \"10.0.0.2\"}]}", &n); /* another OpenStack */
    assert_false(rt_cloud_ovh_network_parse(b, n));
    b = body("{\"services\": {\"type\": \"dns\", \"address\": \"213.186.33.99\"}}", &n); /* not an array */
    assert_false(rt_cloud_ovh_network_parse(b, n));
    b = body("{\"services\": [\"213.186.33.99\", 5, null]}", &n);
    assert_false(rt_cloud_ovh_network_parse(b, n));

    bool ret;
    rt_cloud_facts f = facts(rt_cloud_ovh_meta_parse,
                             "{\"uuid\": \"d8e02d56\", \"name\": \"gpu-node\", \"availability_zone\": \"GRA11\", "
                             "\"project_id\": \"0123456789abcdef0123456789abcdef\", \"hostname\": \"gpu-node.novalocal\"}",
                             &ret);
    assert_true(ret);
    assert_false(f.found); /* the resolver decides that */
    assert_string_equal(f.region, "GRA11");
    assert_string_equal(f.account, "0123456789abcdef0123456789abcdef");
    f = facts(rt_cloud_ovh_meta_parse, "{\"availability_zone\": \"nova\", \"project_id\": 7}", &ret);
    assert_true(ret);
    assert_true(is_empty(&f));
}

/* ---- the threaded discovery ------------------------------------------------------------------ */

/* A listening socket on 127.0.0.1, port 0; *port gets the port. */
static int listen_local(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 64), 0);
    socklen_t n = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &n), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* A server that answers every request 404 until stop is set. */
typedef struct server404 {
    int fd;
    atomic_bool stop;
} server404;

static void *serve404(void *arg)
{
    server404 *sv = arg;
    static const char reply[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    while (!atomic_load(&sv->stop)) {
        struct pollfd pf = {.fd = sv->fd, .events = POLLIN};
        if (poll(&pf, 1, 20) <= 0)
            continue;
        int c = accept(sv->fd, NULL, NULL);
        if (c < 0)
            continue;
        char buf[4096];
        size_t got = 0;
        while (got < sizeof buf - 1) { /* up to the end of the header */
            ssize_t r = read(c, buf + got, sizeof buf - 1 - got);
            if (r <= 0)
                break;
            got += (size_t)r;
            buf[got] = 0;
            if (strstr(buf, "\r\n\r\n"))
                break;
        }
        ssize_t w = write(c, reply, sizeof reply - 1);
        (void)w;
        close(c);
    }
    return NULL;
}

static atomic_int cloud_logs;
static pthread_mutex_t cloud_log_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cloud_log_cv = PTHREAD_COND_INITIALIZER; /* signalled at every message */

static void count_cloud_log(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    (void)level;
    (void)msg;
    pthread_mutex_lock(&cloud_log_mu);
    atomic_fetch_add(&cloud_logs, 1);
    pthread_cond_broadcast(&cloud_log_cv);
    pthread_mutex_unlock(&cloud_log_mu);
}

/* Waits (30 s at most: a guard) until the discovery has logged something. */
static bool wait_cloud_log(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 30;
    pthread_mutex_lock(&cloud_log_mu);
    while (atomic_load(&cloud_logs) == 0 && pthread_cond_timedwait(&cloud_log_cv, &cloud_log_mu, &ts) == 0)
        ;
    pthread_mutex_unlock(&cloud_log_mu);
    return atomic_load(&cloud_logs) > 0;
}

/* Starts discovery with every endpoint at http://127.0.0.1:port, logging to count_cloud_log. */
static rt_cloud_discovery *start_local(int port)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    rt_cloud_options o = RT_CLOUD_OPTIONS_INIT;
    o.metadata_url = url; /* copied: base_of keeps scheme, host and port */
    o.log = count_cloud_log;
    rt_cloud_discovery *d = NULL;
    assert_int_equal(rt_cloud_start(&o, &d), RT_OK);
    return d;
}

/* Reads the result from a second thread while the first one does too. */
static void *read_result(void *arg)
{
    return (void *)rt_cloud_result(arg, 10);
}

/* Every probe asks a local server that knows nothing: discovery ends soon, off any cloud, and
 * two threads waiting on it at once see the same cached result. */
static void discovery_no_cloud(void **state)
{
    (void)state;
    server404 sv = {.stop = false};
    int port;
    sv.fd = listen_local(&port);
    pthread_t th, reader;
    assert_int_equal(pthread_create(&th, NULL, serve404, &sv), 0);
    rt_cloud_discovery *d = start_local(port);
    assert_int_equal(pthread_create(&reader, NULL, read_result, d), 0);
    const rt_cloud *r = rt_cloud_result(d, 10);
    void *other = NULL;
    assert_int_equal(pthread_join(reader, &other), 0);
    assert_non_null(r);
    assert_ptr_equal(other, r);
    assert_null(r->vendor_id);
    assert_null(r->region_id);
    assert_true(r->discovery_secs >= 0 && r->discovery_secs < 5);
    rt_cloud_free(d);
    atomic_store(&sv.stop, true);
    pthread_join(th, NULL);
    close(sv.fd);
}

/* A server that takes the connections and never answers: the caller frees the discovery while
 * every probe still waits; then the server goes (the kernel resets the connections it holds), the
 * probes end, and the last one logs the end and frees the discovery. */
static void discovery_freed_while_probing(void **state)
{
    (void)state;
    int port;
    int fd = listen_local(&port); /* never accepts: the kernel completes the connections */
    atomic_store(&cloud_logs, 0);
    rt_cloud_discovery *d = start_local(port);
    assert_null(rt_cloud_result(d, 0.05));
    rt_cloud_free(d);
    assert_int_equal(atomic_load(&cloud_logs), 0); /* still probing */
    close(fd);
    assert_true(wait_cloud_log()); /* the last probe logged the end, after the free */
}

static int done(void **state)
{
    (void)state;
    unit_body(NULL, NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(garbage, done), cmocka_unit_test_teardown(text_values, done),
        cmocka_unit_test_teardown(aws, done),     cmocka_unit_test_teardown(gcp, done),
        cmocka_unit_test_teardown(azure, done),   cmocka_unit_test_teardown(alicloud, done),
        cmocka_unit_test_teardown(hcloud, done),  cmocka_unit_test_teardown(upcloud, done),
        cmocka_unit_test_teardown(vultr, done),   cmocka_unit_test_teardown(ovh, done),
        cmocka_unit_test(discovery_no_cloud),     cmocka_unit_test(discovery_freed_while_probing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
