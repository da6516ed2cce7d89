/* test_schema.c - the sample's schema (core/schema.h) held to the header: every member of every
 * public sample struct is in its table or named here as not a figure (pointers, arrays, their
 * counts), with the size its type says; the Prometheus places run 0..k-1 and families are
 * unique; units come from the documented list; and the public listing (rt_schema_field_*)
 * gives every field with its struct, type, unit, version and help, and nothing past the end;
 * each field's name length and its place fit the reader's slots (analysis/jsonline.h); and the
 * CSV's 32 shared columns and the 4 of energy after them (docs/contracts.md §3): each that shows
 * one figure is held to its field, unit and decimals; gpu_tracker's units (core/units.h) and
 * their public lookup. */
#include "unit.h"

#include <string.h>

#include "core/core.h"
#include "core/schema.h"
#include "core/units.h"

/* A member of a struct that is not a figure, with its place. */
typedef struct other {
    size_t off, size;
} other;

#define OTHER(st, m)                                                                                                   \
    {                                                                                                                  \
        offsetof(st, m), sizeof(((st *)0)->m)                                                                          \
    }

typedef struct checked {
    const rt_fstruct *st;
    size_t size; /* sizeof the struct */
    other others[8];
    size_t nothers;
} checked;

static const checked structs[] = {
    {&rt_schema_sample,
     sizeof(rt_sample),
     {OTHER(rt_sample, cpu), OTHER(rt_sample, memory), OTHER(rt_sample, network), OTHER(rt_sample, network_count),
      OTHER(rt_sample, disk), OTHER(rt_sample, disk_count), OTHER(rt_sample, gpu), OTHER(rt_sample, gpu_count)},
     8},
    {&rt_schema_cpu, sizeof(rt_cpu), {OTHER(rt_cpu, per_core_pct)}, 1},
    {&rt_schema_memory, sizeof(rt_memory), {{0, 0}}, 0},
    {&rt_schema_net_iface, sizeof(rt_net_iface), {OTHER(rt_net_iface, speed_mbps_reported)}, 1},
    {&rt_schema_disk, sizeof(rt_disk), {OTHER(rt_disk, mounts), OTHER(rt_disk, mount_count)}, 2},
    {&rt_schema_mount, sizeof(rt_mount), {{0, 0}}, 0},
    {&rt_schema_gpu,
     sizeof(rt_gpu),
     {OTHER(rt_gpu, detail), OTHER(rt_gpu, detail_count), OTHER(rt_gpu, nvml_index), OTHER(rt_gpu, nvml_bus_id),
      OTHER(rt_gpu, mig), OTHER(rt_gpu, mig_count)},
     6},
    {&rt_schema_pressure, sizeof(rt_pressure), {{0, 0}}, 0},
    {&rt_schema_cgroup, sizeof(rt_cgroup), {OTHER(rt_cgroup, pressure)}, 1},
    {&rt_schema_process,
     sizeof(rt_process),
     {OTHER(rt_process, cgroup), OTHER(rt_process, main), OTHER(rt_process, descendants), OTHER(rt_process, combined)},
     4},
    {&rt_schema_part, sizeof(rt_process_part), {{0, 0}}, 0},
    {&rt_schema_host, sizeof(rt_host), {{0, 0}}, 0},
    {&rt_schema_cloud, sizeof(rt_cloud), {{0, 0}}, 0},
    {&rt_schema_energy, sizeof(rt_energy), {OTHER(rt_energy, domain), OTHER(rt_energy, domain_count)}, 2},
    {&rt_schema_energy_domain, sizeof(rt_energy_domain), {{0, 0}}, 0},
    {&rt_schema_request, sizeof(rt_request), {OTHER(rt_request, struct_size)}, 1},
    {&rt_schema_gpu_use, sizeof(rt_gpu_use), {{0, 0}}, 0},
    {&rt_schema_gpu_mig, sizeof(rt_gpu_mig), {{0, 0}}, 0},
};

