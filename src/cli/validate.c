/* validate.c: `bptt validate`: a plan given as JSON actions (planjson.h),
 * from bptt or another library, executed by the symbolic validator: its
 * counts, or the first rule it breaks. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "cli.h"
#include "io/readback.h"
#include "planjson.h"
#include "io/planrec.h"

#define CMD "validate"
/* The most a plan file may hold: about 40 million actions of bptt's
 * form, whose plan then takes about 320 MiB. */
#define MAX_INPUT ((size_t)1 << 30)

static void validate_usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt validate FILE [--length T] [--alpha A] [--memory M]\n"
        "                     [--disk D] [--format text|json] [--help]\n"
        "                     [--version]\n"
        "\n"
        "Executes a plan given as JSON actions with the symbolic validator\n"
        "and prints its counts (forward ops, recomputations, backward ops,\n"
        "the peak of stored slots), or the first action that breaks a rule\n"
        "and the rule.  FILE (- for stdin) holds an array of actions,\n"
        "[{\"op\":\"advance\",\"step\":1}, ...], or an object with one as\n"
        "\"schedule\", as `bptt plan --actions --format json` prints it\n"
        "(its length, alpha, memory and disk are used unless given here).\n"
        "\n"
        "  --length T     steps of the sequence (default: the largest step)\n"
        "  --alpha A      internal state size in slots, e.g. 4 or 3.5 (1)\n"
        "  --memory M     budget in slots: no more may ever be stored\n"
        "                 (default: no limit)\n"
        "  --disk D       the slow level's budget of a two-level plan (bptt\n"
        "                 plan --disk), slots or inf (default 0: one level,\n"
        "                 whose plans may not use the slow level's ops)\n"
        "  --format F     text (default) or json (one object)\n"
        "\n"
        "The counts the file states (forward_ops, recompute_ops,\n"
        "backward_ops, actions, peak_slots, full_peak_slots,\n"
        "forward_ops_per_step, memory_fraction; slow_writes, slow_reads,\n"
        "slow_peak_slots, and cost at the write_cost and read_cost it\n"
        "states) must be the plan's (a count no plan has, such as 1e30 or\n"
        "-3, is one that differs); its members have their types (alpha a\n"
        "number, not \"4\"). A length above the number of actions is\n"
        "refused. FILE may hold at most 1 GiB.\n"
        "\n"
        "exit status: 0 the plan is valid, 1 it breaks a rule (the line\n"
        "names the action) or states a count it does not have (the line\n"
        "names the field), 2 bad input\n");
}

/* The whole of path ("-": stdin), bounded: 0, or the error printed and its
 * exit code. */
static int read_input(const char *path, char **text, size_t *len)
{
    const int from_stdin = strcmp(path, "-") == 0;
    int err = 0;
    bptt_text_where at;
    const int why = bptt_readback(path, from_stdin ? 0 : -1, MAX_INPUT, text,
                                  len, &err, &at);
    char cap[32];
    switch (why) {
    case BPTT_READBACK_OK:
        return 0;
    case BPTT_READBACK_NOTFILE:
        return cli_error(EXIT_USAGE, CMD, "'%s' is %s, not a file of JSON "
                         "actions (give a plan file, or - for stdin)", path,
                         cli_file_kind(path, -1));
    case BPTT_READBACK_TOOBIG:
        return cli_error(EXIT_USAGE, CMD, "'%s' is larger than %s, the most "
                         "a plan file may hold (about 40 million actions)",
                         path, bptt_bytes_text(cap, sizeof cap,
                                              (double)MAX_INPUT));
    case BPTT_READBACK_NUL:
        return cli_error(EXIT_USAGE, CMD, "%s:%zu:%zu: a NUL byte; a plan "
                         "file is JSON text", path, at.line, at.column);
    case BPTT_READBACK_NOMEM:
        return cli_error(1, CMD, "out of memory reading '%s'", path);
    default:
        return cli_error(EXIT_USAGE, CMD, "cannot read '%s' (%s)", path,
                         strerror(err));
    }
}

