/* test_json_rs.c - the Rust tool's JSON line (sink/json_rs.c, core/schema_rs.c): f64s written as
 * serde_json writes them; the Rust view's tables in serde_json's key order, each member naming a
 * figure of our schema of a type it can show; a synthetic sample written whole, byte for byte,
 * as the Rust resource-tracker 0.1.14 writes its Sample (names, nesting, types, units, null vs
 * default); the writer's state: actual_interval_ms left out of the first sample and the
 * cgroup's per-interval CPU from the second on; the members the Rust tool fills its own way (a
 * link's speed, the GPUs' ids and detail); and the reader taking such lines back. */
#include "unit.h"

#include <math.h>
#include <string.h>

#include "core/core.h"
#include "core/schema.h"
#include "sink/sink.h"

static const char *sh(double v)
{
    static char buf[64];
    rt_ob o = {.buf = buf, .cap = sizeof buf - 1};
    rt_ob_shortest(&o, v, "null");
    buf[o.len] = '\0';
    return buf;
}

/* serde_json's f64 text (ryu): the shortest digits that read back, ".0" on whole numbers below
 * 10^16, plain decimals down to 10^-5, an exponent beyond. */
static void shortest_floats(void **state)
{
    (void)state;
    assert_string_equal(sh(0), "0.0");
    assert_string_equal(sh(-0.0), "-0.0");
    assert_string_equal(sh(1), "1.0");
    assert_string_equal(sh(100), "100.0");
    assert_string_equal(sh(0.1), "0.1");
    assert_string_equal(sh(0.1 + 0.2), "0.30000000000000004");
    assert_string_equal(sh(-2.5), "-2.5");
    assert_string_equal(sh(1.98), "1.98");
    assert_string_equal(sh(19.91855302941119), "19.91855302941119");
    assert_string_equal(sh(1e15), "1000000000000000.0");
    assert_string_equal(sh(1e16), "1e16");
    assert_string_equal(sh(1.5e16), "1.5e16");
    assert_string_equal(sh(123456.789), "123456.789");
    assert_string_equal(sh(0.00001), "0.00001");
    assert_string_equal(sh(0.000123), "0.000123");
    assert_string_equal(sh(1e-6), "1e-6");
    assert_string_equal(sh(1.5e-7), "1.5e-7");
    assert_string_equal(sh(5e-324), "5e-324");
    assert_string_equal(sh(1.7976931348623157e308), "1.7976931348623157e308");
    assert_string_equal(sh(NAN), "null");
    assert_string_equal(sh(INFINITY), "null");
}

static const rt_rs_object *const objects[] = {&rt_rs_sample, &rt_rs_cpu,   &rt_rs_memory, &rt_rs_network,
                                              &rt_rs_disk,   &rt_rs_mount, &rt_rs_gpu};

/* Every table in serde_json's order (a map's keys sorted by their bytes), every member naming a
 * figure of our schema that its Rust type can show. */
static void tables_follow_schema(void **state)
{
    (void)state;
    for (size_t t = 0; t < RT_ARRAY_LEN(objects); t++) {
        const rt_rs_object *ob = objects[t];
        assert_true(ob->n > 0);
        for (size_t i = 0; i < ob->n; i++) {
            const rt_rs_field *f = &ob->f[i];
            if (i > 0 && strcmp(ob->f[i - 1].name, f->name) >= 0)
                fail_msg("%s: %s before %s", ob->name, ob->f[i - 1].name, f->name);
            if (f->type == RS_HAND) {
                assert_null(f->st);
                continue;
            }
            const rt_field *sf = rt_schema_at(f->st, f->off);
            if (!sf)
                fail_msg("%s.%s: no figure of %s at %zu", ob->name, f->name, f->st->name, f->off);
            switch (f->type) {
            case RS_STR: assert_int_equal(sf->type, RT_FIELD_STRING); break;
            case RS_INT:
            case RS_FLOAT:
                if (sf->type == RT_FIELD_STRING || sf->type == RT_FIELD_FLAG)
                    fail_msg("%s.%s shows %s, not a number", ob->name, f->name, sf->name);
                break;
            default: fail_msg("%s.%s: type %d", ob->name, f->name, (int)f->type);
            }
            if (f->conv == RS_DELTA || f->conv == RS_RATE) {
                assert_ptr_equal(ob, &rt_rs_cpu); /* the state keeps rt_rs_cpu's */
                assert_true(i < RT_RS_PREV);
            }
            if (f->alt) { /* the fallback shows a figure of the same type and unit */
                const rt_field *af = rt_schema_at(f->alt, f->alt_off);
                if (!af)
                    fail_msg("%s.%s: no figure of %s at %zu", ob->name, f->name, f->alt->name, f->alt_off);
                assert_int_equal(af->type, sf->type);
                assert_int_equal(af->unit, sf->unit);
            }
            if (f->conv == RS_TO_MIB)
                assert_int_equal(sf->unit, U_BYTES);
            if (f->conv == RS_PER_100)
                assert_int_equal(sf->unit, U_PCT);
        }
    }
    /* the members the Rust tool writes in MiB show our MiB figures */
    for (size_t i = 0; i < rt_rs_memory.n; i++)
        if (strstr(rt_rs_memory.f[i].name, "_mib"))
            assert_int_equal(rt_schema_at(rt_rs_memory.f[i].st, rt_rs_memory.f[i].off)->unit, U_MIB);
}

