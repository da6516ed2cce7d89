/* fuzz_toml.c - libFuzzer target for the TOML config reader and the config mapping: any input
 * is read or rejected with a message, never a crash, leak or out-of-bounds access. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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
    return 0;
}
