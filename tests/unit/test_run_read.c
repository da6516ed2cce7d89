/* test_run_read.c - rt_run_read (embed/recorded.c): every kind of recorded run the fixtures hold
 * (the tool's JSON lines and CSV, the Python tracker's CSV files, saved snapshots) told apart
 * by content and fed to statistics and a report; and the failures, each with a message naming
 * the file (and the line where the reader knows it): missing, empty, unknown, a header alone,
 * a truncated line, a corrupt gzip file, a line too long, an older caller's shorter info; and
 * gzipped JSON lines and CSV read as plain ones. */
#include "unit.h"

#include "resource_tracker.h"
#include "core/gzip.h"

typedef struct logbook {
    char last[1024];
    int warnings, errors;
} logbook;

static void keep_log(void *user, rt_log_level level, const char *msg)
{
    logbook *b = user;
    if (level == RT_LOG_WARN)
        b->warnings++;
    if (level == RT_LOG_ERROR)
        b->errors++;
    snprintf(b->last, sizeof b->last, "%s", msg);
}

static const char *fixture(const char *rel)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", RT_FIXTURES, rel);
    return path;
}

/* A file of text in a fresh temporary directory (the name stays valid until the next call). */
static const char *temp_file(const char *name, const void *text, size_t len)
{
    static char path[1024];
    char dir[] = "/tmp/rt-run-read-XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    return path;
}