/* A machine with two cores, one interface, one disk with one filesystem and one GPU. */
typedef struct fixture {
    double cores[2];
    rt_cpu cpu;
    rt_memory memory;
    rt_net_iface iface;
    const rt_net_iface *ifaces[1];
    rt_mount mount;
    const rt_mount *mounts[1];
    rt_disk disk;
    const rt_disk *disks[1];
    rt_kv detail[3];
    rt_gpu gpu;
    const rt_gpu *gpus[1];
    rt_process process;
    rt_cgroup cgroup;
    rt_gpu_use gpu_processes;
    rt_sample s;
} fixture;

static void machine(fixture *x)
{
    memset(x, 0, sizeof *x);
    x->cores[0] = 12.5;
    x->cores[1] = NAN;
    x->cpu = (rt_cpu){.utilization_pct = 0.25, .per_core_pct = x->cores, .core_count = 2, .utime_secs = 0.2,
                      .stime_secs = 0.05, .process_count = 3, .process_cores_used = NAN,
                      .process_child_count = RT_NULL_I64,
                      .all_process_count = 74};
    x->memory = (rt_memory){.total_mib = 16384.99, .free_mib = 1000.5, .available_mib = 8000.25, .used_mib = 8384.75,
                            .used_pct = 51.17, .buffers_mib = 10, .cached_mib = 2048.9, .active_mib = 3,
                            .inactive_mib = 4, .swap_total_mib = 0, .swap_used_mib = 0, .swap_used_pct = 0};
    x->iface = (rt_net_iface){.interface = "eth0", .mac_address = NULL, .driver = "virtio_net", .operstate = "up",
                              .speed_mbps = RT_NULL_I64, .mtu = 1500, .rx_bytes_per_sec = 1024,
                              .tx_bytes_per_sec = 0.5, .rx_bytes_total = 9007199254740993u, /* 2^53 + 1 */
                              .tx_bytes_total = 7};
    x->ifaces[0] = &x->iface;
    x->mount = (rt_mount){.mount_point = "/", .filesystem = "ext4", .total_bytes = 1000, .used_bytes = 250,
                          .available_bytes = RT_NULL_U64, .used_pct = 25};
    x->mounts[0] = &x->mount;
    x->disk = (rt_disk){.device = "nvme0n1", .model = "Disk \"X\"", .device_type = "nvme",
                        .capacity_bytes = RT_NULL_U64, .read_bytes_per_sec = 0, .write_bytes_per_sec = 4096.125,
                        .read_bytes_total = 1, .write_bytes_total = 2, .mounts = x->mounts, .mount_count = 1};
    x->disks[0] = &x->disk;
    x->detail[0] = (rt_kv){"pci_device_id", "0x2330"};
    x->detail[1] = (rt_kv){"driver_version", "550.54"};
    x->detail[2] = (rt_kv){"cuda", "12.4"};
    x->gpu = (rt_gpu){.uuid = NULL, .name = "H100", .device_type = "GPU", .host_id = "0000:3b:00.0",
                      .detail = x->detail, .detail_count = 3, .utilization_pct = 87.5, .vram_total_bytes = 80,
                      .vram_used_bytes = 40, .vram_used_pct = 50, .temperature_celsius = 61.9,
                      .power_watts = 300.25, .frequency_mhz = NAN, .core_count = 16896};
    x->gpus[0] = &x->gpu;
    x->gpu_processes = (rt_gpu_use){.utilization_pct = 150, .vram_used_bytes = 1572864, .gpu_count_used = 2};
    x->s = (rt_sample){.timestamp_secs = 1700000000.987, .interval_secs = 1.0425, .cpu = &x->cpu,
                       .memory = &x->memory, .network = x->ifaces, .network_count = 1, .disk = x->disks,
                       .disk_count = 1, .gpu = x->gpus, .gpu_count = 1, .gpu_processes = &x->gpu_processes};
}

