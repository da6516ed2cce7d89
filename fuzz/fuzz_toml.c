/* fuzz_toml.c - libFuzzer target for the TOML config reader and the config mapping, and for the
 * value parsers the command line and the TRACKER_* environment share with it (every number of
 * the settings table, pid, format, cgroup, tag), --prometheus's ADDR:PORT and the OTEL_* lists: any input is read or rejected with a message, never a crash, leak or
 * out-of-bounds access. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "settings.h"
#include "toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    char err[512];
    toml_value *v = toml_parse(buf, size, err, sizeof err);
    if (!v && err[0] == '\0')
        abort(); /* a rejection always says why */
    toml_free(v);
    cli_layer l;
    memset(&l, 0, sizeof l);
    cli_parse_config(&l, "fuzz.toml", buf, size, err, sizeof err);
    cli_layer_free(&l);
    free(buf);

    char *s = malloc(size + 1); /* an argument or environment value: a string */
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    double d;
    long pid;
    rt_format f;
    bool off;
    for (size_t i = 0; i < cli_nsettings; i++) /* every number of the settings table */
        if ((cli_settings[i].type == CLI_T_SECS || cli_settings[i].type == CLI_T_CORES) &&
            cli_setting_number(&cli_settings[i], s, &d) == 0 && !cli_setting_in_range(&cli_settings[i], d))
            abort();
    if (cli_parse_pid(s, &pid) == 0 && pid <= 0)
        abort();
    cli_parse_format(s, &f);
    cli_parse_cgroup(s, &off);
    cli_check_tag(s);
    char addr[64];
    int port;
    if (cli_parse_listen(s, addr, sizeof addr, &port) == 0 && (port < 0 || port > 65535 || !memchr(addr, 0, sizeof addr)))
        abort();
    for (int h = 0; h < 2; h++) {
        cli_pairs p;
        if (cli_parse_otel_list(s, h, &p, err, sizeof err) == 0) {
            for (size_t i = 0; i < p.count; i++)
                if (!p.kv[i].key[0] || strlen(p.kv[i].value) > size)
                    abort();
        } else if (p.kv || err[0] == '\0') {
            abort();
        }
        cli_pairs_free(&p);
    }
    free(s);
    return 0;
}