/* rt_sample's members added in 0.6, 0.14, 0.15, 0.16, 0.17 and 0.18 are pointers too. */
static const other sample_more[] = {OTHER(rt_sample, process),      OTHER(rt_sample, pressure),
                                    OTHER(rt_sample, cgroup),       OTHER(rt_sample, phases),
                                    OTHER(rt_sample, energy),       OTHER(rt_sample, request),
                                    OTHER(rt_sample, gpu_processes), OTHER(rt_sample, member)};

static size_t type_size(rt_field_type t)
{
    switch (t) {
    case RT_FIELD_STRING: return sizeof(const char *);
    case RT_FIELD_U64: return sizeof(uint64_t);
    case RT_FIELD_I64: return sizeof(int64_t);
    case RT_FIELD_DOUBLE: return sizeof(double);
    case RT_FIELD_FLAG: return sizeof(int);
    }
    return 0;
}

/* Marks [off, off + size) of a struct of n bytes as taken; fails on an overlap. */
static void take(unsigned char *used, size_t n, size_t off, size_t size, const char *what)
{
    assert_true(off + size <= n);
    for (size_t b = off; b < off + size; b++) {
        if (used[b])
            fail_msg("%s overlaps another member at byte %zu", what, b);
        used[b] = 1;
    }
}

/* Every byte of every struct is a listed figure, a named non-figure or padding: a run of
 * untaken bytes is shorter than 8 and ends where an 8-byte member may start (or at the end),
 * so a member added to the header and not to the schema fails here. */
static void every_member_listed(void **state)
{
    (void)state;
    for (size_t s = 0; s < RT_ARRAY_LEN(structs); s++) {
        const checked *c = &structs[s];
        unsigned char used[1024] = {0};
        assert_true(c->size <= sizeof used);
        for (size_t i = 0; i < c->st->n; i++) {
            const rt_field *f = &c->st->f[i];
            if (f->size != type_size(f->type))
                fail_msg("%s.%s: %zu bytes for its type", c->st->name, f->name, f->size);
            take(used, c->size, f->off, f->size, f->name);
        }
        for (size_t i = 0; i < c->nothers; i++)
            take(used, c->size, c->others[i].off, c->others[i].size, "a non-figure");
        if (c->st == &rt_schema_sample)
            for (size_t i = 0; i < RT_ARRAY_LEN(sample_more); i++)
                take(used, c->size, sample_more[i].off, sample_more[i].size, "a non-figure");
        for (size_t b = 0; b < c->size;) {
            if (used[b]) {
                b++;
                continue;
            }
            size_t e = b;
            while (e < c->size && !used[e])
                e++;
            if (e - b >= 8 || (e % 8 != 0 && e != c->size))
                fail_msg("%s: bytes %zu..%zu are in no table", c->st->name, b, e);
            b = e;
        }
    }
}

static bool unit_known(rt_unit u)
{
    return (unsigned)u < U_COUNT_OF_UNITS && rt_unit_name(u) != NULL;
}

/* Names unique within a struct, units known, versions no later than this one, decimals sane;
 * strings and flags carry no unit. */
