/* fuzz_config.c: libFuzzer target for the parser of `bptt sweep --config`
 * files: any text goes through bptt_grid_check_config (grid.h), the code
 * --config runs: the `key = value` lines, then every value, list, range
 * and budget of the grid they describe.  It must answer BPTT_OK or
 * BPTT_EINVAL with its one-line message (never empty, no newline), never
 * crash, leak or hang.  A record line made of the input goes through the
 * JSON reader and the csv writer (records.h) too.
 * Seed inputs: tests/fuzz-corpus/fuzz_config/. */
#include <stdint.h>

#include "bptt.h"
#include "grid.h"
#include "json.h"
#include "records.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* (task = text:FILE only asks access(2) about FILE: no reads) */
    bptt_strbuf err = {0};
    const int rc = bptt_grid_check_config("fuzz.conf", (const char *)data,
                                          size, &err);
    FUZZ_CHECK(rc == BPTT_OK || rc == BPTT_EINVAL);
    if (rc == BPTT_EINVAL)
        FUZZ_CHECK(err.p && *err.p && !strchr(err.p, '\n'));
    bptt_strbuf_free(&err);

    /* the same bytes as JSON: a value, or an error; never a crash */
    bptt_json *v = NULL;
    const int jr = bptt_json_parse((const char *)data, size, &v, NULL);
    FUZZ_CHECK(jr == BPTT_OK || jr == BPTT_EINVAL);
    FUZZ_CHECK((jr == BPTT_OK) == (v != NULL));
    bptt_json_free(v);
    char *line = malloc(size + 1);
    FUZZ_CHECK(line);
    if (size)
        memcpy(line, data, size);
    line[size] = '\0';
    bptt_strbuf csv = {0};
    size_t bad = 0;
    const int cr = bptt_records_csv(&line, 1, &csv, &bad);
    FUZZ_CHECK(cr == BPTT_OK || cr == BPTT_EINVAL);
    bptt_strbuf_free(&csv);
    free(line);
    return 0;
}
