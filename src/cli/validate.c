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
#include "planjson.h"

#define CMD "validate"
#define MAX_INPUT ((size_t)1 << 32)

static void validate_usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt validate FILE [--length T] [--alpha A] [--memory M]\n"
        "                     [--format text|json] [--help] [--version]\n"
        "\n"
        "Executes a plan given as JSON actions with the symbolic validator\n"
        "and prints its counts (forward ops, recomputations, backward ops,\n"
        "the peak of stored slots), or the first action that breaks a rule\n"
        "and the rule.  FILE (- for stdin) holds an array of actions,\n"
        "[{\"op\":\"advance\",\"step\":1}, ...], or an object with one as\n"
        "\"schedule\", as `bptt plan --actions --format json` prints it\n"
        "(its length, alpha and memory are used unless given here).\n"
        "\n"
        "  --length T     steps of the sequence (default: the largest step)\n"
        "  --alpha A      internal state size in slots, e.g. 4 or 3.5 (1)\n"
        "  --memory M     budget in slots: no more may ever be stored\n"
        "                 (default: no limit)\n"
        "  --format F     text (default) or json (one object)\n"
        "\n"
        "exit status: 0 the plan is valid, 1 it breaks a rule (the line\n"
        "names the action), 2 bad input\n");
}

/* The whole of path ("-": stdin) in a malloc'd block; 0 or errno. */
static int read_input(const char *path, char **text, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return errno;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int err = buf ? 0 : ENOMEM;
    while (!err) {
        if (n == cap) {
            char *more = cap < MAX_INPUT ? realloc(buf, cap * 2) : NULL;
            if (!more) {
                err = cap < MAX_INPUT ? ENOMEM : EFBIG;
                break;
            }
            buf = more;
            cap *= 2;
        }
        const size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            err = ferror(f) ? EIO : 0;
            break;
        }
    }
    if (f != stdin)
        fclose(f);
    if (err) {
        free(buf);
        return err;
    }
    *text = buf;
    *len = n;
    return 0;
}

int cli_validate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"length", required_argument, NULL, 't'},
        {"alpha", required_argument, NULL, 'a'},
        {"memory", required_argument, NULL, 'm'},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *seen[CLI_MAX_OPTIONS] = {NULL};
    bptt_plan_json_given given = {0, NULL, -1};
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
        case 'm':
            rc = cli_parse_int(CMD, "--memory", optarg, 0, BPTT_PLAN_NO_LIMIT,
                               &given.memory);
            break;
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
    int err = read_input(path, &text, &len);
    if (err)
        return cli_error(EXIT_USAGE, CMD, "cannot read '%s' (%s)", path,
                         strerror(err));
    bptt_plan *plan = NULL;
    char why[512];
    rc = bptt_plan_from_json(text, len, &given, &plan, why, sizeof why);
    free(text);
    if (rc == BPTT_ENOMEM)
        return cli_error(1, CMD, "out of memory reading '%s'", path);
    if (rc != BPTT_OK)
        return cli_error(EXIT_USAGE, CMD, "%s: %s", path, why);
    bptt_plan_stats st;
    rc = bptt_plan_validate(plan, &st);
    if (rc == BPTT_ENOMEM) {
        bptt_plan_free(plan);
        return cli_error(1, CMD, "out of memory validating '%s'", path);
    }
    const int64_t h = plan->hidden_units;
    char peak[32], mem[32];
    cli_slots_text(peak, sizeof peak, st.peak_units, h);
    cli_slots_text(mem, sizeof mem, plan->budget, h);
    const int ok = rc == BPTT_OK;
    const char *rule = bptt_violation_str(st.violation);
    const bptt_action *bad =
        !ok && st.bad_action < plan->n_actions ? &plan->actions[st.bad_action]
                                               : NULL;
    if (format == FORMAT_JSON) {
        printf("{\"valid\":%s,\"length\":%zu,\"actions\":%zu", ok ? "true"
                                                                 : "false",
               plan->length, plan->n_actions);
        if (ok)
            printf(",\"forward_ops\":%" PRId64 ",\"recompute_ops\":%" PRId64
                   ",\"backward_ops\":%" PRId64 ",\"peak_slots\":%s}\n",
                   st.forward_ops, st.recompute_ops, st.backward_ops, peak);
        else if (bad)
            printf(",\"bad_action\":%zu,\"op\":\"%s\",\"step\":%u,"
                   "\"rule\":\"%s\"}\n",
                   st.bad_action, bptt_op_name((int)bad->op), bad->step, rule);
        else
            printf(",\"bad_action\":%zu,\"op\":null,\"step\":null,"
                   "\"rule\":\"%s\"}\n",
                   st.bad_action, rule);
    } else if (ok) {
        printf("valid plan: length %zu, %zu actions, %" PRId64 " forward ops "
               "(%" PRId64 " recomputations), %" PRId64 " backward ops, peak "
               "%s slots%s%s%s\n",
               plan->length, plan->n_actions, st.forward_ops,
               st.recompute_ops, st.backward_ops, peak,
               plan->budget / h < BPTT_PLAN_NO_LIMIT ? " (budget " : "",
               plan->budget / h < BPTT_PLAN_NO_LIMIT ? mem : "",
               plan->budget / h < BPTT_PLAN_NO_LIMIT ? ")" : "");
    } else if (bad) {
        printf("invalid plan: action %zu (%s %u) breaks a rule: %s\n",
               st.bad_action, bptt_op_name((int)bad->op), bad->step, rule);
    } else {
        printf("invalid plan: at its end (after %zu actions): %s\n",
               plan->n_actions, rule);
    }
    bptt_plan_free(plan);
    return ok ? 0 : 1;
}