static void fields_well_formed(void **state)
{
    (void)state;
    for (size_t s = 0; s < RT_ARRAY_LEN(structs); s++) {
        const rt_fstruct *st = structs[s].st;
        assert_true(st->n <= RT_SCHEMA_MAX_FIELDS);
        for (size_t i = 0; i < st->n; i++) {
            const rt_field *f = &st->f[i];
            if (!unit_known(f->unit))
                fail_msg("%s.%s: unit %d", st->name, f->name, (int)f->unit);
            if ((f->type == RT_FIELD_STRING || f->type == RT_FIELD_FLAG) && f->unit != U_NONE)
                fail_msg("%s.%s: a unit for a string or flag", st->name, f->name);
            unsigned major, minor;
            assert_int_equal(sscanf(f->since, "%u.%u", &major, &minor), 2);
            assert_true(major * 100 + minor <= RT_VERSION_MAJOR * 100 + RT_VERSION_MINOR);
            assert_true(f->jdec == RT_NO_JSON || (f->jdec >= 0 && f->jdec <= 9));
            assert_non_null(f->help);
            assert_true(strlen(f->help) > 3);
            for (size_t j = 0; j < i; j++)
                if (strcmp(st->f[j].name, f->name) == 0)
                    fail_msg("%s.%s listed twice", st->name, f->name);
            assert_int_equal(f->nlen, strlen(f->name));
            /* the reader keeps a figure in the slot off / 4 of its struct (analysis/jsonline.h):
             * every member 4-byte aligned and at least 4 bytes, so no two share a slot */
            if (f->off % 4 != 0 || f->size < 4 || (f->off + f->size) > structs[s].size)
                fail_msg("%s.%s: off %zu size %zu, no slot of its own", st->name, f->name, f->off, f->size);
        }
    }
}

/* Places 0..k-1, once each; a family's members follow each other and all carry a label; a
 * family's name is used by one struct only, and no name ends with a suffix Prometheus adds. */
static void prom_places_and_families(void **state)
{
    (void)state;
    const char *seen[256];
    size_t nseen = 0;
    for (size_t s = 0; s < RT_ARRAY_LEN(structs); s++) {
        const rt_fstruct *st = structs[s].st;
        int count[RT_SCHEMA_MAX_FIELDS] = {0};
        size_t k = 0;
        for (size_t i = 0; i < st->n; i++) {
            const rt_fprom *p = &st->f[i].prom;
            if (!p->name)
                continue;
            k++;
            assert_true(p->seq >= 0 && p->seq < RT_SCHEMA_MAX_FIELDS);
            count[p->seq]++;
            assert_true(strncmp(p->name, "resource_tracker_", 17) == 0);
            size_t n = strlen(p->name);
            assert_false(n > 6 && strcmp(p->name + n - 6, "_total") == 0);
            assert_false(n > 5 && strcmp(p->name + n - 5, "_info") == 0);
            assert_true(st->f[i].type != RT_FIELD_STRING);
        }
        for (size_t q = 0; q < RT_SCHEMA_MAX_FIELDS; q++)
            assert_int_equal(count[q], q < k ? 1 : 0);
        size_t order[RT_SCHEMA_MAX_FIELDS];
        assert_int_equal(rt_schema_prom_order(st, order), k);
        for (size_t j = 0; j < k; j++) {
            const rt_fprom *p = &st->f[order[j]].prom;
            assert_int_equal(p->seq, (int)j);
            bool same_prev = j > 0 && strcmp(st->f[order[j - 1]].prom.name, p->name) == 0;
            bool same_next = j + 1 < k && strcmp(st->f[order[j + 1]].prom.name, p->name) == 0;
            if (same_prev || same_next)
                assert_non_null(p->label);
            if (same_prev)
                continue;
            for (size_t x = 0; x < nseen; x++)
                if (strcmp(seen[x], p->name) == 0)
                    fail_msg("family %s made twice", p->name);
            assert_true(nseen < RT_ARRAY_LEN(seen));
            seen[nseen++] = p->name;
        }
    }
}

/* OTLP members: numbers only, a kind, and the UCUM unit their schema unit means (the exporter turns
 * MiB into bytes and percent into a ratio; test_otlp checks the places). */