/* The same machine tracking a tree in its own cgroup. */
static void with_tree(fixture *x)
{
    x->cpu.process_cores_used = 1.5;
    x->cpu.process_child_count = 2;
    x->cgroup = (rt_cgroup){.path = "/rt", .version = "v2", .cpu_secs_total = 10};
    x->process = (rt_process){.pid = 4242, .alive = 1, .child_count = 2, .cores_used = 1.5, .utime_secs = 1.25,
                              .stime_secs = 0.25, .pss_mib = 99.9, .rss_mib = 120.2, .read_bytes = 4096,
                              .write_bytes = RT_NULL_U64, .gpu_utilization_pct = 50, .gpu_vram_used_bytes = 3145728,
                              .gpu_count_used = 1, .cgroup = &x->cgroup};
    x->s.process = &x->process;
    x->s.gpu_processes = NULL; /* the sampler fills it without a tree only */
}

static const char *line(const rt_sample *s, const rt_job *job, const rt_rs_state *st)
{
    static char buf[8192];
    rt_ob o = {.buf = buf, .cap = sizeof buf - 1};
    rt_json_rs_sample(&o, s, job, st);
    assert_true(o.len < sizeof buf);
    buf[o.len] = '\0';
    return buf;
}

/* The whole line, written out from the Rust tool's structs (the whole machine: every process's
 * GPU use in the process GPU members, as the Rust tool fills them without --pid) (its src/metrics at 3825a8c): keys
 * sorted at every level, integers where it has integer types (MiB truncated), Options null and
 * plain values at their default when ours is null, the detail map sorted. */
static void whole_machine_line(void **state)
{
    (void)state;
    fixture x;
    machine(&x);
    rt_rs_state st;
    rt_json_rs_start(&st);
    const char *want =
        "{\"cpu\":{\"cgroup_usage_secs\":null,\"cgroup_utilization_pct\":null,\"per_core_pct\":[12.5,null],"
        "\"process_child_count\":null,\"process_cores_used\":null,\"process_count\":74,"
        "\"process_disk_read_bytes\":null,\"process_disk_write_bytes\":null,\"process_gpu_usage\":1.5,"
        "\"process_gpu_utilized\":2,\"process_gpu_vram_mib\":1.5,\"process_pss_mib\":null,"
        "\"process_rss_mib\":null,\"process_stime_secs\":null,\"process_utime_secs\":null,\"stime_secs\":0.05,"
        "\"utilization_pct\":0.25,\"utime_secs\":0.2},"
        "\"disk\":[{\"capacity_bytes\":null,\"device\":\"nvme0n1\",\"device_type\":\"nvme\","
        "\"model\":\"Disk \\\"X\\\"\","
        "\"mounts\":[{\"available_bytes\":0,\"filesystem\":\"ext4\",\"mount_point\":\"/\",\"total_bytes\":1000,"
        "\"used_bytes\":250,\"used_pct\":25.0}],\"read_bytes_per_sec\":0.0,\"read_bytes_total\":1,\"serial\":null,"
        "\"vendor\":null,\"write_bytes_per_sec\":4096.125,\"write_bytes_total\":2}],"
        "\"gpu\":[{\"core_count\":16896,\"detail\":{\"cuda\":\"12.4\",\"driver_version\":\"550.54\","
        "\"pci_device_id\":\"0x2330\"},\"device_type\":\"GPU\",\"frequency_mhz\":0,\"host_id\":\"0000:3b:00.0\","
        "\"name\":\"H100\",\"power_watts\":300.25,\"temperature_celsius\":61,\"utilization_pct\":87.5,\"uuid\":\"\","
        "\"vram_total_bytes\":80,\"vram_used_bytes\":40,\"vram_used_pct\":50.0}],"
        "\"job_name\":null,"
        "\"memory\":{\"active_mib\":3,\"available_mib\":8000,\"buffers_mib\":10,\"cached_mib\":2048,\"free_mib\":1000,"
        "\"inactive_mib\":4,\"swap_total_mib\":0,\"swap_used_mib\":0,\"swap_used_pct\":0.0,\"total_mib\":16384,"
        "\"used_mib\":8384,\"used_pct\":51.17},"
        "\"network\":[{\"driver\":\"virtio_net\",\"interface\":\"eth0\",\"mac_address\":null,\"mtu\":1500,"
        "\"operstate\":\"up\",\"rx_bytes_per_sec\":1024.0,\"rx_bytes_total\":9007199254740993,"
        "\"speed_mbps\":null,\"tx_bytes_per_sec\":0.5,\"tx_bytes_total\":7}],"
        "\"resource-tracker-version\":\"" RT_VERSION "\",\"timestamp_secs\":1700000000,\"tracked_pid\":null}\n";
    assert_string_equal(line(&x.s, NULL, &st), want);
}

