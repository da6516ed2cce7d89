/* test_net.c - the sampler's network part (sample/net.c) through the replay API on the
 * captured fixtures (proc copied to a temp dir and rewritten in place, sys as captured):
 * interfaces appearing and disappearing without losing the others' counters, loopback left
 * out, sysfs attributes (the link's speed both ways: unknown as null, and as its file says it),
 * rates over the given elapsed time and null at 0, the list sorted by name whatever net/dev's
 * order. */
#include "unit.h"

#include <math.h>

#include "resource_tracker.h"
#include "unit_replay.h"

static char dir[64], proc[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rt-net-XXXXXX");
    unit_tmpdir(dir);
    snprintf(proc, sizeof proc, "%s/proc", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unit_rmtree(dir);
    return 0;
}

/* A sampler on the case's sys and a temp copy of its proc, baseline taken at mono 1000. */
static rt_sampler *open_case(const char *name)
{
    return unit_open_case(name, proc, NULL, NULL);
}

static const rt_net_iface *find_if(const rt_sample *smp, const char *name)
{
    for (size_t i = 0; i < smp->network_count; i++)
        if (strcmp(smp->network[i]->interface, name) == 0)
            return smp->network[i];
    return NULL;
}

/* Writes net/dev with the given interface lines ("name rx tx" each). */
static void put_netdev(const char *const *ifs, size_t n)
{
    static char text[4096];
    size_t len = (size_t)snprintf(text, sizeof text,
                                  "Inter-|   Receive                                                |  Transmit\n"
                                  " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
                                  "errs drop fifo colls carrier compressed\n");
    for (size_t i = 0; i < n; i++) {
        char name[32];
        unsigned long long rx, tx;
        assert_int_equal(sscanf(ifs[i], "%31s %llu %llu", name, &rx, &tx), 3);
        len += (size_t)snprintf(text + len, sizeof text - len, "%6s: %llu 1 0 0 0 0 0 0 %llu 1 0 0 0 0 0 0\n", name,
                                rx, tx);
    }
    unit_put(proc, "net/dev", text);
}

static void interface_comes_and_goes(void **state)
{
    (void)state;
    rt_sampler *s = open_case("awkward");
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    assert_int_equal(smp->network_count, 2); /* eth0, ppp0; lo left out */
    assert_null(find_if(smp, "lo"));
    const rt_net_iface *eth = find_if(smp, "eth0"), *ppp = find_if(smp, "ppp0");
    assert_string_equal(eth->mac_address, "00:1b:21:aa:bb:cc");
    assert_string_equal(eth->driver, "e1000e");
    assert_string_equal(eth->operstate, "up");
    assert_int_equal(eth->speed_mbps, 100);
    assert_int_equal(eth->speed_mbps_reported, 100);
    assert_int_equal(eth->mtu, 1500);
    assert_null(ppp->mac_address);
    assert_null(ppp->driver);
    assert_string_equal(ppp->operstate, "unknown");
    assert_true(ppp->speed_mbps == RT_NULL_I64);
    assert_true(ppp->speed_mbps_reported == RT_NULL_I64); /* no speed file */
    assert_int_equal(ppp->mtu, 1492);

    /* ppp0 goes; eth0 keeps its previous counters through the rediscovery */
    const char *a[] = {"lo 100 100", "eth0 5001000 3000500"};
    put_netdev(a, 2);
    rt_sampler_sample_at(s, 1003.0, 1.7e9 + 3, &smp);
    assert_int_equal(smp->network_count, 1);
    eth = find_if(smp, "eth0");
    assert_non_null(eth);
    assert_int_equal(eth->rx_bytes, 1000);
    assert_int_equal(eth->tx_bytes, 500);
    assert_true(eth->rx_bytes_per_sec == 500.0); /* over the given 2 s */
    assert_true(eth->tx_bytes_per_sec == 250.0);
    assert_int_equal(eth->rx_bytes_total, 5001000);
    assert_string_equal(eth->driver, "e1000e"); /* its details kept too */

    /* ppp0 comes back with higher counters, and tun7 (no sysfs entry) appears: both count
     * from now, not from what ppp0 had before it went */
    const char *b[] = {"lo 100 100", "eth0 5002000 3000500", "ppp0 90000 80000", "tun7 4444 5555"};
    put_netdev(b, 4);
    rt_sampler_sample_at(s, 1004.0, 1.7e9 + 4, &smp);
    assert_int_equal(smp->network_count, 3);
    assert_int_equal(find_if(smp, "eth0")->rx_bytes, 1000);
    ppp = find_if(smp, "ppp0");
    const rt_net_iface *tun = find_if(smp, "tun7");
    assert_non_null(ppp);
    assert_non_null(tun);
    assert_int_equal(ppp->rx_bytes, 0);
    assert_true(ppp->rx_bytes_per_sec == 0.0);
    assert_int_equal(ppp->rx_bytes_total, 90000);
    assert_int_equal(tun->rx_bytes, 0);
    assert_int_equal(tun->tx_bytes_total, 5555);
    assert_null(tun->mac_address);
    assert_null(tun->driver);
    assert_null(tun->operstate);
    assert_true(tun->speed_mbps == RT_NULL_I64);
    assert_true(tun->mtu == RT_NULL_I64);
    for (size_t i = 0; i < smp->network_count; i++)
        assert_non_null(smp->network[i]);

    /* the next interval counts the newcomers */
    const char *c[] = {"lo 100 100", "eth0 5002000 3000500", "ppp0 90100 80000", "tun7 4544 5555"};
    put_netdev(c, 4);
    rt_sampler_sample_at(s, 1005.0, 1.7e9 + 5, &smp);
    assert_int_equal(find_if(smp, "ppp0")->rx_bytes, 100);
    assert_int_equal(find_if(smp, "tun7")->rx_bytes, 100);
    assert_int_equal(find_if(smp, "eth0")->rx_bytes, 0);

    /* all but loopback gone: an empty list, not a failure */
    const char *d[] = {"lo 200 200"};
    put_netdev(d, 1);
    assert_int_equal(rt_sampler_sample_at(s, 1006.0, 1.7e9 + 6, &smp), RT_OK);
    assert_int_equal(smp->network_count, 0);
    rt_sampler_free(s);
}

/* net/dev lists interfaces in the order they were registered; the sample lists them sorted
 * by name (as the Rust tool), and keeps each one's counters through a re-sort. */
static void sorted_by_name(void **state)
{
    (void)state;
    rt_sampler *s = open_case("awkward");
    const char *a[] = {"wlan0 10 20", "lo 1 1", "eth1 30 40", "br-x 50 60", "eth0 70 80", "Docker 90 100"};
    put_netdev(a, 6);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    static const char *const want[] = {"Docker", "br-x", "eth0", "eth1", "wlan0"}; /* bytes: 'D' < 'b' */
    assert_int_equal(smp->network_count, 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(smp->network[i]->interface, want[i]);
    /* eth10 appears (between eth1 and wlan0), br-x goes: the others keep their counters */
    const char *b[] = {"wlan0 11 20", "lo 1 1", "eth1 33 40", "eth0 77 80", "Docker 99 100", "eth10 5 5"};
    put_netdev(b, 6);
    rt_sampler_sample_at(s, 1002.0, 1.7e9 + 2, &smp);
    static const char *const want2[] = {"Docker", "eth0", "eth1", "eth10", "wlan0"};
    static const uint64_t rx2[] = {9, 7, 3, 0, 1};
    assert_int_equal(smp->network_count, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(smp->network[i]->interface, want2[i]);
        assert_int_equal(smp->network[i]->rx_bytes, rx2[i]);
    }
    rt_sampler_free(s);
}

static void rates_and_zero_elapsed(void **state)
{
    (void)state;
    rt_sampler *s = open_case("awkward");
    const rt_sample *smp;
    /* the t1 capture at the same clock reading: bytes known, rates null */
    const char *a[] = {"lo 200 200", "eth0 5000000 3000000", "ppp0 9048 10024"};
    put_netdev(a, 3);
    rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
    const rt_net_iface *ppp = find_if(smp, "ppp0");
    assert_int_equal(ppp->rx_bytes, 2048);
    assert_int_equal(ppp->tx_bytes, 1024);
    assert_true(isnan(ppp->rx_bytes_per_sec));
    assert_true(isnan(ppp->tx_bytes_per_sec));
    /* 0.5 s */
    const char *b[] = {"lo 200 200", "eth0 5000000 3000000", "ppp0 10048 10024"};
    put_netdev(b, 3);
    rt_sampler_sample_at(s, 1000.5, 1.7e9, &smp);
    assert_true(find_if(smp, "ppp0")->rx_bytes_per_sec == 2000.0);
    assert_true(find_if(smp, "ppp0")->tx_bytes_per_sec == 0.0);
    /* counters going backwards (the interface was re-created): 0, never negative */
    const char *c[] = {"lo 200 200", "eth0 10 3000000", "ppp0 10048 10024"};
    put_netdev(c, 3);
    rt_sampler_sample_at(s, 1001.5, 1.7e9, &smp);
    assert_int_equal(find_if(smp, "eth0")->rx_bytes, 0);
    assert_true(find_if(smp, "eth0")->rx_bytes_per_sec == 0.0);
    assert_int_equal(find_if(smp, "eth0")->rx_bytes_total, 10);
    rt_sampler_free(s);
}

static void captured_machines(void **state)
{
    (void)state;
    rt_sampler *s = open_case("vm-virtio");
    const rt_sample *smp;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp '%s/vm-virtio/t1/proc/net/dev' '%s/net/dev'", RT_FIXTURES, proc);
    unit_system(cmd);
    rt_sampler_sample_at(s, 1001.022, 1.7e9 + 1, &smp);
    assert_int_equal(smp->network_count, 3); /* ifb0 ifb1 eth0 */
    const rt_net_iface *eth = find_if(smp, "eth0");
    assert_non_null(eth);
    assert_true(fabs(smp->interval_secs - 1.022) < 1e-9);
    assert_true(eth->rx_bytes_per_sec == (double)eth->rx_bytes / smp->interval_secs);
    assert_true(eth->speed_mbps == RT_NULL_I64);    /* virtio: no link speed */
    assert_int_equal(eth->speed_mbps_reported, -1); /* as its file says it (the Rust tool's figure) */
    rt_sampler_free(s);
    unit_rmtree(proc);

    s = open_case("server-nvme-lvm");
    snprintf(cmd, sizeof cmd, "cp '%s/server-nvme-lvm/t1/proc/net/dev' '%s/net/dev'", RT_FIXTURES, proc);
    unit_system(cmd);
    rt_sampler_sample_at(s, 1002.0, 1.7e9 + 2, &smp);
    assert_int_equal(smp->network_count, 6);
    const rt_net_iface *eno = find_if(smp, "eno1"), *enp = find_if(smp, "enp65s0f0");
    assert_true(eno->rx_bytes_per_sec == 1000000.0);
    assert_true(eno->tx_bytes_per_sec == 250000.0);
    assert_true(enp->rx_bytes_per_sec == 1250000000.0);
    assert_int_equal(enp->rx_bytes_total, 557500000000ull);
    rt_sampler_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(interface_comes_and_goes, setup, teardown),
        cmocka_unit_test_setup_teardown(sorted_by_name, setup, teardown),
        cmocka_unit_test_setup_teardown(rates_and_zero_elapsed, setup, teardown),
        cmocka_unit_test_setup_teardown(captured_machines, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