static void otlp_members(void **state)
{
    (void)state;
    static const struct {
        rt_unit u;
        const char *ucum;
    } ucum[] = {{U_MIB, "By"}, {U_BYTES, "By"}, {U_S, "s"}, {U_PCT, "1"}, {U_CORES, "{cpu}"}};
    size_t members = 0;
    for (size_t s = 0; s < RT_ARRAY_LEN(structs); s++) {
        const rt_fstruct *st = structs[s].st;
        for (size_t i = 0; i < st->n; i++) {
            const rt_field *f = &st->f[i];
            if (!f->otlp.name)
                continue;
            members++;
            assert_true(f->type != RT_FIELD_STRING);
            assert_true(f->otlp.kind >= RT_OTLP_GAUGE && f->otlp.kind <= RT_OTLP_UPDOWN);
            assert_non_null(f->otlp.unit);
            assert_true(strncmp(f->otlp.name, "system.", 7) == 0 || strncmp(f->otlp.name, "process.", 8) == 0 ||
                        strncmp(f->otlp.name, "resource_tracker.", 17) == 0);
            assert_true((f->otlp.key == NULL) == (f->otlp.value == NULL));
            for (size_t u = 0; u < RT_ARRAY_LEN(ucum); u++)
                if (f->unit == ucum[u].u && strcmp(f->otlp.unit, ucum[u].ucum) != 0)
                    fail_msg("%s.%s: unit %s shown as %s", st->name, f->name, rt_unit_name(f->unit), f->otlp.unit);
            if (f->unit == U_COUNT)
                assert_true(f->otlp.unit[0] == '{');
        }
    }
    assert_int_equal(members, 34);
}

/* The public listing: every table's fields in turn, each with its struct, name, type, unit,
 * version and help; NULL and -1 past the end. */
static void public_listing(void **state)
{
    (void)state;
    size_t total = 0;
    for (size_t s = 0; s < RT_ARRAY_LEN(structs); s++)
        total += structs[s].st->n;
    assert_int_equal(rt_schema_field_count(), total);
    bool rss = false, part = false;
    for (size_t i = 0; i < total; i++) {
        assert_non_null(rt_schema_field_struct(i));
        assert_non_null(rt_schema_field_name(i));
        assert_non_null(rt_schema_field_unit(i));
        assert_non_null(rt_schema_field_since(i));
        assert_non_null(rt_schema_field_help(i));
        assert_in_range(rt_schema_field_type(i), RT_FIELD_STRING, RT_FIELD_FLAG);
        if (strcmp(rt_schema_field_struct(i), "process") == 0 && strcmp(rt_schema_field_name(i), "rss_mib") == 0) {
            rss = true;
            assert_string_equal(rt_schema_field_unit(i), "MiB");
            assert_int_equal(rt_schema_field_type(i), RT_FIELD_DOUBLE);
            assert_string_equal(rt_schema_field_since(i), "0.1");
        }
        if (strcmp(rt_schema_field_struct(i), "process_part") == 0 &&
            strcmp(rt_schema_field_name(i), "gpu_vram_used_bytes") == 0) {
            part = true;
            assert_int_equal(rt_schema_field_type(i), RT_FIELD_U64);
            assert_string_equal(rt_schema_field_since(i), "0.8");
        }
    }
    assert_true(rss && part);
    assert_null(rt_schema_field_struct(total));
    assert_null(rt_schema_field_name(total));
    assert_null(rt_schema_field_unit(total));
    assert_null(rt_schema_field_since(total));
    assert_null(rt_schema_field_help(total));
    assert_int_equal(rt_schema_field_type(total), -1);
    for (int u = 0; u < U_COUNT_OF_UNITS; u++) /* every unit has its word, and only those do */
        assert_non_null(rt_unit_name((rt_unit)u));
    assert_null(rt_unit_name(U_COUNT_OF_UNITS));
    assert_null(rt_schema_field_name((size_t)-1));
}

/* ---- the CSV's 32 columns (docs/contracts.md §3) held to the schema ------------------------- */

/* A CSV column: its name and, for a column that shows one figure, the field (struct st, name)
 * with its unit, the factor from that unit to the column's and the column's decimals (-1: an
 * integer as it is). The other columns are sums over disks, interfaces or GPUs (csv.c). */
typedef struct csv_col {
    const char *name;
    const rt_fstruct *st;
    const char *field;
    rt_unit unit;
    double scale;
    int dec;
} csv_col;