/* With a tree: its figures under cpu in the Rust tool's units (whole MiB, bytes of the
 * interval, a GPU's busy share as a fraction, VRAM in MiB), tracked_pid and the job's name. */
static void tree_line(void **state)
{
    (void)state;
    fixture x;
    machine(&x);
    with_tree(&x);
    rt_job job = RT_JOB_INIT;
    job.job_name = "train";
    const char *l = line(&x.s, &job, NULL);
    const char *want_cpu =
        "{\"actual_interval_ms\":1042,\"cpu\":{\"cgroup_usage_secs\":null,\"cgroup_utilization_pct\":null,"
        "\"per_core_pct\":[12.5,null],\"process_child_count\":2,\"process_cores_used\":1.5,\"process_count\":74,"
        "\"process_disk_read_bytes\":4096,\"process_disk_write_bytes\":null,\"process_gpu_usage\":0.5,"
        "\"process_gpu_utilized\":1,\"process_gpu_vram_mib\":3.0,\"process_pss_mib\":99,\"process_rss_mib\":120,"
        "\"process_stime_secs\":0.25,\"process_utime_secs\":1.25,";
    assert_memory_equal(l, want_cpu, strlen(want_cpu));
    assert_non_null(strstr(l, ",\"job_name\":\"train\",\"memory\":{"));
    assert_non_null(strstr(l, "\"timestamp_secs\":1700000000,\"tracked_pid\":4242}\n"));
}

static char out[32768];
static size_t out_len;

static long collect(void *user, const void *buf, size_t len)
{
    (void)user;
    if (out_len + len >= sizeof out)
        return -1;
    memcpy(out + out_len, buf, len);
    out_len += len;
    out[out_len] = '\0';
    return (long)len;
}

/* The writer leaves actual_interval_ms out of its first sample only, and gives the cgroup's CPU
 * seconds of the interval and its cores from the second sample on. */
