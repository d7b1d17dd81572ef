/* test_cli_input_plan.c: bad input to `bptt` with no command or an unknown
 * one, to `bptt plan` (every option, --disk and its costs included),
 * `bptt compare` and `bptt calibrate`, as a user might type it.
 *
 * A table of bad inputs with several bad values for each option, each run
 * as a child process in a fresh directory under /tmp that holds a few
 * fixture files (cli_util.c): each must give exit 2 (usage) or 3
 * (infeasible budget), exactly one line on stderr that names the problem,
 * nothing on stdout, no file written, and no work done (sizes that would
 * take hours or not fit in memory are refused before anything is
 * allocated; the child may use at most REFUSAL_CPU_SECONDS of CPU, far
 * more than checking takes on any build and far less than the work would:
 * a case that starts working is killed by SIGXCPU and fails on its exit
 * status, however fast the machine).  `bptt run` and `bptt sweep` have
 * their table in test_cli_input_run.c.
 *
 * The runner itself uses no OpenMP or BLAS, so Check forks it freely. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and the pseudo-terminals */
#include "cli_util.h"

/* The cases: the arguments, the exit status wanted and a phrase of the one
 * line (bad_case and its macros in cli_util.h, each checked by
 * check_refusal in cli_util.c). */
static const bad_case bad_cases[] = {
    {{NULL}, 2, "usage"},
    {{"frobnicate", NULL}, 2, "unknown command"},
    {{"", NULL}, 2, "unknown command"},
    {{"--bogus", NULL}, 2, "unknown command"},

    /* ---- bptt plan ---- */
    {{"plan", NULL}, 2, "--length is required"},
    /* --length */
    PLAN(2, "needs a value", "--length"),
    PLAN(2, "'0x10KiB' is not a budget: hexadecimal is not read", "--length",
         "100", "--cell", "lstm", "--memory", "0x10KiB"),
    PLAN(2, "'0x1p10B' is not a budget: hexadecimal is not read", "--length",
         "100", "--cell", "lstm", "--memory", "0x1p10B"),
    PLAN(2, "'nan%' is not a budget: infinity and NaN", "--length", "100",
         "--memory", "nan%"),
    PLAN(2, "'0x10' is not a budget: hexadecimal", "--length", "100",
         "--memory", "0x10"),
    PLAN(2, "not an integer", "--length", ""),
    PLAN(2, "not an integer", "--length="),
    PLAN(2, "not an integer", "--length", "abc"),
    PLAN(2, "not an integer", "--length", "12x"),
    PLAN(2, "not an integer", "--length", "1e3"),
    PLAN(2, "not an integer", "--length", " 10"),
    PLAN(2, "not an integer", "--length", "0x10"),
    PLAN(2, "out of range", "--length", "-5"),
    PLAN(2, "from 1", "--length", "0"),
    PLAN(2, "out of range", "--length", "2147483647"),
    PLAN(2, "out of range", "--length", BIG),
    PLAN(2, "needs a value, not the option '--memory'", "--length",
         "--memory", "5"),
    PLAN(2, "given twice ('10', then '20')", "--length", "10", "--length",
         "20"),
    /* --strategy */
    PLAN(2, "needs a value", "--length", "10", "--strategy"),
    PLAN(2, "unknown strategy ''", "--length", "10", "--strategy", ""),
    PLAN(2, "unknown strategy", "--length", "10", "--strategy", "magic"),
    PLAN(2, "unknown strategy", "--length", "10", "--strategy", "MSM"),
    PLAN(2, "unknown strategy", "--length", "10", "--strategy", "-1"),
    PLAN(2, "given twice", "--length", "10", "--strategy", "hsm",
         "--strategy", "msm"),
    /* --memory */
    PLAN(2, "needs a value", "--length", "10", "--memory"),
    PLAN(2, "empty budget", "--length", "10", "--memory", ""),
    PLAN(2, "empty budget", "--length", "10", "--memory", ","),
    PLAN(2, "empty budget", "--length", "10", "--memory", "5,,6"),
    PLAN(2, "empty budget", "--length", "10", "--memory", "5,"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "lots"),
    PLAN(2, "out of range", "--length", "10", "--memory", "-3"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "x%"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "-5%"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "%"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "nan%"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "1e3%"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "slots"),
    PLAN(2, "is in bytes", "--length", "10", "--memory", "64MiB"),
    PLAN(2, "out of range", "--length", "10", "--memory", BIG),
    PLAN(2, "out of range", "--length", "10", "--memory", BIG "%"),
    PLAN(2, "out of range", "--length", "10", "--memory", "1000001%"),
    PLAN(2, "more than 64 budgets", "--length", "10", "--memory",
         "1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,"
         "1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,"
         "1,2,3,4,5"),
    PLAN(3, "smallest feasible budget is 1 slots", "--length", "10",
         "--memory", "0"),
    PLAN(3, "smallest feasible budget is 155 slots", "--strategy", "chen",
         "--length", "1000", "--alpha", "4", "--memory", "10"),
    PLAN(3, "smallest feasible budget is 3996 slots", "--strategy", "full",
         "--length", "1000", "--alpha", "4", "--memory", "50%"),
    PLAN(3, "smallest feasible budget is", "--strategy", "hsm", "--length",
         "10", "--memory", "3,0"),
    /* --alpha */
    PLAN(2, "needs a value", "--length", "10", "--alpha"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", ""),
    PLAN(2, "--alpha", "--length", "10", "--alpha", "0"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", "-1"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", "1.5e0"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", "x"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", "1000001"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", BIG),
    /* --segment */
    PLAN(2, "chen only", "--length", "10", "--segment", "3"),
    PLAN(2, "needs a value", "--strategy", "chen", "--length", "10",
         "--segment"),
    PLAN(2, "not an integer", "--strategy", "chen", "--length", "10",
         "--segment", ""),
    PLAN(2, "not an integer", "--strategy", "chen", "--length", "10",
         "--segment", "x"),
    PLAN(2, "out of range", "--strategy", "chen", "--length", "10",
         "--segment", "0"),
    PLAN(2, "out of range", "--strategy", "chen", "--length", "10",
         "--segment", "-3"),
    PLAN(2, "out of range", "--strategy", "chen", "--length", "10",
         "--segment", BIG),
    PLAN(3, "smallest feasible budget is 10 slots", "--strategy", "chen",
         "--length", "10", "--segment", "11"),
    /* --format */
    PLAN(2, "needs a value", "--length", "10", "--format"),
    PLAN(2, "unknown format ''", "--length", "10", "--format", ""),
    PLAN(2, "unknown format", "--length", "10", "--format", "xml"),
    PLAN(2, "unknown format", "--length", "10", "--format", "JSON"),
    /* --threads */
    PLAN(2, "needs a value", "--length", "10", "--threads"),
    PLAN(2, "not an integer", "--length", "10", "--threads", ""),
    PLAN(2, "--threads", "--length", "10", "--threads", "0"),
    PLAN(2, "out of range", "--length", "10", "--threads", "-1"),
    PLAN(2, "not an integer", "--length", "10", "--threads", "two"),
    PLAN(2, "out of range", "--length", "10", "--threads", "4097"),
    PLAN(2, "out of range", "--length", "10", "--threads", BIG),
    /* --actions, --curve, --help: flags */
    PLAN(2, "exclude each other", "--length", "10", "--actions", "--curve"),
    PLAN(2, "one budget", "--length", "10", "--actions", "--memory", "3,4"),
    PLAN(2, "one budget", "--length", "10", "--curve", "--memory", "3,4"),
    PLAN(2, "--actions takes no value", "--length", "10", "--actions=yes"),
    PLAN(2, "--curve takes no value", "--length", "10", "--curve=1"),
    PLAN(2, "--help takes no value", "--length", "10", "--help=x"),
    PLAN(2, "more than 10000000 lines", "--length", "10", "--curve",
         "--memory", "99999999999"),
    /* --online, --no-lookahead, --points */
    PLAN(2, "--points applies to --online --curve (add --online)",
         "--length", "10", "--curve", "--points", "5"),
    PLAN(2, "--points applies to --online --curve (add --online --curve)",
         "--length", "10", "--points", "5"),
    PLAN(2, "--points applies to --online --curve (add --curve)", "--length",
         "10", "--online", "--points", "5"),
    PLAN(2, "--points: 0 is out of range (give a whole number from 2",
         "--length", "10", "--online", "--curve", "--points", "0"),
    PLAN(2, "out of range", "--length", "10", "--online", "--curve",
         "--points", "1"),
    PLAN(2, "out of range", "--length", "10", "--online", "--curve",
         "--points", "-3"),
    PLAN(2, "out of range", "--length", "10", "--online", "--curve",
         "--points", BIG),
    PLAN(2, "--points: 'abc' is not an integer", "--length", "10", "--online",
         "--curve", "--points", "abc"),
    PLAN(2, "not an integer", "--length", "10", "--online", "--curve",
         "--points", ""),
    PLAN(2, "needs a value", "--length", "10", "--online", "--curve",
         "--points"),
    PLAN(2, "given twice", "--length", "10", "--online", "--curve",
         "--points", "3", "--points", "4"),
    PLAN(2, "--no-lookahead applies to online plans (add --online)",
         "--length", "10", "--no-lookahead"),
    PLAN(2, "--no-lookahead applies to online plans", "--length", "10",
         "--curve", "--no-lookahead"),
    PLAN(2, "--online takes no value", "--length", "10", "--online=yes"),
    PLAN(2, "--no-lookahead takes no value", "--length", "10", "--online",
         "--no-lookahead=1"),
    PLAN(2, "strategy chen has no online planner (give --strategy hsm or "
            "msm)", "--length", "10", "--online", "--strategy", "chen"),
    PLAN(2, "strategy full has no online planner", "--length", "10",
         "--online", "--strategy", "full"),
    PLAN(2, "strategy msm-paper has no online planner", "--length", "10",
         "--online", "--strategy", "msm-paper", "--curve"),
    PLAN(2, "--online takes one strategy", "--length", "10", "--online",
         "--strategy", "hsm,msm"),
    PLAN(2, "--online takes one budget", "--length", "10", "--online",
         "--memory", "3,4"),
    PLAN(2, "not csv", "--length", "10", "--online", "--format", "csv"),
    PLAN(2, "--infeasible applies to offline plans", "--length", "10",
         "--online", "--infeasible", "record"),
    PLAN(2, "exclude each other", "--length", "10", "--online", "--actions",
         "--curve"),
    PLAN(2, "is in bytes", "--length", "10", "--online", "--memory",
         "64MiB"),
    PLAN(2, "more than 10000000 lines (give --points N", "--length",
         "20000000", "--online", "--curve"),
    PLAN(2, "more than half of this machine's", "--length", "2000000000",
         "--online", "--curve", "--points", "10"),
    PLAN(2, "more than half of this machine's", "--strategy", "msm",
         "--length", "2000000000", "--online", "--memory", "10"),
    PLAN(2, "more than half of this machine's", "--strategy", "hsm",
         "--length", "2000000000", "--online", "--memory", "10"),
    PLAN(3, "infeasible for online msm at any length, alpha 1; the smallest "
            "feasible budget is 1 slots", "--length", "10", "--online",
         "--memory", "0"),
    PLAN(3, "the smallest feasible budget is 1 slots", "--length", "10",
         "--online", "--strategy", "hsm", "--alpha", "3.5", "--memory",
         "0.5", "--curve"),
    PLAN(3, "smallest feasible budget is 1 slots (", "--length", "10",
         "--online", "--cell", "lstm", "--memory", "1KiB"),
    /* --disk, --write-cost, --read-cost */
#define DISK(st, says, ...) \
    PLAN(st, says, "--length", "10", "--memory", "3", __VA_ARGS__)
    DISK(2, "--disk: strategy chen has no two-level planner (give --strategy "
            "hsm or msm)", "--disk", "5", "--strategy", "chen"),
    DISK(2, "strategy full has no two-level planner", "--disk", "5",
         "--strategy", "hsm,full"),
    DISK(2, "strategy ism-paper has no two-level planner", "--disk", "inf",
         "--strategy", "ism-paper", "--actions"),
    DISK(2, "--write-cost applies to two-level plans (add --disk D",
         "--write-cost", "2"),
    DISK(2, "--read-cost applies to two-level plans (add --disk D",
         "--read-cost", "2", "--write-cost", "1"),
    DISK(2, "--disk and --online exclude each other", "--disk", "5",
         "--online", "--strategy", "hsm"),
    DISK(2, "--disk and --curve exclude each other", "--disk", "5",
         "--curve"),
    DISK(2, "--infeasible applies to one-level plans' records, not to --disk",
         "--disk", "5", "--infeasible", "record"),
    PLAN(2, "--disk needs --memory M", "--length", "10", "--disk", "5"),
    DISK(2, "needs a value", "--disk"),
    DISK(2, "--disk needs a value, not the option '--memory'", "--disk",
         "--memory", "5"),
    DISK(2, "--disk is given twice", "--disk", "5", "--disk", "inf"),
    DISK(2, "--disk: '' is not a budget", "--disk", ""),
    DISK(2, "--disk: 'lots' is not a budget", "--disk", "lots"),
    DISK(2, "--disk: -1 is out of range", "--disk", "-1"),
    DISK(2, "out of range", "--disk", BIG),
    DISK(2, "'nan' is not a budget: infinity and NaN", "--disk", "nan"),
    DISK(2, "'INF' is not a budget: infinity and NaN", "--disk", "INF"),
    DISK(2, "exponents are not read", "--disk", "1e3"),
    DISK(2, "; or give inf, no bound", "--disk", "0x10"),
    DISK(2, "--disk: '64MiB' is in bytes, which needs the network's sizes",
         "--disk", "64MiB"),
    DISK(2, "--disk: 1.2 slots is not a budget at alpha 3.5", "--disk",
         "1.2", "--alpha", "3.5"),
    DISK(2, "--write-cost: 'nan' is not a cost (give a number of forward ops "
            "a hidden state from 0 to 1000000", "--disk", "5",
         "--write-cost", "nan"),
    DISK(2, "--write-cost: 'inf' is not a cost", "--disk", "5",
         "--write-cost", "inf"),
    DISK(2, "--write-cost: '-1' is not a cost", "--disk", "5",
         "--write-cost", "-1"),
    DISK(2, "--write-cost: '1000001' is not a cost", "--disk", "5",
         "--write-cost", "1000001"),
    DISK(2, "--write-cost: '2x' is not a cost", "--disk", "5",
         "--write-cost", "2x"),
    DISK(2, "--write-cost: '' is not a cost", "--disk", "5", "--write-cost",
         ""),
    DISK(2, "hexadecimal is not read", "--disk", "5", "--write-cost",
         "0x10"),
    DISK(2, "a comma is no decimal point", "--disk", "5", "--write-cost",
         "1,5"),
    DISK(2, "--read-cost: ' 1' is not a cost", "--disk", "5", "--read-cost",
         " 1"),
    DISK(2, "--read-cost: '1e400' is not a cost", "--disk", "5",
         "--read-cost", "1e400"),
    DISK(2, "--read-cost: '+2' is not a cost", "--disk", "5", "--read-cost",
         "+2"),
    DISK(2, "--read-cost is given twice", "--disk", "5", "--read-cost", "1",
         "--read-cost", "2"),
    DISK(2, "--write-cost needs a value", "--disk", "5", "--write-cost"),
    PLAN(3, "is infeasible for msm at length 10, alpha 1; the smallest "
            "feasible budget is 1 slots", "--length", "10", "--memory", "0",
         "--disk", "5"),
    PLAN(3, "the smallest feasible budget is 1 slots", "--length", "10",
         "--memory", "1,0", "--disk", "inf", "--strategy", "hsm,msm"),
    PLAN(2, "the two-level msm table for length 100000000 with budget 3 "
            "slots and disk 3 slots would hold", "--length", "100000000",
         "--memory", "3", "--disk", "3"),
    /* (hsm's columns are the multiples of h a plan can hold, at most
     * t + 2 of them however large the budget: the length makes it big) */
    PLAN(2, "more than half of this machine's", "--length", "1000000",
         "--memory", "99999999", "--disk", "inf", "--strategy", "hsm"),
    PLAN(2, "more than half of this machine's", "--length", "100000",
         "--memory", "3,10", "--disk", "99999"),
    PLAN(2, "the two-level hsm planner does not take length 2000000000",
         "--length", "2000000000", "--memory", "3", "--disk", "3",
         "--strategy", "hsm"),
#undef DISK
    /* options in general */
    PLAN(2, "unknown option '--bogus'", "--length", "10", "--bogus"),
    PLAN(2, "unknown option '--bogus=3'", "--length", "10", "--bogus=3"),
    PLAN(2, "ambiguous", "--length", "10", "--s", "msm"),
    PLAN(2, "unknown option '-x'", "-x"),
    PLAN(2, "unknown option '-x'", "-xy"),
    PLAN(2, "unexpected argument", "--length", "10", "extra"),
    PLAN(2, "unexpected argument '-'", "--length", "10", "-"),
    PLAN(2, "unexpected argument '--length'", "--", "--length", "10"),
    /* sizes that do not fit: refused before anything is allocated */
    PLAN(2, "more than half of this machine's", "--length", "1000000000",
         "--memory", "10"),
    PLAN(2, "more than half of this machine's", "--strategy", "hsm",
         "--length", "2000000000", "--memory", "10"),
    PLAN(2, "more than half of this machine's", "--strategy", "hsm",
         "--length", "100000", "--memory", "1"),
    PLAN(2, "more than half of this machine's", "--strategy", "full",
         "--length", "2000000000"),
    PLAN(2, "more than half of this machine's", "--strategy", "chen",
         "--length", "2000000000"),
    PLAN(2, "more than half of this machine's", "--strategy", "full",
         "--length", "2000000000", "--actions"),

    /* ---- bptt compare ---- */
    CMP(2, "--length is required", "--plans", "full:100%"),
    CMP(2, "unknown strategy 'magic'", R("--plans", "full:100%,magic:5%")),
    CMP(2, "unknown strategy ''", R("--plans", ":5%")),
    CMP(2, "'lots' is not a budget", R("--plans", "msm:lots")),
    CMP(2, "'200' is not a budget", R("--plans", "msm:200")),
    CMP(2, "'' is not a budget", R("--plans", "msm:")),
    CMP(2, "'-5%' is not a budget", R("--plans", "msm:-5%")),
    CMP(2, "out of range", R("--plans", "msm:" BIG "B")),
    CMP(2, "item 1 is empty", R("--plans", "")),
    CMP(2, "item 2 is empty", R("--plans", "full:100%,")),
    CMP(2, "item 2 is empty", R("--plans", "full:100%,,msm:5%")),
    CMP(2, "item 1 is empty", R("--plans", ",msm:5%")),
    CMP(2, "is not strategy:budget", R("--plans", "msm5%")),
    CMP(2, "unknown strategy 'msm\\x1b[2J'", R("--plans",
                                               "msm\x1b[2J:5%")),
    CMP(2, "'5%\\nx' is not a budget", R("--plans", "msm:5%\nx")),
    CMP(2, "'\\r' is not strategy:budget", R("--plans", "full:100%,\r")),
    CMP(2, "more than 16 items",
        R("--plans", "full:100%,msm:5%,msm:5%,msm:5%,msm:5%,msm:5%,msm:5%,"
                     "msm:5%,msm:5%,msm:5%,msm:5%,msm:5%,msm:5%,msm:5%,"
                     "msm:5%,msm:5%,msm:5%")),
    CMP(2, "--rounds", R("--rounds", "0")),
    CMP(2, "--rounds", R("--rounds", "x")),
    CMP(2, "--warmup", R("--warmup", "-1")),
    CMP(2, "--format", R("--format", "xml")),
    CMP(2, "unknown cell 'qrnn'", R("--cell", "qrnn")),
    CMP(2, "--layers", R("--layers", "17")),
    CMP(2, "--task text:adir", R("--task", "text:adir")),
    CMP(2, "unexpected argument", R("extra")),
    CMP(2, "unknown option '--memory'", R("--memory", "5%")),
    CMP(3, "the smallest feasible budget is 64 bytes",
        R("--plans", "full:100%,msm:1%")),
    CMP(3, "item 1 (full:50%)", R("--plans", "full:50%,msm:5%")),
    /* two-level items: STRATEGY:BUDGET/DISK */
    CMP(2, "item 2 disk: 'lots' is not a budget",
        R("--plans", "full:100%,msm:5%/lots")),
    CMP(2, "item 2 disk: '' is not a budget",
        R("--plans", "full:100%,msm:5%/")),
    CMP(2, "item 2 disk: '200' is not a budget",
        R("--plans", "full:100%,msm:5%/200")),
    CMP(2, "item 2 disk: 'inf/2' is not a budget",
        R("--plans", "full:100%,msm:5%/inf/2")),
    CMP(2, "item 2 disk: '\\x1b[2J' is not a budget",
        R("--plans", "full:100%,msm:5%/\x1b[2J")),
    CMP(2, "strategy chen has no two-level planner",
        R("--plans", "full:100%,chen:5%/inf")),
    CMP(2, "--write-cost applies to two-level plans", R("--write-cost", "2")),
    CMP(2, "--read-cost applies to two-level plans",
        R("--plans", "full:100%,msm:5%", "--read-cost", "0.5")),
    CMP(2, "--read-cost: 'x' is not a cost",
        R("--plans", "full:100%,msm:5%/inf", "--read-cost", "x")),
    CMP(2, "--write-cost: '-1' is not a cost",
        R("--plans", "full:100%,msm:5%/inf", "--write-cost", "-1")),
    CMP(3, "infeasible for the two-level msm planner",
        R("--plans", "full:100%,msm:1B/inf")),

    /* ---- bptt calibrate (small sizes: a slip would still end soon) ---- */
    CAL(2, "does not exist", "--disk-dir", "nope"),
    CAL(2, "does not exist", "--disk-dir", "nope/deeper"),
    CAL(2, "is a regular file, not a folder", "--disk-dir", "text.txt"),
    CAL(2, "empty folder name", "--disk-dir", ""),
    CAL(2, "needs a value", "--disk-dir"),
    CAL(2, "from 1 to 100000", "--repeats", "0"),
    CAL(2, "from 1 to 100000", "--repeats", "100001"),
    CAL(2, "out of range", "--repeats", "-1"),
    CAL(2, "out of range", "--repeats", BIG),
    CAL(2, "not an integer", "--repeats", "3x"),
    CAL(2, "--sync takes no value", "--sync=1"),
    CAL(2, "unknown cell 'qrnn'", "--cell", "qrnn"),
    CAL(2, "--format", "--format", "xml"),
    CAL(2, "--task text:adir", "--task", "text:adir"),
    CAL(2, "unknown option '--memory'", "--memory", "5%"),
    CAL(2, "unexpected argument", "extra"),
};

START_TEST(test_bad_input)
{
    check_refusal(&bad_cases[_i], _i);
}
END_TEST

static Suite *cli_input_plan_suite(void)
{
    Suite *s = suite_create("cli input plan");
    TCase *tc = tcase_create("bad input");
    tcase_add_loop_test(tc, test_bad_input, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_input_plan_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