#define GB 1e9 /* the CSV's GB: 10^9 bytes, as the Python tracker and the Rust tool */
static const csv_col csv_cols[] = {
    {"timestamp", &rt_schema_sample, "timestamp_secs", U_S, 1, 3},
    {"system_processes", &rt_schema_cpu, "all_process_count", U_COUNT, 1, -1},
    {"system_utime", &rt_schema_cpu, "utime_secs", U_S, 1, 6},
    {"system_stime", &rt_schema_cpu, "stime_secs", U_S, 1, 6},
    {"system_cpu_usage", &rt_schema_cpu, "utilization_pct", U_CORES, 1, 4},
    {"system_memory_free_mib", &rt_schema_memory, "free_mib", U_MIB, 1, 3},
    {"system_memory_used_mib", &rt_schema_memory, "used_mib", U_MIB, 1, 3},
    {"system_memory_buffers_mib", &rt_schema_memory, "buffers_mib", U_MIB, 1, 3},
    {"system_memory_cached_mib", &rt_schema_memory, "cached_mib", U_MIB, 1, 3},
    {"system_memory_active_mib", &rt_schema_memory, "active_mib", U_MIB, 1, 3},
    {"system_memory_inactive_mib", &rt_schema_memory, "inactive_mib", U_MIB, 1, 3},
    {.name = "system_disk_read_bytes"},
    {.name = "system_disk_write_bytes"},
    {"system_disk_space_total_gb", &rt_schema_sample, "disk_space_total_bytes", U_BYTES, 1 / GB, 3},
    {"system_disk_space_used_gb", NULL, NULL, U_NONE, 0, 0}, /* total - free: test_format */
    {"system_disk_space_free_gb", &rt_schema_sample, "disk_space_free_bytes", U_BYTES, 1 / GB, 3},
    {.name = "system_net_recv_bytes"},
    {.name = "system_net_sent_bytes"},
    {.name = "system_gpu_usage"},
    {.name = "system_gpu_vram_mib"},
    {.name = "system_gpu_utilized"},
    {"process_pid", &rt_schema_process, "pid", U_PID, 1, -1},
    {"process_children", &rt_schema_process, "child_count", U_COUNT, 1, -1},
    {"process_utime", &rt_schema_process, "utime_secs", U_S, 1, 6},
    {"process_stime", &rt_schema_process, "stime_secs", U_S, 1, 6},
    {"process_cpu_usage", &rt_schema_process, "cores_used", U_CORES, 1, 4},
    {"process_memory_mib", &rt_schema_process, "pss_mib", U_MIB, 1, 3},
    {"process_disk_read_bytes", &rt_schema_process, "read_bytes", U_BYTES, 1, -1},
    {"process_disk_write_bytes", &rt_schema_process, "write_bytes", U_BYTES, 1, -1},
    {"process_gpu_usage", &rt_schema_process, "gpu_utilization_pct", U_PCT, 0.01, 4},
    {"process_gpu_vram_mib", &rt_schema_process, "gpu_vram_used_bytes", U_BYTES, 1 / 1048576.0, 3},
    {"process_gpu_utilized", &rt_schema_process, "gpu_count_used", U_COUNT, 1, -1},
    /* 0.15: the tool's own columns after the 32 shared ones */
    {"system_energy_joules", &rt_schema_energy, "energy_joules", U_J, 1, 6},
    {.name = "system_energy_method"},
    {"process_energy_joules", &rt_schema_energy, "process_energy_joules", U_J, 1, 6},
    {.name = "process_energy_method"},
};
#define CSV_SHARED 32

static const rt_field *field_named(const rt_fstruct *st, const char *name)
{
    for (size_t i = 0; i < st->n; i++)
        if (strcmp(st->f[i].name, name) == 0)
            return &st->f[i];
    return NULL;
}