static void writer_keeps_state(void **state)
{
    (void)state;
    fixture x;
    machine(&x);
    with_tree(&x);
    rt_writer *w;
    out_len = 0;
    assert_int_equal(rt_writer_new_cb(RT_FORMAT_JSON_RS, collect, NULL, NULL, &w), RT_OK);
    assert_int_equal(rt_writer_write(w, &x.s), RT_OK);
    x.cgroup.cpu_secs_total = 12.5;
    x.s.interval_secs = 0.5;
    assert_int_equal(rt_writer_write(w, &x.s), RT_OK);
    x.cgroup.cpu_secs_total = 12; /* a counter going back: no negative change */
    assert_int_equal(rt_writer_write(w, &x.s), RT_OK);
    rt_writer_free(w);
    char *second = strchr(out, '\n') + 1;
    char *third = strchr(second, '\n') + 1;
    const char *want1 = "{\"cpu\":{\"cgroup_usage_secs\":null,\"cgroup_utilization_pct\":null,";
    assert_memory_equal(out, want1, strlen(want1));
    const char *want2 = "{\"actual_interval_ms\":500,\"cpu\":{\"cgroup_usage_secs\":2.5,"
                        "\"cgroup_utilization_pct\":5.0,";
    assert_memory_equal(second, want2, strlen(want2));
    const char *want3 = "{\"actual_interval_ms\":500,\"cpu\":{\"cgroup_usage_secs\":0.0,"
                        "\"cgroup_utilization_pct\":0.0,";
    assert_memory_equal(third, want3, strlen(want3));
    /* the public formatter keeps no state: the interval is there, the cgroup's change is not */
    char buf[8192];
    size_t n = rt_format_sample(RT_FORMAT_JSON_RS, &x.s, NULL, buf, sizeof buf);
    assert_true(n < sizeof buf);
    const char *want4 = "{\"actual_interval_ms\":500,\"cpu\":{\"cgroup_usage_secs\":null,";
    assert_memory_equal(buf, want4, strlen(want4));
    char small[16];
    assert_int_equal(rt_format_sample(RT_FORMAT_JSON_RS, &x.s, NULL, small, sizeof small), n);
    assert_int_equal(rt_writer_new_cb((rt_format)4, collect, NULL, NULL, &w), RT_ERR_INVALID);
}

/* The reader takes the Rust tool's lines back (0.17): the interval from actual_interval_ms, the
 * tree's figures from cpu.process_* in our units, its bytes of the interval; the format's name. */
static void read_back(void **state)
{
    (void)state;
    fixture x;
    machine(&x);
    with_tree(&x);
    rt_writer *w;
    out_len = 0;
    assert_int_equal(rt_writer_new_cb(RT_FORMAT_JSON_RS, collect, NULL, NULL, &w), RT_OK);
    assert_int_equal(rt_writer_write(w, &x.s), RT_OK);
    x.s.timestamp_secs += 2;
    x.s.interval_secs = 2;
    assert_int_equal(rt_writer_write(w, &x.s), RT_OK);
    rt_writer_free(w);
    rt_reader *r;
    assert_int_equal(rt_reader_open_buffer("run.jsonl", out, out_len, NULL, &r), RT_OK);
    const rt_record *rec;
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_non_null(rec);
    assert_string_equal(rt_reader_format(r), "json-rs");
    assert_true(rec->process_pid == 4242);
    assert_true(fabs(rec->process_cpu_secs - 1.5) < 1e-9);
    assert_true(rec->process_pss_mib == 99); /* whole MiB, as written */
    assert_true(rec->process_read_bytes == 4096);
    assert_true(fabs(rec->process_gpu_usage - 0.5) < 1e-9);
    assert_true(fabs(rec->process_gpu_vram_mib - 3) < 1e-9);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_non_null(rec);
    assert_true(fabs(rec->interval_secs - 2) < 1e-9); /* actual_interval_ms */
    assert_true(rec->timestamp_secs == 1700000002);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_null(rec);
    rt_reader_free(r);
    /* our own line is still "json" */
    char buf[8192];
    size_t n = rt_format_sample(RT_FORMAT_JSON, &x.s, NULL, buf, sizeof buf);
    assert_int_equal(rt_reader_open_buffer("ours.jsonl", buf, n, NULL, &r), RT_OK);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_non_null(rec);
    assert_string_equal(rt_reader_format(r), "json");
    rt_reader_free(r);
}

/* The Rust tool's lines carry no is_virtual: a dm, md, zram or nbd device and a ZFS pool are told
 * by name, so the machine's disk I/O counts each byte once (sda's, not again on dm-0 above it). */
