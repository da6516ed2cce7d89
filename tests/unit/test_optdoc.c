/* test_optdoc.c - the reader of the option text files (src/cli/optdoc.c, docs/options/NAME.md):
 * fields and blocks read back as written ("@@" a text "@", the last newline dropped, a
 * subcommand's words under its names), every malformed file refused with its line, and every
 * committed file read. */
#include "unit.h"

#include <dirent.h>

#include "optdoc.h"

static void reads_fields_and_blocks(void **state)
{
    (void)state;
    static const char text[] = "@option --view\n"
                               "@man-arg auto|human\n"
                               "@md-default `auto`\n"
                               "@help\n"
                               "two lines\n"
                               "of help\n"
                               "@man\n"
                               "\\fBauto\\fR \"quoted\"\n"
                               "@@ at the start\n"
                               "\n"
                               "after a blank line\n"
                               "@md\n"
                               "one line\n"
                               "@help summary report\n"
                               "the subcommands' own\n"
                               "@man summary report\n"
                               "Their man entry.\n";
    optdoc d;
    char err[256];
    assert_int_equal(optdoc_parse(text, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 8);
    assert_string_equal(d.parts[0].key, "option");
    assert_string_equal(optdoc_get(&d, "option", NULL), "--view");
    assert_string_equal(optdoc_get(&d, "man-arg", NULL), "auto|human");
    assert_string_equal(optdoc_get(&d, "md-default", NULL), "`auto`");
    assert_string_equal(optdoc_get(&d, "help", NULL), "two lines\nof help");
    assert_string_equal(optdoc_get(&d, "man", NULL), "\\fBauto\\fR \"quoted\"\n@ at the start\n\nafter a blank line");
    assert_string_equal(optdoc_get(&d, "md", NULL), "one line");
    assert_string_equal(optdoc_get(&d, "help", "summary report"), "the subcommands' own");
    assert_string_equal(optdoc_get(&d, "man", "summary report"), "Their man entry.");
    assert_null(optdoc_get(&d, "help", "summary"));
    assert_null(optdoc_get(&d, "man", "info"));
    optdoc_free(&d);
    assert_int_equal(d.n, 0);
    /* docs/contracts.md's: fields, the meaning, a subcommand's part alone (no @help pair) */
    assert_int_equal(optdoc_parse("@option --job-id\n@since 0.18\n@contracts-env `A` (0.17)\n@contracts\nthe job\n"
                                  "@contracts recommend history\n`--job-id`\n",
                                  &d, err, sizeof err),
                     0);
    assert_string_equal(optdoc_get(&d, "since", NULL), "0.18");
    assert_string_equal(optdoc_get(&d, "contracts-env", NULL), "`A` (0.17)");
    assert_string_equal(optdoc_get(&d, "contracts", NULL), "the job");
    assert_string_equal(optdoc_get(&d, "contracts", "recommend history"), "`--job-id`");
    optdoc_free(&d);
    /* blank lines between parts are not the block's */
    assert_int_equal(optdoc_parse("@option --x\n@help\na\n\nb\n\n\n@md\nc\n\n", &d, err, sizeof err), 0);
    assert_string_equal(optdoc_get(&d, "help", NULL), "a\n\nb");
    assert_string_equal(optdoc_get(&d, "md", NULL), "c");
    optdoc_free(&d);
    /* no newline at the end of the file */
    assert_int_equal(optdoc_parse("@option --x\n@help\nlast", &d, err, sizeof err), 0);
    assert_string_equal(optdoc_get(&d, "help", NULL), "last");
    optdoc_free(&d);
}

static void refuses_malformed_files(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"", "1: the file must open with @option"},
        {"@help\nx\n", "1: the file must open with @option"},
        {"text first\n@option --x\n", "1: text outside a block"},
        {"@option --x\n@option --y\n", "2: @option twice"},
        {"@option\n", "1: @option without its value"},
        {"@option --x\n@helps\nx\n", "2: unknown key '@helps'"},
        {"@option --x\n@help\n@man\nx\n", "2: @help without lines"},
        {"@option --x\n@man\nx\n@help\n", "4: @help without lines"},
        {"@option --x\n@md\n\n\n@man\nx\n", "2: @md without lines"},
        {"@option --x\n@help\na\n@help\nb\n", "4: @help twice"},
        {"@option --x\n@md summary\na\n", "2: @md takes no words after it"},
        {"@option --x\n@md-default 1\nloose\n", "3: text outside a block"},
        {"@option --x\n@help summary\na\n", "@help summary without @man summary"},
        {"@option --x\n@man info\na\n", "@man info without @help info"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        optdoc d;
        char err[256] = "";
        if (optdoc_parse(bad[i].text, &d, err, sizeof err) != -1)
            fail_msg("taken: %s", bad[i].text);
        if (!strstr(err, bad[i].want))
            fail_msg("'%s': '%s', not '%s'", bad[i].text, err, bad[i].want);
        assert_null(d.parts);
        assert_int_equal(d.n, 0);
    }
}

/* Every committed file reads, opens with the option it is about, and has some words. */
static void every_committed_file_reads(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/../../docs/options", RT_FIXTURES);
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    int files = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".md") != 0 || strcmp(e->d_name, "README.md") == 0)
            continue;
        char path[2048], err[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *text = optdoc_slurp(path);
        assert_non_null(text);
        optdoc d;
        if (optdoc_parse(text, &d, err, sizeof err) < 0)
            fail_msg("%s:%s", e->d_name, err);
        assert_true(d.n >= 2);
        files++;
        optdoc_free(&d);
        free(text);
    }
    closedir(dp);
    assert_true(files >= 50);
    assert_null(optdoc_slurp("/nonexistent/optdoc"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_fields_and_blocks),
        cmocka_unit_test(refuses_malformed_files),
        cmocka_unit_test(every_committed_file_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
