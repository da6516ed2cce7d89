/* test_taskstats.c - the parsing of the kernel's taskstats exit messages (rt_taskstats_parse):
 * a datagram of bytes as the kernel sends it at a multi-threaded process's last exit (a task's
 * AGGR_PID record, then the group's AGGR_TGID record), an older kernel's shorter struct
 * taskstats, two messages in one datagram, and what is skipped: another family, another
 * command, an attribute whose length runs past the message, a message cut short, a full out. */
#include "unit.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <string.h>

#include "source/taskstats.h"

#define FAMILY 0x17

/* Appends one attribute (its header, payload, padding) at *at. */
static void put_attr(unsigned char *buf, size_t *at, uint16_t type, const void *data, size_t len)
{
    struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type};
    memcpy(buf + *at, &a, sizeof a);
    memcpy(buf + *at + NLA_HDRLEN, data, len);
    *at += NLA_ALIGN(NLA_HDRLEN + len);
}

/* Appends one exit message of family fam at *at: an AGGR_(type) nest of the id and the first
 * stats_len bytes of st. Returns the message's start. */
static size_t put_msg(unsigned char *buf, size_t *at, uint16_t fam, uint8_t cmd, uint16_t aggr, uint16_t idtype,
                      uint32_t id, const struct taskstats *st, size_t stats_len)
{
    size_t start = *at;
    size_t p = start + NLMSG_LENGTH(GENL_HDRLEN);
    unsigned char inner[1024];
    size_t in = 0;
    put_attr(inner, &in, idtype, &id, sizeof id);
    put_attr(inner, &in, TASKSTATS_TYPE_STATS, st, stats_len);
    put_attr(buf, &p, aggr, inner, in);
    struct nlmsghdr h = {.nlmsg_len = (uint32_t)(p - start), .nlmsg_type = fam};
    struct genlmsghdr g = {.cmd = cmd, .version = TASKSTATS_GENL_VERSION};
    memcpy(buf + start, &h, sizeof h);
    memcpy(buf + start + NLMSG_HDRLEN, &g, sizeof g);
    *at = NLMSG_ALIGN(p);
    return start;
}

static struct taskstats stats_of(uint32_t pid, uint32_t tgid, uint32_t ppid, uint64_t hwm_kib)
{
    struct taskstats st;
    memset(&st, 0, sizeof st);
    st.version = TASKSTATS_VERSION;
    st.ac_exitcode = 3;
    st.ac_pid = pid;
    st.ac_ppid = ppid;
    st.ac_btime = 1700000000;
    st.ac_etime = 1500000;
    st.ac_utime = 250000;
    st.ac_stime = 50000;
    st.coremem = 123456;
    st.hiwater_rss = hwm_kib;
    st.hiwater_vm = hwm_kib * 2;
    st.ac_tgid = tgid;
    return st;
}

static void task_then_group(void **state)
{
    (void)state;
    unsigned char buf[4096] = {0};
    size_t at = 0;
    struct taskstats st = stats_of(4322, 4321, 100, 61440);
    put_msg(buf, &at, FAMILY, TASKSTATS_CMD_NEW, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 4322, &st, sizeof st);
    struct taskstats grp;
    memset(&grp, 0, sizeof grp); /* the group's record: its delays, no memory */
    put_msg(buf, &at, FAMILY, TASKSTATS_CMD_NEW, TASKSTATS_TYPE_AGGR_TGID, TASKSTATS_TYPE_TGID, 4321, &grp, sizeof grp);
    rt_exit_rec r[4];
    assert_int_equal(rt_taskstats_parse(buf, at, FAMILY, r, 4), 2);
    assert_int_equal(r[0].pid, 4322);
    assert_int_equal(r[0].tgid, 4321);
    assert_int_equal(r[0].ppid, 100);
    assert_int_equal(r[0].hiwater_rss_kib, 61440);
    assert_int_equal(r[0].hiwater_vm_kib, 122880);
    assert_int_equal(r[0].coremem, 123456);
    assert_int_equal(r[0].btime, 1700000000);
    assert_int_equal(r[0].etime_us, 1500000);
    assert_int_equal(r[0].utime_us, 250000);
    assert_int_equal(r[0].stime_us, 50000);
    assert_int_equal(r[0].exitcode, 3);
    assert_false(r[0].group);
    assert_true(r[1].group);
    assert_int_equal(r[1].pid, 4321);
    assert_int_equal(r[1].tgid, 4321);
    assert_int_equal(r[1].hiwater_rss_kib, 0);
    /* room for one: the first only */
    assert_int_equal(rt_taskstats_parse(buf, at, FAMILY, r, 1), 1);
    assert_int_equal(r[0].pid, 4322);
}