/* Sets every number of table st in the struct at base to a value of its own (k counts them). */
static void distinct_values(const rt_fstruct *st, void *base, unsigned *k)
{
    for (size_t i = 0; i < st->n; i++) {
        const rt_field *f = &st->f[i];
        char *m = (char *)base + f->off;
        ++*k;
        uint64_t u = *k * 1000000007ull;
        int64_t v = (int64_t)u;
        double d = *k * 10 + 0.123456789;
        switch (f->type) {
        case RT_FIELD_DOUBLE: memcpy(m, &d, sizeof d); break;
        case RT_FIELD_U64: memcpy(m, &u, sizeof u); break;
        case RT_FIELD_I64: memcpy(m, &v, sizeof v); break;
        case RT_FIELD_FLAG: *(int *)m = 1; break;
        default: break;
        }
    }
}

/* The header is the columns' names in order; every column that shows one figure is a field of
 * the schema with the unit the column's name says, and the CSV row writes that field's value
 * (each field set to a value of its own) with the column's decimals: a column cannot drift from
 * its figure without this test failing. */
static void csv_columns_are_schema_fields(void **state)
{
    (void)state;
    char header[1024] = "";
    size_t at = 0;
    for (size_t c = 0; c < RT_ARRAY_LEN(csv_cols) && at < sizeof header; c++)
        at += (size_t)snprintf(header + at, sizeof header - at, "%s%s", csv_cols[c].name,
                               c + 1 < RT_ARRAY_LEN(csv_cols) ? "," : "\n");
    assert_true(at < sizeof header);
    assert_int_equal(RT_ARRAY_LEN(csv_cols), CSV_SHARED + 4);
    assert_string_equal(rt_format_header(RT_FORMAT_CSV_ENERGY), header);
    /* the plain CSV (0.18): the 32 alone, the same names up to the energy */
    const char *plain = rt_csv_header();
    assert_ptr_equal(rt_format_header(RT_FORMAT_CSV), plain);
    size_t pl = strlen(plain);
    assert_true(pl > 1 && strncmp(plain, header, pl - 1) == 0 && plain[pl - 1] == '\n' && header[pl - 1] == ',');

    rt_sample s;
    rt_cpu cpu;
    rt_memory mem;
    rt_process proc;
    rt_energy en;
    memset(&s, 0, sizeof s);
    memset(&cpu, 0, sizeof cpu);
    memset(&mem, 0, sizeof mem);
    memset(&proc, 0, sizeof proc);
    memset(&en, 0, sizeof en);
    unsigned k = 0;
    distinct_values(&rt_schema_sample, &s, &k);
    distinct_values(&rt_schema_cpu, &cpu, &k);
    distinct_values(&rt_schema_memory, &mem, &k);
    distinct_values(&rt_schema_process, &proc, &k);
    distinct_values(&rt_schema_energy, &en, &k);
    en.method = "measured";
    en.process_method = "estimated";
    s.cpu = &cpu;
    s.memory = &mem;
    s.process = &proc;
    s.energy = &en;
    char row[2048];
    char plain_row[2048];
    size_t pn = rt_format_sample(RT_FORMAT_CSV, &s, NULL, plain_row, sizeof plain_row);
    assert_true(rt_format_sample(RT_FORMAT_CSV_ENERGY, &s, NULL, row, sizeof row) < sizeof row);
    /* the plain row is the energy row cut before its energy cells */
    assert_true(pn > 1 && strncmp(plain_row, row, pn - 1) == 0 && row[pn - 1] == ',' && plain_row[pn - 1] == '\n');
    char *cell = row;
    for (size_t c = 0; c < RT_ARRAY_LEN(csv_cols); c++) {
        const csv_col *col = &csv_cols[c];
        char *end = cell + strcspn(cell, ",\n");
        char got[128];
        snprintf(got, sizeof got, "%.*s", (int)(end - cell), cell);
        cell = *end ? end + 1 : end;
        if (!col->st)
            continue;
        const rt_field *f = field_named(col->st, col->field);
        if (!f)
            fail_msg("CSV column %s: no field %s.%s", col->name, col->st->name, col->field);
        if (f->unit != col->unit)
            fail_msg("CSV column %s: %s.%s is in %s", col->name, col->st->name, col->field, rt_unit_name(f->unit));
        const void *base = col->st == &rt_schema_sample   ? (const void *)&s
                         : col->st == &rt_schema_cpu      ? (const void *)&cpu
                         : col->st == &rt_schema_memory   ? (const void *)&mem
                         : col->st == &rt_schema_energy   ? (const void *)&en
                                                          : (const void *)&proc;
        double v = rt_schema_num(f->type, (const char *)base + f->off) * col->scale;
        char want[128];
        if (col->dec < 0) {
            snprintf(want, sizeof want, "%.0f", v);
        } else {
            snprintf(want, sizeof want, "%.*f", col->dec, v);
            if (c > 0) { /* trailing zeros trimmed but in the timestamp */
                size_t n = strlen(want);
                while (n > 0 && want[n - 1] == '0')
                    want[--n] = '\0';
                if (n > 0 && want[n - 1] == '.')
                    want[--n] = '\0';
            }
        }
        if (strcmp(got, want) != 0)
            fail_msg("CSV column %s: \"%s\", %s.%s gives \"%s\"", col->name, got, col->st->name, col->field, want);
    }
    /* the methods as words, each after its figure */
    size_t n = strlen(row);
    assert_true(n > 10 && strcmp(row + n - 10, "estimated\n") == 0);
    assert_non_null(strstr(row, ",measured,"));
}