/* Removes a temp_file and its directory. */
static void remove_temp(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* rt_run_read of path into one fresh statistics, its log kept in b (zeroed first) and its info
 * in info. Returns its error. */
static rt_error read_logged(const char *path, logbook *b, rt_run_read_info *info)
{
    *b = (logbook){0};
    *info = (rt_run_read_info){.struct_size = sizeof *info};
    rt_run_read_options o = RT_RUN_READ_OPTIONS_INIT;
    o.log = keep_log;
    o.log_user = b;
    rt_stats *st = rt_stats_new();
    rt_error e = rt_run_read(path, &o, &st, 1, NULL, info);
    rt_stats_free(st);
    return e;
}

static void every_kind(void **state)
{
    (void)state;
    const struct {
        const char *rel, *format;
    } kinds[] = {
        {"runs/tool.jsonl", "json"},
        {"runs/tool.csv", "csv"},
        {"runs/python-process.csv", "python-process"},
        {"runs/python-system.csv", "python-system"},
        {"runs/python-combined.csv", "python-combined"},
        {"snapshots/python-tracker.json.gz", "snapshot"},
        {"snapshots/libresource-tracker-0.5.json.gz", "snapshot"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        rt_stats *st[2] = {rt_stats_new(), rt_stats_new()};
        rt_report *rep = rt_report_new();
        rt_run_read_info info = {.struct_size = sizeof info};
        assert_int_equal(rt_run_read(fixture(kinds[i].rel), NULL, st, 2, rep, &info), RT_OK);
        assert_string_equal(info.format, kinds[i].format);
        assert_int_equal(info.opened, 1);
        assert_true(info.records > 0);
        assert_string_equal(info.message, "");
        /* every accumulator saw every sample */
        assert_int_equal(rt_stats_summary(st[0])->samples, info.records);
        assert_int_equal(rt_stats_summary(st[1])->samples, info.records);
        int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        rt_report_info ri = RT_REPORT_INFO_INIT;
        ri.summary = rt_stats_summary(st[0]);
        assert_int_equal(rt_report_write(rep, &ri, fd), RT_OK);
        close(fd);
        rt_report_free(rep);
        rt_stats_free(st[0]);
        rt_stats_free(st[1]);
    }
    /* no accumulator at all: counted, nothing fed */
    rt_run_read_info info = {.struct_size = sizeof info};
    assert_int_equal(rt_run_read(fixture("runs/tool.jsonl"), NULL, NULL, 0, NULL, &info), RT_OK);
    assert_int_equal(info.records, 3);
}

/* Malformed lines are skipped with a warning that names the file and the line; a last line cut
 * short (a run still being written) is one of them. */
static void malformed_and_truncated(void **state)
{
    (void)state;
    logbook b;
    rt_run_read_info info;
    assert_int_equal(read_logged(fixture("runs/malformed.jsonl"), &b, &info), RT_OK);
    assert_true(info.skipped > 0);
    assert_int_equal(b.warnings, (int)info.skipped);
    assert_non_null(strstr(b.last, "malformed.jsonl:"));

    size_t len;
    const char *text = fixture_text("runs/tool.jsonl", &len);
    const char *last = text + len - 2;
    while (*last != '\n')
        last--;
    size_t cut = (size_t)(last - text) + 1 + 40; /* two lines whole, the third cut */
    const char *path = temp_file("cut.jsonl", text, cut);
    assert_int_equal(read_logged(path, &b, &info), RT_OK);
    assert_int_equal(info.records, 2);
    assert_int_equal(info.skipped, 1);
    assert_non_null(strstr(b.last, "cut.jsonl:3:"));
    remove_temp(path);
}

/* The tool's JSON lines and CSV gzipped are read by the reader as a stream (only a document
 * opening with "metadata" is a snapshot), to the same statistics as plain; a line over 16 MiB
 * ends the read once the file opened: RT_ERR_PARSE, the message naming the file and the line. */
static void gzipped_and_too_long(void **state)
{
    (void)state;
    static const char *const rels[] = {"runs/tool.jsonl", "runs/tool.csv"};
    static const char *const formats[] = {"json", "csv"};
    for (size_t i = 0; i < 2; i++) {
        size_t len;
        const char *text = fixture_text(rels[i], &len);
        rt_gzip *z;
        assert_int_equal(rt_gzip_new(len + 4096, &z), RT_OK);
        assert_int_equal(rt_gzip_write(z, text, len), RT_OK);
        const void *gz;
        size_t gzlen;
        assert_int_equal(rt_gzip_finish(z, &gz, &gzlen), RT_OK);
        const char *path = temp_file("run.gz", gz, gzlen);
        rt_gzip_free(z);
        rt_stats *a = rt_stats_new(), *b = rt_stats_new();
        rt_run_read_info info = {.struct_size = sizeof info};
        assert_int_equal(rt_run_read(path, NULL, &a, 1, NULL, &info), RT_OK);
        assert_string_equal(info.format, formats[i]);
        assert_int_equal(info.records, 3);
        assert_int_equal(rt_run_read(fixture(rels[i]), NULL, &b, 1, NULL, &info), RT_OK);
        assert_true(rt_stats_summary(a)->process_cpu_secs == rt_stats_summary(b)->process_cpu_secs);
        assert_true(rt_stats_summary(a)->duration_secs == rt_stats_summary(b)->duration_secs);
        assert_int_equal(rt_stats_summary(a)->samples, rt_stats_summary(b)->samples);
        rt_stats_free(a);
        rt_stats_free(b);
        remove_temp(path);
    }
    size_t len, big = (16u << 20) + 1;
    const char *text = fixture_text("runs/tool.jsonl", &len);
    const char *nl = strchr(text, '\n') + 1;
    char *doc = malloc((size_t)(nl - text) + big + 1);
    assert_non_null(doc);
    memcpy(doc, text, (size_t)(nl - text));
    memset(doc + (nl - text), ' ', big);
    doc[(nl - text) + (ptrdiff_t)big] = '\n';
    const char *path = temp_file("long.jsonl", doc, (size_t)(nl - text) + big + 1);
    free(doc);
    logbook lb;
    rt_run_read_info info;
    assert_int_equal(read_logged(path, &lb, &info), RT_ERR_PARSE);
    assert_int_equal(info.opened, 1);
    assert_int_equal(info.records, 1);
    assert_non_null(strstr(info.message, "long.jsonl:2: a line longer than 16 MiB"));
    assert_int_equal(info.logged, 1);
    assert_string_equal(lb.last, info.message);
    remove_temp(path);
}

/* Each failure: its code, whether it came after the file opened, a message naming the file,
 * and whether the log had it already. */
static void failures(void **state)
{
    (void)state;
    static const unsigned char bad_gzip[] = {0x1f, 0x8b, 0x08, 0x00, 'x', 'y', 'z'};
    size_t len;
    const char *csv = fixture_text("runs/tool.csv", &len);
    size_t header = (size_t)(strchr(csv, '\n') - csv) + 1;
    char header_only[4096];
    assert_true(header < sizeof header_only);
    memcpy(header_only, csv, header);
    const struct {
        const char *name;
        const void *text;
        size_t len;
        rt_error err;
        int opened;
        const char *says;
    } cases[] = {
        {"empty.jsonl", "", 0, RT_ERR_PARSE, 0, "empty"},
        {"unknown.txt", "hello\nworld\n", 12, RT_ERR_PARSE, 0, "unknown.txt"},
        {"header.csv", header_only, header, RT_ERR_PARSE, 1, "header.csv: no valid sample in the file"},
        {"bad.json.gz", bad_gzip, sizeof bad_gzip, RT_ERR_PARSE, 0,
         "bad.json.gz: a gzip stream corrupt or cut short before its first line"},
        {"meta.json", "{\"metadata\": {}}", 16, RT_ERR_PARSE, 0, "meta.json: cannot read the snapshot"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = temp_file(cases[i].name, cases[i].text, cases[i].len);
        for (int with_log = 0; with_log <= 1; with_log++) {
            logbook b = {0};
            rt_run_read_options o = RT_RUN_READ_OPTIONS_INIT;
            if (with_log) {
                o.log = keep_log;
                o.log_user = &b;
            }
            rt_stats *st = rt_stats_new();
            rt_run_read_info info = {.struct_size = sizeof info};
            assert_int_equal(rt_run_read(path, &o, &st, 1, NULL, &info), cases[i].err);
            assert_int_equal(info.opened, cases[i].opened);
            assert_non_null(strstr(info.message, cases[i].name));
            assert_non_null(strstr(info.message, cases[i].says));
            /* logged: the log had this very message; else it is the caller's to say */
            if (info.logged)
                assert_string_equal(b.last, info.message);
            if (!with_log)
                assert_int_equal(info.logged, 0);
            rt_stats_free(st);
        }
        remove_temp(path);
    }
    rt_run_read_info info = {.struct_size = sizeof info};
    rt_stats *st = rt_stats_new();
    assert_int_equal(rt_run_read("/nonexistent/run.jsonl", NULL, &st, 1, NULL, &info), RT_ERR_NOT_FOUND);
    assert_non_null(strstr(info.message, "/nonexistent/run.jsonl"));
    assert_int_equal(info.opened, 0);
    rt_stats_free(st);
}

static void refused_and_older_callers(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    rt_run_read_info info = {.struct_size = sizeof info};
    assert_int_equal(rt_run_read(NULL, NULL, &st, 1, NULL, &info), RT_ERR_INVALID);
    assert_int_equal(rt_run_read(fixture("runs/tool.jsonl"), NULL, NULL, 1, NULL, &info), RT_ERR_INVALID);
    rt_stats *none[1] = {NULL};
    assert_int_equal(rt_run_read(fixture("runs/tool.jsonl"), NULL, none, 1, NULL, &info), RT_ERR_INVALID);
    rt_run_read_options o = {.struct_size = 0};
    assert_int_equal(rt_run_read(fixture("runs/tool.jsonl"), &o, &st, 1, NULL, &info), RT_ERR_INVALID);
    info.struct_size = 0;
    assert_int_equal(rt_run_read(fixture("runs/tool.jsonl"), NULL, &st, 1, NULL, &info), RT_ERR_INVALID);
    assert_int_equal(rt_stats_summary(st)->samples, 0); /* nothing read on a refusal */
    /* an older caller's info that ends after records: nothing written past it */
    struct {
        rt_run_read_info info;
        unsigned char guard[8];
    } older;
    memset(&older, 0xAB, sizeof older);
    size_t end = offsetof(rt_run_read_info, skipped);
    older.info.struct_size = end;
    assert_int_equal(rt_run_read(fixture("runs/tool.jsonl"), NULL, &st, 1, NULL, &older.info), RT_OK);
    assert_int_equal(older.info.struct_size, end);
    assert_int_equal(older.info.records, 3);
    const unsigned char *p = (const unsigned char *)&older;
    for (size_t i = end; i < sizeof older; i++)
        assert_int_equal(p[i], 0xAB);
    rt_stats_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind),
        cmocka_unit_test(gzipped_and_too_long),
        cmocka_unit_test(malformed_and_truncated),
        cmocka_unit_test(failures),
        cmocka_unit_test(refused_and_older_callers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