static void read_back_virtual_by_name(void **state)
{
    (void)state;
    static const char *const lines[] = {"1000", "3000"};
    char doc[4096];
    size_t len = 0;
    for (int k = 0; k < 2; k++) {
        int n = snprintf(doc + len, sizeof doc - len,
                         "{%s\"cpu\":{\"per_core_pct\":[1.0],\"process_count\":3,\"stime_secs\":0.0,"
                         "\"utilization_pct\":0.0,\"utime_secs\":0.0},\"disk\":["
                         "{\"device\":\"dm-0\",\"mounts\":[],\"read_bytes_per_sec\":%d.0,\"read_bytes_total\":%s,"
                         "\"write_bytes_per_sec\":0.0,\"write_bytes_total\":0},"
                         "{\"device\":\"sda\",\"mounts\":[],\"read_bytes_per_sec\":%d.0,\"read_bytes_total\":%s,"
                         "\"write_bytes_per_sec\":0.0,\"write_bytes_total\":0},"
                         "{\"device\":\"zram0\",\"mounts\":[],\"read_bytes_per_sec\":%d.0,\"read_bytes_total\":%s,"
                         "\"write_bytes_per_sec\":0.0,\"write_bytes_total\":0}],"
                         "\"gpu\":[],\"job_name\":null,\"memory\":{\"total_mib\":100},\"network\":[],"
                         "\"resource-tracker-version\":\"0.1.14\",\"timestamp_secs\":%d,\"tracked_pid\":null}\n",
                         k ? "\"actual_interval_ms\":1000," : "", k * 2000, lines[k], k * 2000, lines[k], k * 5000,
                         k ? "10500" : "500", 1700000000 + k);
        assert_true(n > 0 && (size_t)n < sizeof doc - len);
        len += (size_t)n;
    }
    rt_reader *r;
    assert_int_equal(rt_reader_open_buffer("rust.jsonl", doc, len, NULL, &r), RT_OK);
    const rt_record *rec;
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_non_null(rec);
    assert_string_equal(rt_reader_format(r), "json-rs");
    assert_true(fabs(rec->disk_read_bytes - 2000) < 1e-6); /* sda's 2000 bytes, once */
    rt_reader_free(r);
}

/* The members the Rust tool fills its own way (0.18): a link's speed as its file says it (-1
 * where the driver knows none, null where it cannot be read, ours where known; a struct filled
 * before 0.18, 0 there, is null as before); an NVIDIA GPU's host_id its NVML index (a GPU
 * without a handle leaves a gap, as there), its uuid NVML's or "nvidia-INDEX", its detail
 * driver_version and NVML's pci_bus_id only; an AMD GPU's uuid and host_id its PCI address,
 * its detail pci_bus; another GPU as ours. */