/* gpu_tracker's units (core/units.h) and their public lookup: sizes as gpu_tracker counts them,
 * each unit's factor from MiB or seconds and its key suffix following from its size and name. */
static void gpu_tracker_units(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double size;
    } mem[] = {{"bytes", 1}, {"kilobytes", 1e3}, {"megabytes", 1e6}, {"gigabytes", 1e9}, {"terabytes", 1e12}},
      tm[] = {{"seconds", 1}, {"minutes", 60}, {"hours", 3600}, {"days", 86400}};
    for (size_t i = 0; i < RT_ARRAY_LEN(mem); i++) {
        assert_true(rt_memory_unit_bytes(mem[i].name) == mem[i].size);
        assert_true(rt_time_unit_secs(mem[i].name) == 0);
    }
    for (size_t i = 0; i < RT_ARRAY_LEN(tm); i++) {
        assert_true(rt_time_unit_secs(tm[i].name) == tm[i].size);
        assert_true(rt_memory_unit_bytes(tm[i].name) == 0);
    }
    assert_true(rt_memory_unit_bytes(NULL) == 0 && rt_time_unit_secs(NULL) == 0);
    assert_true(rt_memory_unit_bytes("Gigabytes") == 0 && rt_time_unit_secs("hour") == 0);
    for (size_t i = 0; i < RT_GT_MEMORY_UNITS; i++) {
        const rt_gt_unit *u = &rt_gt_memory_units[i];
        assert_true(u->factor == 1048576.0 / u->size);
        assert_true(u->suffix[0] == '_' && strcmp(u->suffix + 1, u->name) == 0);
    }
    for (size_t i = 0; i < RT_GT_TIME_UNITS; i++) {
        const rt_gt_unit *u = &rt_gt_time_units[i];
        assert_true(u->factor == 1.0 / u->size);
        assert_true(u->suffix[0] == '_' && strcmp(u->suffix + 1, u->name) == 0);
    }
    assert_string_equal(RT_GT_DEFAULT_MEMORY->name, "gigabytes");
    assert_string_equal(RT_GT_DEFAULT_TIME->name, "hours");
    assert_string_equal(rt_binary_units[0], "B");
    assert_string_equal(rt_binary_units[2], "MiB");
    assert_string_equal(rt_binary_units[RT_BINARY_UNITS - 1], "PiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_member_listed),
        cmocka_unit_test(fields_well_formed),
        cmocka_unit_test(prom_places_and_families),
        cmocka_unit_test(otlp_members),
        cmocka_unit_test(public_listing),
        cmocka_unit_test(csv_columns_are_schema_fields),
        cmocka_unit_test(gpu_tracker_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