int cli_validate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"length", required_argument, NULL, 't'},
        {"alpha", required_argument, NULL, 'a'},
        {"memory", required_argument, NULL, 'm'},
        {"disk", required_argument, NULL, 'd'},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *seen[CLI_MAX_OPTIONS] = {NULL};
    bptt_plan_json_given given = {0, NULL, -1, NULL, NULL};
    enum output_format format = FORMAT_TEXT;
    int64_t v;
    int c, rc = 0;
    opterr = 0;
    optind = 1;
    while (rc == 0 &&
           (c = cli_getopt(CMD, argc, argv, opts, seen, &rc)) != -1) {
        switch (c) {
        case CLI_OPT_ERROR:
            break;
        case 't':
            rc = cli_parse_int(CMD, "--length", optarg, 1, INT32_MAX - 1, &v);
            given.length = (size_t)v;
            break;
        case 'a':
            given.alpha = optarg;
            break;
        case 'm': {
            /* slots, whole or as bptt plan prints them at a fractional
             * alpha (174.5); their units wait for the alpha */
            bptt_budget b;
            if (bptt_budget_parse(optarg, &b) != BPTT_OK ||
                b.kind != BPTT_BUDGET_SLOTS || b.slots > BPTT_PLAN_NO_LIMIT)
                rc = cli_error(EXIT_USAGE, CMD, "--memory: '%s' is not a "
                               "budget in slots (give 0 to %lld slots, e.g. "
                               "200 or 174.5)", optarg,
                               (long long)BPTT_PLAN_NO_LIMIT);
            given.memory_text = optarg;
            break;
        }
        case 'd': {
            bptt_budget b;
            if (strcmp(optarg, "inf") != 0 &&
                (bptt_budget_parse(optarg, &b) != BPTT_OK ||
                 b.kind != BPTT_BUDGET_SLOTS ||
                 b.slots > BPTT_PLAN_NO_LIMIT))
                rc = cli_error(EXIT_USAGE, CMD, "--disk: '%s' is not a "
                               "budget in slots (give 0 to %lld slots, e.g. "
                               "200 or 174.5, or inf for no bound)", optarg,
                               (long long)BPTT_PLAN_NO_LIMIT);
            given.disk_text = optarg;
            break;
        }
        case 'f':
            rc = cli_parse_format(CMD, optarg, &format);
            if (rc == 0 && format == FORMAT_CSV)
                rc = cli_error(EXIT_USAGE, CMD, "--format: csv is not one of "
                               "validate's (use text or json)");
            break;
        case 'h':
            validate_usage(stdout);
            return 0;
        default:
            rc = cli_option_error(CMD, c, argv);
        }
    }
    if (rc)
        return rc;
    if (optind != argc - 1)
        return cli_error(EXIT_USAGE, CMD, "%s (give one FILE of JSON actions, "
                         "or - for stdin)", optind == argc
                                                ? "no plan given"
                                                : "more than one plan given");
    const char *path = argv[optind];
    char *text = NULL;
    size_t len = 0;
    if ((rc = read_input(path, &text, &len)) != 0)
        return rc;
    bptt_plan *plan = NULL;
    char why[512];
    bptt_plan_json_stated stated;
    rc = bptt_plan_read_json(text, len, &given, &plan, &stated, why,
                             sizeof why);
    free(text);
    if (rc == BPTT_ENOMEM)
        return cli_error(1, CMD, "out of memory reading '%s'", path);
    if (rc != BPTT_OK)
        return cli_error(EXIT_USAGE, CMD, "%s: %s", path, why);
    bptt_plan_stats st;
    /* a stated count no plan has is wrong whatever the plan does */
    if (stated.unwritable[0]) {
        bptt_plan_json_check(plan, &st, &stated, why, sizeof why);
        bptt_plan_free(plan);
        return cli_error(1, CMD, "%s: %s (a plan file's counts must be its "
                         "actions'; drop the field, or fix the plan)", path,
                         why);
    }
    rc = bptt_plan_validate(plan, &st);
    if (rc == BPTT_ENOMEM) {
        bptt_plan_free(plan);
        return cli_error(1, CMD, "out of memory validating '%s'", path);
    }
    /* what the file states of its plan must be what it is */
    if (rc == BPTT_OK &&
        bptt_plan_json_check(plan, &st, &stated, why, sizeof why) != BPTT_OK) {
        bptt_plan_free(plan);
        return cli_error(1, CMD, "%s: %s (a plan file's counts must be its "
                         "actions'; drop the field, or fix the plan)", path,
                         why);
    }
    const int ok = rc == BPTT_OK;
    bptt_strbuf out = {0};
    bptt_plan_verdict(&out, format == FORMAT_JSON, plan, &st, ok);
    if (out.failed) {
        bptt_strbuf_free(&out);
        bptt_plan_free(plan);
        return cli_error(1, CMD, "out of memory");
    }
    fputs(out.p, stdout);
    bptt_strbuf_free(&out);
    bptt_plan_free(plan);
    return ok ? 0 : 1;
}