static void older_kernel(void **state)
{
    (void)state;
    /* a struct taskstats that ends before ac_tgid (version 10): the task stands for its process */
    unsigned char buf[4096] = {0};
    size_t at = 0;
    struct taskstats st = stats_of(777, 999, 1, 2048);
    put_msg(buf, &at, FAMILY, TASKSTATS_CMD_NEW, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 777, &st,
            offsetof(struct taskstats, ac_tgid));
    rt_exit_rec r[2];
    assert_int_equal(rt_taskstats_parse(buf, at, FAMILY, r, 2), 1);
    assert_int_equal(r[0].pid, 777);
    assert_int_equal(r[0].tgid, 777);
    assert_int_equal(r[0].hiwater_rss_kib, 2048);
    /* shorter than the accounting's start: no record */
    at = 0;
    put_msg(buf, &at, FAMILY, TASKSTATS_CMD_NEW, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 777, &st, 16);
    assert_int_equal(rt_taskstats_parse(buf, at, FAMILY, r, 2), 0);
}

static void skipped(void **state)
{
    (void)state;
    unsigned char buf[4096] = {0};
    size_t at = 0;
    struct taskstats st = stats_of(5, 5, 1, 100);
    put_msg(buf, &at, FAMILY + 1, TASKSTATS_CMD_NEW, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 5, &st, sizeof st);
    put_msg(buf, &at, FAMILY, TASKSTATS_CMD_GET, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 6, &st, sizeof st);
    size_t good = put_msg(buf, &at, FAMILY, TASKSTATS_CMD_NEW, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 7, &st,
                          sizeof st);
    rt_exit_rec r[4];
    assert_int_equal(rt_taskstats_parse(buf, at, FAMILY, r, 4), 1);
    assert_int_equal(r[0].pid, 7);
    /* the datagram cut inside its last message: the messages before it only */
    assert_int_equal(rt_taskstats_parse(buf, at - 8, FAMILY, r, 4), 0);
    assert_int_equal(rt_taskstats_parse(buf, 3, FAMILY, r, 4), 0);
    /* the outer attribute's length past its message: nothing of it */
    struct nlattr a;
    size_t outer = good + NLMSG_LENGTH(GENL_HDRLEN);
    memcpy(&a, buf + outer, sizeof a);
    a.nla_len = 0xffff;
    memcpy(buf + outer, &a, sizeof a);
    assert_int_equal(rt_taskstats_parse(buf, at, FAMILY, r, 4), 0);
    /* a nest without the stats: nothing */
    at = 0;
    unsigned char inner[64];
    size_t in = 0;
    uint32_t id = 9;
    put_attr(inner, &in, TASKSTATS_TYPE_PID, &id, sizeof id);
    size_t p = NLMSG_LENGTH(GENL_HDRLEN);
    put_attr(buf, &p, TASKSTATS_TYPE_AGGR_PID, inner, in);
    struct nlmsghdr h = {.nlmsg_len = (uint32_t)p, .nlmsg_type = FAMILY};
    struct genlmsghdr g = {.cmd = TASKSTATS_CMD_NEW};
    memcpy(buf, &h, sizeof h);
    memcpy(buf + NLMSG_HDRLEN, &g, sizeof g);
    assert_int_equal(rt_taskstats_parse(buf, p, FAMILY, r, 4), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(task_then_group),
        cmocka_unit_test(older_kernel),
        cmocka_unit_test(skipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