static void gpus_and_links(void **state)
{
    (void)state;
    fixture x;
    machine(&x);
    rt_net_iface links[4] = {x.iface, x.iface, x.iface, x.iface};
    const char *names[4] = {"a", "b", "c", "d"};
    int64_t speed[4] = {RT_NULL_I64, RT_NULL_I64, 10000, RT_NULL_I64};
    int64_t reported[4] = {-1, RT_NULL_I64, 10000, 0};
    const rt_net_iface *lp[4];
    for (int i = 0; i < 4; i++) {
        links[i].interface = names[i];
        links[i].speed_mbps = speed[i];
        links[i].speed_mbps_reported = reported[i];
        lp[i] = &links[i];
    }
    x.s.network = lp;
    x.s.network_count = 4;
    static const rt_kv nv[] = {{"driver", "nvidia"}, {"driver_version", "550.54.15"}, {"cuda_driver_version", "12.4"},
                               {"pci_device_id", "0x20b010de"}};
    static const rt_kv amd[] = {{"driver", "amdgpu"}, {"pci_device_id", "0x740f"}, {"card", "card1"}};
    static const rt_kv intel[] = {{"driver", "i915"}, {"card", "card2"}};
    rt_gpu g[4];
    for (int i = 0; i < 4; i++)
        g[i] = x.gpu;
    g[0].uuid = "GPU-1", g[0].host_id = "0000:3b:00.0", g[0].detail = nv, g[0].detail_count = 4;
    g[0].nvml_index = 1, g[0].nvml_bus_id = "00000000:3B:00.0"; /* NVML's 0 had no handle */
    g[1].uuid = NULL, g[1].host_id = "0000:86:00.0", g[1].detail = nv, g[1].detail_count = 2;
    g[1].nvml_index = 2, g[1].nvml_bus_id = NULL;
    g[2].uuid = "amd-unique", g[2].host_id = "0000:03:00.0", g[2].detail = amd, g[2].detail_count = 3;
    g[2].nvml_index = RT_NULL_I64;
    g[3].uuid = NULL, g[3].host_id = "0000:04:00.0", g[3].detail = intel, g[3].detail_count = 2;
    g[3].nvml_index = RT_NULL_I64;
    const rt_gpu *gp[4] = {&g[0], &g[1], &g[2], &g[3]};
    x.s.gpu = gp;
    x.s.gpu_count = 4;
    const char *l = line(&x.s, NULL, NULL);
    const char *want_speed[4] = {"\"interface\":\"a\",", "\"interface\":\"b\",", "\"interface\":\"c\",",
                                 "\"interface\":\"d\","};
    const char *speed_text[4] = {"\"speed_mbps\":-1,", "\"speed_mbps\":null,", "\"speed_mbps\":10000,",
                                 "\"speed_mbps\":null,"};
    for (int i = 0; i < 4; i++) {
        const char *at = strstr(l, want_speed[i]);
        assert_non_null(at);
        const char *sp = strstr(at, "\"speed_mbps\":");
        assert_non_null(sp);
        assert_memory_equal(sp, speed_text[i], strlen(speed_text[i]));
    }
    const char *want[4] = {
        "{\"core_count\":16896,\"detail\":{\"driver_version\":\"550.54.15\",\"pci_bus_id\":\"00000000:3B:00.0\"},"
        "\"device_type\":\"GPU\",\"frequency_mhz\":0,\"host_id\":\"1\",\"name\":\"H100\",\"power_watts\":300.25,"
        "\"temperature_celsius\":61,\"utilization_pct\":87.5,\"uuid\":\"GPU-1\",",
        "{\"core_count\":16896,\"detail\":{\"driver_version\":\"550.54.15\"},\"device_type\":\"GPU\","
        "\"frequency_mhz\":0,\"host_id\":\"2\",\"name\":\"H100\",\"power_watts\":300.25,\"temperature_celsius\":61,"
        "\"utilization_pct\":87.5,\"uuid\":\"nvidia-2\",",
        "{\"core_count\":16896,\"detail\":{\"pci_bus\":\"0000:03:00.0\"},\"device_type\":\"GPU\",\"frequency_mhz\":0,"
        "\"host_id\":\"0000:03:00.0\",\"name\":\"H100\",\"power_watts\":300.25,\"temperature_celsius\":61,"
        "\"utilization_pct\":87.5,\"uuid\":\"0000:03:00.0\",",
        "{\"core_count\":16896,\"detail\":{\"card\":\"card2\",\"driver\":\"i915\"},\"device_type\":\"GPU\","
        "\"frequency_mhz\":0,\"host_id\":\"0000:04:00.0\",\"name\":\"H100\",\"power_watts\":300.25,"
        "\"temperature_celsius\":61,\"utilization_pct\":87.5,\"uuid\":\"\",",
    };
    const char *at = strstr(l, "\"gpu\":[");
    assert_non_null(at);
    at += 7;
    for (int i = 0; i < 4; i++) {
        assert_memory_equal(at, want[i], strlen(want[i]));
        at = strstr(at, "\"vram_used_pct\":"); /* the GPU's last member: the next GPU after its "}," */
        assert_non_null(at);
        at = strchr(at, '}') + 2;
    }
    /* NVIDIA GPUs of a sample built without their NVML index (0 there): their place among them */
    g[0].nvml_index = 0, g[1].nvml_index = 0;
    l = line(&x.s, NULL, NULL);
    assert_non_null(strstr(l, "\"host_id\":\"0\",\"name\":\"H100\",\"power_watts\":300.25,\"temperature_celsius\":61,"
                              "\"utilization_pct\":87.5,\"uuid\":\"GPU-1\","));
    assert_non_null(strstr(l, "\"uuid\":\"nvidia-1\","));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shortest_floats), cmocka_unit_test(tables_follow_schema),
        cmocka_unit_test(whole_machine_line), cmocka_unit_test(tree_line),
        cmocka_unit_test(writer_keeps_state), cmocka_unit_test(read_back),
        cmocka_unit_test(read_back_virtual_by_name), cmocka_unit_test(gpus_and_links),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
