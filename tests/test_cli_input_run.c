/* test_cli_input_run.c: bad input to `bptt run` and `bptt sweep` (every
 * option of both, and every key of sweep's config files), as a user might
 * type it.
 *
 * A table of bad inputs with several bad values for each option, each run
 * as a child process in a fresh directory under /tmp that holds a few
 * fixture files (cli_util.c: the config files too): each must give exit 2
 * (usage) or 3 (infeasible budget), exactly one line on stderr that names
 * the problem, nothing on stdout, no file written, and no work done (sizes
 * that would take hours or not fit in memory are refused before anything
 * is allocated; the child may use at most REFUSAL_CPU_SECONDS of CPU, far
 * more than checking takes on any build and far less than the work would:
 * a case that starts working is killed by SIGXCPU and fails on its exit
 * status, however fast the machine).  The other commands have their table
 * in test_cli_input_plan.c.
 *
 * The runner itself uses no OpenMP or BLAS, so Check forks it freely. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and the pseudo-terminals */
#include "cli_util.h"

/* The cases: the arguments, the exit status wanted and a phrase of the one
 * line (bad_case and its macros in cli_util.h, each checked by
 * check_refusal in cli_util.c). */
static const bad_case bad_cases[] = {
    /* ---- bptt run ---- */
    {{"run", NULL}, 2, "--length is required"},
    /* --length */
    RUN(2, "needs a value", "--length"),
    RUN(2, "not an integer", "--length", ""),
    RUN(2, "not an integer", "--length", "x"),
    RUN(2, "--length", "--length", "-20"),
    RUN(2, "out of range", "--length", "0"),
    RUN(2, "out of range", "--length", BIG),
    RUN(2, "given twice", "--length", "20", "--length", "30"),
    RUN(2, "needs a value, not the option", "--length", "--hidden", "8"),
    /* --cell */
    RUN(2, "needs a value", R("--cell")),
    RUN(2, "unknown cell ''", R("--cell", "")),
    RUN(2, "unknown cell", R("--cell", "qrnn")),
    RUN(2, "unknown cell", R("--cell", "LSTM")),
    RUN(2, "given twice", R("--cell", "rnn", "--cell", "lstm")),
    /* --layers */
    RUN(2, "needs a value", R("--layers")),
    RUN(2, "not an integer", R("--layers", "")),
    RUN(2, "out of range", R("--layers", "0")),
    RUN(2, "out of range", R("--layers", "-1")),
    RUN(2, "not an integer", R("--layers", "two")),
    RUN(2, "--layers", R("--layers", "17")),
    RUN(2, "out of range", R("--layers", BIG)),
    /* --input */
    RUN(2, "needs a value", R("--input")),
    RUN(2, "not an integer", R("--input", "")),
    RUN(2, "out of range", R("--input", "0")),
    RUN(2, "out of range", R("--input", "-2")),
    RUN(2, "not an integer", R("--input", "x")),
    RUN(2, "out of range", R("--input", "16777216")),
    RUN(2, "out of range", R("--input", BIG)),
    RUN(2, "does not suit the copy task", R("--input", "1")),
    RUN(2, "does not suit the adding task", R("--task", "adding", "--input",
                                              "3")),
    RUN(2, "does not suit the text task", R("--task", "text:text.txt",
                                            "--input", "300")),
    /* --hidden */
    RUN(2, "needs a value", "--length", "20", "--hidden"),
    RUN(2, "not an integer", "--length", "20", "--hidden", ""),
    RUN(2, "--hidden", "--length", "20", "--hidden", "0"),
    RUN(2, "out of range", "--length", "20", "--hidden", "-8"),
    RUN(2, "not an integer", "--length", "20", "--hidden", "8.5"),
    RUN(2, "out of range", "--length", "20", "--hidden", "16777216"),
    RUN(2, "out of range", "--length", "20", "--hidden", BIG),
    /* --batch */
    RUN(2, "needs a value", "--length", "20", "--batch"),
    RUN(2, "not an integer", "--length", "20", "--batch", ""),
    RUN(2, "out of range", "--length", "20", "--batch", "0"),
    RUN(2, "--batch", "--length", "20", "--batch", "-1"),
    RUN(2, "not an integer", "--length", "20", "--batch", "x"),
    RUN(2, "out of range", "--length", "20", "--batch", "16777216"),
    RUN(2, "out of range", "--length", "20", "--batch", BIG),
    /* --strategy */
    RUN(2, "needs a value", R("--strategy")),
    RUN(2, "unknown strategy ''", R("--strategy", "")),
    RUN(2, "unknown strategy", R("--strategy", "magic")),
    /* --memory */
    RUN(2, "needs a value", R("--memory")),
    RUN(2, "is not a budget", R("--memory", "")),
    RUN(2, "is not a budget", R("--memory", "12")),
    RUN(2, "is not a budget", R("--memory", "lots")),
    RUN(2, "is not a budget", R("--memory", "-1B")),
    RUN(2, "is not a budget", R("--memory", "-5%")),
    RUN(2, "is not a budget", R("--memory", "MiB")),
    RUN(2, "is not a budget", R("--memory", "nanMiB")),
    RUN(2, "is not a budget", R("--memory", "infMiB")),
    RUN(2, "one budget, not a list", R("--memory", "5%,10%")),
    /* decimal only: hex and hex floats were read by strtod */
    RUN(2, "'0x10KiB' is not a budget: hexadecimal is not read",
        R("--memory", "0x10KiB")),
    RUN(2, "'0x1p10B' is not a budget: hexadecimal is not read",
        R("--memory", "0x1p10B")),
    RUN(2, "infinity and NaN are not numbers here", R("--memory", "inf%")),
    RUN(2, "exponents are not read", R("--memory", "1e3B")),
    RUN(2, "a comma is no decimal point", R("--memory", "1,5MiB")),
    RUN(2, "--lr: '0x1' is not a number in [1e-12, 1e+38]: hexadecimal",
        R("--lr", "0x1")),
    RUN(2, "--lr: 'inf' is not a number", R("--lr", "inf")),
    RUN(2, "out of range", R("--memory", BIG "B")),
    RUN(2, "out of range", R("--memory", BIG "slots")),
    RUN(2, "out of range", R("--memory", BIG "%")),
    RUN(3, "smallest feasible budget is 128 bytes", "--length", "20",
        "--hidden", "8", "--batch", "2", "--memory", "1B"),
    RUN(2, "is not a budget", R("--memory", "0")),
    RUN(3, "smallest feasible budget is", R("--memory", "0%")),
    RUN(3, "smallest feasible budget is", R("--memory", "0slots")),
    RUN(3, "smallest feasible budget is", "--length", "20", "--hidden", "8",
        "--batch", "2", "--strategy", "full", "--memory", "5%"),
    RUN(3, "smallest feasible budget is", R("--strategy", "chen", "--memory",
                                           "1KiB")),
    /* --iters */
    RUN(2, "needs a value", R("--iters")),
    RUN(2, "not an integer", R("--iters", "")),
    RUN(2, "--iters", R("--iters", "0")),
    RUN(2, "out of range", R("--iters", "-1")),
    RUN(2, "not an integer", R("--iters", "3x")),
    RUN(2, "out of range", R("--iters", "1000001")),
    RUN(2, "out of range", R("--iters", BIG)),
    /* --seed */
    RUN(2, "needs a value", R("--seed")),
    RUN(2, "not an integer", R("--seed", "")),
    RUN(2, "out of range", R("--seed", "-1")),
    RUN(2, "not an integer", R("--seed", "x")),
    RUN(2, "out of range", R("--seed", BIG)),
    /* --threads */
    RUN(2, "needs a value", R("--threads")),
    RUN(2, "not an integer", R("--threads", "")),
    RUN(2, "out of range", R("--threads", "0")),
    RUN(2, "out of range", R("--threads", "-2")),
    RUN(2, "not an integer", R("--threads", "all")),
    RUN(2, "out of range", R("--threads", BIG)),
    /* --task */
    RUN(2, "needs a value", R("--task")),
    RUN(2, "unknown task ''", R("--task", "")),
    RUN(2, "unknown task", R("--task", "bogus")),
    RUN(2, "unknown task", R("--task", "COPY")),
    RUN(2, "names no file", R("--task", "text:")),
    RUN(2, "cannot read '/nonexistent/file'", R("--task",
                                               "text:/nonexistent/file")),
    RUN(2, "is empty", R("--task", "text:empty.txt")),
    RUN(2, "fewer than length + 1", R("--task", "text:short.txt")),
    RUN(2, "is a directory", R("--task", "text:adir")),
    RUN(2, "not a regular file or a pipe", R("--task", "text:/dev/zero")),
    RUN(2, "adding task needs a length of 2", "--length", "1", "--task",
        "adding"),
    /* --optimizer */
    RUN(2, "needs a value", R("--optimizer")),
    RUN(2, "unknown optimizer ''", R("--optimizer", "")),
    RUN(2, "unknown optimizer", R("--optimizer", "rmsprop")),
    RUN(2, "unknown optimizer", R("--optimizer", "SGD")),
    /* --lr */
    RUN(2, "needs a value", R("--lr")),
    RUN(2, "--lr", R("--lr", "")),
    RUN(2, "--lr", R("--lr", "0")),
    RUN(2, "--lr", R("--lr", "-1")),
    RUN(2, "--lr", R("--lr", "fast")),
    RUN(2, "--lr", R("--lr", "nan")),
    RUN(2, "--lr", R("--lr", "inf")),
    RUN(2, "--lr", R("--lr", " 0.1")),
    RUN(2, "--lr", R("--lr", "1e39")),
    RUN(2, "--lr", R("--lr", "1e999")),
    RUN(2, "--lr", R("--lr", "1e-999")),
    /* --format */
    RUN(2, "needs a value", R("--format")),
    RUN(2, "unknown format ''", R("--format", "")),
    RUN(2, "unknown format", R("--format", "yaml")),
    RUN(2, "unknown format", R("--format", "jsonl")),
    /* --online, --separator */
    RUN(2, "--separator needs --online", R("--separator", ",")),
    RUN(2, "give --task text:FILE", R("--online")),
    RUN(2, "is not one byte", R("--online", "--task", "text:text.txt",
                                "--separator", "ab")),
    RUN(2, "is not one byte", R("--online", "--task", "text:text.txt",
                                "--separator", "")),
    RUN(2, "is not one byte", R("--online", "--task", "text:text.txt",
                                "--separator", "0x1g")),
    RUN(2, "--batch must be 1", R("--online", "--task", "text:text.txt")),
    RUN(2, "hsm or msm online", "--online", "--task", "text:text.txt",
        "--strategy", "chen"),
    RUN(2, "is not kept with --online", "--online", "--task",
        "text:text.txt", "--memory-trace", "m.csv"),
    RUN(2, "does not occur in", "--online", "--task", "text:text.txt",
        "--separator", "#"),
    RUN(2, "has no non-empty line", "--online", "--task", "text:blank.txt"),
    RUN(2, "No such file", "--online", "--task", "text:nothere.txt"),
    /* --dump-grads */
    RUN(2, "needs a value", R("--dump-grads")),
    RUN(2, "empty directory name", R("--dump-grads", "")),
    RUN(2, "not an empty directory", R("--dump-grads", "/dev/null")),
    RUN(2, "not an empty directory", R("--dump-grads", "empty.txt")),
    RUN(2, "not an empty directory", R("--dump-grads", "full")),
    RUN(2, "does not exist", R("--dump-grads", "/nonexistent/dir")),
    RUN(2, "does not exist", R("--dump-grads", "adir/sub/d")),
    /* --trace */
    RUN(2, "needs a value", R("--trace")),
    RUN(2, "empty file name", R("--trace", "")),
    RUN(2, "not a regular file", R("--trace", "adir")),
    RUN(2, "not a regular file", R("--trace", "/dev/null")),
    RUN(2, "names a directory", R("--trace", "t/")),
    RUN(2, "does not exist", R("--trace", "/nonexistent/dir/t.csv")),
    RUN(2, "both name 't.csv'", R("--trace", "t.csv", "--dump-grads",
                                  "t.csv")),
    RUN(2, "'text.txt' exists (remove it", R("--trace", "text.txt")),
    /* --memory-trace */
    RUN(2, "needs a value", R("--memory-trace")),
    RUN(2, "empty file name", R("--memory-trace", "")),
    RUN(2, "not a regular file", R("--memory-trace", "adir")),
    RUN(2, "not a regular file", R("--memory-trace", "/dev/null")),
    RUN(2, "does not exist", R("--memory-trace", "/nonexistent/m.csv")),
    RUN(2, "'text.txt' exists (remove it", R("--memory-trace", "text.txt")),
    RUN(2, "--memory-trace and --trace both name 'm.csv'",
        R("--trace", "m.csv", "--memory-trace", "m.csv")),
    RUN(2, "--memory-trace and --dump-grads both name 'm'",
        R("--dump-grads", "m", "--memory-trace", "m")),
    /* --fail-alloc (a hidden test hook) */
    RUN(2, "needs a value", R("--fail-alloc")),
    RUN(2, "not an integer", R("--fail-alloc", "")),
    RUN(2, "out of range", R("--fail-alloc", "0")),
    RUN(2, "out of range", R("--fail-alloc", "-1")),
    RUN(2, "out of range", R("--fail-alloc", BIG)),
    /* --help and options in general */
    RUN(2, "--help takes no value", R("--help=1")),
    RUN(2, "unknown option '--bogus'", R("--bogus")),
    RUN(2, "ambiguous", R("--s", "1")),
    RUN(2, "unknown option '-t'", "-t", "20"),
    RUN(2, "unexpected argument", R("extra")),
    /* sizes that do not fit: refused before anything is allocated */
    RUN(2, "more than this machine's", "--length", "1000000000", "--hidden",
        "8"),
    RUN(2, "more than this machine's", "--length", "20", "--hidden",
        "1000000"),
    RUN(2, "more than this machine's", "--length", "20", "--hidden",
        "1000000", "--batch", "100000"),
    RUN(2, "more than this machine's", "--length", "20", "--batch",
        "16777215"),
    RUN(2, "more than this machine's", "--length", "20", "--layers", "16",
        "--hidden", "60000"),
    RUN(2, "more than this machine's", "--length", "20", "--input",
        "16777215"),
    /* (the plan's own refusals, sized to this machine's memory:
     * test_run_refused_plans) */
    RUN(2, "more than half of this machine's", "--length", "1000000",
        "--task", "adding", "--batch", "1", "--hidden", "1", "--strategy",
        "hsm", "--memory", "10%"),

    /* ---- bptt sweep ---- */
    {{"sweep", NULL}, 2, "--length is required"},
    SWEEP(2, "--out FILE is required", "--length", "10"),
    SWEEP(2, "--length is required", "--out", "x"),
    /* --length (an axis: lists and ranges) */
    SWEEP(2, "needs a value, not the option '--out'", "--length", "--out",
          "x"),
    SWEEP(2, "needs a value", "--out", "x", "--length"),
    SWEEP(2, "empty value", "--length", "", "--out", "x"),
    SWEEP(2, "empty value", "--length", "5,", "--out", "x"),
    SWEEP(2, "not a whole number", "--length", "ten", "--out", "x"),
    SWEEP(2, "out of range", "--length", "0", "--out", "x"),
    SWEEP(2, "out of range", "--length", "-1", "--out", "x"),
    SWEEP(2, "out of range", "--length", BIG, "--out", "x"),
    SWEEP(2, "whole-number ends", "--length", "1:" BIG, "--out", "x"),
    SWEEP(2, "bad step", "--length", "1:10:" BIG, "--out", "x"),
    SWEEP(2, "bad step", "--length", "1:10:*" BIG, "--out", "x"),
    SWEEP(2, "runs downwards", "--length", "10:1", "--out", "x"),
    SWEEP(2, "given twice", "--length", "10", "--out", "x", "--length", "20"),
    /* --strategy */
    SW(2, "needs a value", "--strategy"),
    SW(2, "empty value", "--strategy", ""),
    SW(2, "empty value", "--strategy", ","),
    SW(2, "unknown strategy 'magic'", "--strategy", "hsm,magic"),
    SW(2, "unknown strategy", "--strategy", "msm:hsm"),
    /* --cell */
    SWR(2, "needs a value", "--cell"),
    SWR(2, "empty value", "--cell", ""),
    SWR(2, "unknown cell 'qrnn'", "--cell", "lstm,qrnn"),
    SW(2, "does not apply in plan mode", "--cell", "rnn,lstm"),
    /* --layers */
    SWR(2, "needs a value", "--layers"),
    SWR(2, "out of range", "--layers", "0"),
    SWR(2, "out of range", "--layers", "17"),
    SWR(2, "out of range", "--layers", "-1"),
    SWR(2, "not a whole number", "--layers", "x"),
    SWR(2, "out of range", "--layers", BIG),
    SWR(2, "leaves 1..16", "--layers", "1:20"),
    /* --input */
    SWR(2, "needs a value", "--input"),
    SWR(2, "empty value", "--input", ""),
    SWR(2, "out of range", "--input", "0"),
    SWR(2, "out of range", "--input", "-1"),
    SWR(2, "not a whole number", "--input", "wide"),
    SWR(2, "out of range", "--input", "16777216"),
    /* --hidden */
    SWR(2, "needs a value", "--hidden"),
    SWR(2, "out of range", "--hidden", "0"),
    SWR(2, "not a whole number", "--hidden", "x"),
    SWR(2, "out of range", "--hidden", BIG),
    SW(2, "does not apply in plan mode", "--hidden", "4,8"),
    /* --batch */
    SWR(2, "needs a value", "--batch"),
    SWR(2, "out of range", "--batch", "0"),
    SWR(2, "out of range", "--batch", "-5"),
    SWR(2, "out of range", "--batch", BIG),
    /* --alpha */
    SW(2, "needs a value", "--alpha"),
    SW(2, "out of range", "--alpha", "0"),
    SW(2, "not a state size", "--alpha", "x"),
    SW(2, "out of range", "--alpha", BIG),
    SWR(2, "does not apply in run mode", "--alpha", "2,3"),
    /* --memory */
    SW(2, "needs a value", "--memory"),
    SW(2, "empty value", "--memory", ""),
    SW(2, "is not a budget", "--memory", "-1"),
    SW(2, "is not a budget", "--memory", "lots"),
    SW(2, "is not a budget", "--memory", BIG),
    SW(2, "is not a budget", "--memory", BIG "%"),
    SW(2, "in bytes", "--memory", "64MiB"),
    SW(2, "whole-number ends", "--memory", "1:" BIG),
    SW(2, "one unit", "--memory", "1MiB:4%:1"),
    SWR(2, "has no unit", "--memory", "12"),
    SWR(2, "is not a budget", "--memory", BIG "B"),
    SW(3, "smallest feasible one, 1 slots", "--memory", "0"),
    /* --threads */
    SW(2, "needs a value", "--threads"),
    SW(2, "out of range", "--threads", "0"),
    SW(2, "not a whole number", "--threads", "x"),
    SW(2, "out of range", "--threads", BIG),
    SW(2, "one thread count", "--threads", "1,2"),
    /* --seed */
    SWR(2, "needs a value", "--seed"),
    SWR(2, "out of range", "--seed", "-1"),
    SWR(2, "not a whole number", "--seed", "x"),
    SWR(2, "out of range", "--seed", BIG),
    /* --mode */
    SW(2, "needs a value", "--mode"),
    SW(2, "unknown mode ''", "--mode", ""),
    SW(2, "unknown mode", "--mode", "walk"),
    SW(2, "unknown mode", "--mode", "RUN"),
    /* --out */
    SWEEP(2, "needs a value", "--length", "10", "--out"),
    SWEEP(2, "--out FILE is required", "--length", "10", "--out", ""),
    SWEEP(2, "not a regular file", "--length", "10", "--out", "adir"),
    SWEEP(2, "not a regular file", "--length", "10", "--out", "adir",
          "--force"),
    SWEEP(2, "not a regular file", "--length", "10", "--out", "/dev/null",
          "--force"),
    SWEEP(2, "names a directory", "--length", "10", "--out", "adir/"),
    SWEEP(2, "does not exist", "--length", "10", "--out", "/nonexistent/x"),
    SWEEP(2, "is not a bptt sweep file", "--length", "10", "--out",
          "text.txt"),
    /* --format */
    SW(2, "needs a value", "--format"),
    SW(2, "unknown format ''", "--format", ""),
    SW(2, "unknown format", "--format", "xml"),
    /* --infeasible */
    SW(2, "needs a value", "--infeasible"),
    SW(2, "unknown policy ''", "--infeasible", ""),
    SW(2, "unknown policy", "--infeasible", "maybe"),
    /* --iters */
    SWR(2, "needs a value", "--iters"),
    SWR(2, "--iters", "--iters", ""),
    SWR(2, "--iters", "--iters", "0"),
    SWR(2, "--iters", "--iters", "-1"),
    SWR(2, "--iters", "--iters", "x"),
    SWR(2, "--iters", "--iters", BIG),
    SWR(2, "--iters", "--iters", "1,2"),
    /* --task */
    SWR(2, "needs a value", "--task"),
    SWR(2, "unknown task ''", "--task", ""),
    SWR(2, "unknown task", "--task", "bogus"),
    SWR(2, "cannot read '/nonexistent'", "--task", "text:/nonexistent"),
    SWR(2, "names no file", "--task", "text:"),
    SWR(2, "'adir' is a directory", "--task", "text:adir"),
    SWR(2, "is not a regular file or a pipe", "--task", "text:/dev/zero"),
    SWR(2, "is empty", "--task", "text:empty.txt"),
    /* --optimizer */
    SWR(2, "needs a value", "--optimizer"),
    SWR(2, "unknown optimizer ''", "--optimizer", ""),
    SWR(2, "unknown optimizer", "--optimizer", "rmsprop"),
    /* --lr */
    SWR(2, "needs a value", "--lr"),
    SWR(2, "--lr", "--lr", ""),
    SWR(2, "--lr", "--lr", "0"),
    SWR(2, "--lr", "--lr", "-1"),
    SWR(2, "--lr", "--lr", "x"),
    SWR(2, "--lr", "--lr", "nan"),
    SWR(2, "--lr", "--lr", " 1"),
    SWR(2, "--lr", "--lr", "1e999"),
    /* --config and the keys of a config file */
    SW(2, "needs a value", "--config"),
    SW(2, "cannot read ''", "--config", ""),
    SW(2, "cannot read", "--config", "/nonexistent"),
    SW(2, "--config: 'adir' is a directory", "--config", "adir"),
    SW(2, "holds no settings", "--config", "empty.conf"),
    SW(2, "holds no settings", "--config", "comment.conf"),
    SW(2, "'/dev/null' is a device", "--config", "/dev/null"),
    SW(2, "unknown key 'lenght'", "--config", "badkey.conf"),
    SW(2, "is not 'key = value'", "--config", "noeq.conf"),
    SW(2, "length has no value", "--config", "novalue.conf"),
    SW(2, "set twice", "--config", "twice.conf"),
    SWEEP(2, "badlen.conf:1: length: 'ten' is not a whole number", "--out",
          "x", "--config", "badlen.conf"),
    SWEEP(2, "overflow.conf:1: length: " BIG " is out of range", "--out",
          "x", "--config", "overflow.conf"),
    SWEEP(2, "runs downwards", "--out", "x", "--config", "range.conf"),
    SWEEP(2, "badmem.conf:2: memory: 'lots' is not a budget", "--out", "x",
          "--config", "badmem.conf"),
    SWEEP(2, "unknown strategy 'magic'", "--out", "x", "--config",
          "badstrat.conf"),
    SWEEP(2, "badalpha.conf:2: alpha: 0 is out of range", "--out", "x",
          "--config", "badalpha.conf"),
    SWEEP(2, "threads: -1 is out of range", "--out", "x", "--config",
          "badthreads.conf"),
    SWEEP(2, "unknown mode 'walk'", "--out", "x", "--config",
          "badmode.conf"),
    SWEEP(2, "unknown format 'xml'", "--out", "x", "--config",
          "badformat.conf"),
    SWEEP(2, "unknown policy 'maybe'", "--out", "x", "--config",
          "badinf.conf"),
    SWEEP(2, "--out: 'adir' exists and is not a regular file", "--config",
          "badout.conf"),
    SWEEP(2, "unknown cell 'qrnn'", "--out", "x", "--config", "badcell.conf"),
    SWEEP(2, "layers: 17 is out of range", "--out", "x", "--config",
          "badlayers.conf"),
    SWEEP(2, "input: 0 is out of range", "--out", "x", "--config",
          "badinput.conf"),
    SWEEP(2, "hidden: 'x' is not a whole number", "--out", "x", "--config",
          "badhidden.conf"),
    SWEEP(2, "batch: -3 is out of range", "--out", "x", "--config",
          "badbatch.conf"),
    SWEEP(2, "seed: -1 is out of range", "--out", "x", "--config",
          "badseed.conf"),
    SWEEP(2, "iters: '0' is not a whole number", "--out", "x", "--config",
          "baditers.conf"),
    SWEEP(2, "'adir' is a directory", "--out", "x", "--config",
          "badtask.conf"),
    SWEEP(2, "unknown optimizer 'rmsprop'", "--out", "x", "--config",
          "badopt.conf"),
    SWEEP(2, "lr: '0' is not a number", "--out", "x", "--config",
          "badlr.conf"),
    SWEEP(3, "smallest feasible one, 1 slots", "--out", "x", "--config",
          "infeasible.conf"),
    /* --jobs */
    SW(2, "needs a value", "--jobs"),
    SW(2, "--jobs: empty file name", "--jobs", ""),
    SW(2, "not a regular file", "--jobs", "adir"),
    SW(2, "not a regular file", "--jobs", "/dev/null"),
    SW(2, "does not exist", "--jobs", "/nonexistent/j"),
    SW(2, "both name 'x'", "--jobs", "x"),
    /* --only */
    SW(2, "needs a value", "--only"),
    SW(2, "not an integer", "--only", ""),
    SW(2, "not an integer", "--only", "x"),
    SW(2, "--only", "--only", "-1"),
    SW(2, "out of range", "--only", BIG),
    SW(2, "not in the grid", "--only", "1"),
    /* --merge, --force, --list, --help: flags */
    SW(2, "exclude each other", "--list", "--merge"),
    SW(2, "exclude each other", "--only", "0", "--jobs", "j"),
    SW(2, "--merge takes no value", "--merge=1"),
    SW(2, "--force takes no value", "--force=1"),
    SW(2, "--list takes no value", "--list=1"),
    SW(2, "--help takes no value", "--help=1"),
    /* options in general */
    SW(2, "unknown option '--bogus'", "--bogus"),
    SW(2, "ambiguous", "--m", "run"),
    SW(2, "unknown option '-x'", "-xy"),
    SW(2, "unexpected argument", "extra"),
    /* infeasible budgets and sizes that do not fit, before any work */
    SWEEP(3, "smallest feasible one, 396 slots", "--strategy", "msm,full",
          "--length", "100", "--alpha", "4", "--memory", "5%,100%", "--out",
          "x"),
    SWEEP(3, "smallest feasible one, 155 slots", "--strategy", "chen",
          "--length", "1000", "--alpha", "4", "--memory", "154", "--out",
          "x", "--jobs", "j"),
    SWEEP(2, "more than half of this machine's", "--strategy", "hsm",
          "--length", "100000", "--memory", "1", "--out", "x"),
    SWEEP(2, "more than half of this machine's", "--strategy", "full",
          "--length", "2000000000", "--out", "x", "--jobs", "j"),
    SWEEP(2, "more than half of this machine's", "--length", "1000000000",
          "--memory", "10", "--out", "x"),
};

START_TEST(test_bad_input)
{
    check_refusal(&bad_cases[_i], _i);
}
END_TEST

static Suite *cli_input_run_suite(void)
{
    Suite *s = suite_create("cli input run");
    TCase *tc = tcase_create("bad input");
    tcase_add_loop_test(tc, test_bad_input, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_input_run_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
