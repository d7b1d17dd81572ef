/* main.c: `bptt` entry point: dispatches to subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "config.h"
#include "git-revision.h"
#include "blascore.h"
#include "cell.h"
#include "train/aslimit.h"
#include "train/team.h"
#include "budget.h"
#include "cli.h"

/* n as decimal digits at the end of buf[0..cap): their start. */
static char *digits(char *buf, size_t cap, long long n)
{
    char *p = buf + cap;
    *--p = '\0';
    do
        *--p = (char)('0' + n % 10);
    while ((n /= 10) > 0 && p > buf);
    return p;
}

/* The --threads K of `bptt run` or `bptt compare` in argv (its last
 * value), or 0. */
static int run_threads(int argc, char **argv)
{
    if (argc < 2 ||
        (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "compare") != 0 &&
         strcmp(argv[1], "calibrate") != 0))
        return 0;
    int k = 0;
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            v = argv[i + 1];
        else if (strncmp(argv[i], "--threads=", 10) == 0)
            v = argv[i] + 10;
        if (v) {
            k = 0;
            for (; *v >= '0' && *v <= '9' && k < 100000; v++)
                k = k * 10 + (*v - '0');
        }
    }
    return k > 4096 ? 4096 : k;
}

/* Before any library starts (the executable's preinit functions run
 * before the shared libraries' constructors): under an address-space
 * limit too small for OpenBLAS's start, which would spin forever, one line
 * and exit 2, naming a limit that serves the start and, for `bptt run`,
 * its --threads.  System calls only: nothing has started yet. */
static void address_space_preinit(int argc, char **argv, char **envp)
{
    int64_t left, limit;
    if (!bptt_address_space_left(&left, &limit))
        return;
    const int n = bptt_blas_start_threads(envp);
    const int64_t need = n * BPTT_BLAS_THREAD_BYTES + BPTT_AS_SLACK_BYTES;
    if (bptt_address_space_fits(need) == 0)
        return;
    const int k = run_threads(argc, argv);
    const int most = k > n ? k : n;
    const int64_t used = limit - left;
    char b[4][24];
    const char *parts[] = {
        "bptt: the address-space limit (ulimit -v ",
        digits(b[0], 24, (long long)(limit / 1024)),
        ") is too small: OpenBLAS reserves 128 MiB a thread when it starts, ",
        digits(b[1], 24, n), n > 1 ? " threads here" : " thread here",
        "; raise it to ulimit -v ",
        digits(b[2], 24,
               bptt_address_space_advice(used, most * BPTT_BLAS_THREAD_BYTES +
                                                  BPTT_AS_SLACK_BYTES)),
        n > 1 && k <= 1 ? ", or start one thread (OMP_NUM_THREADS=1 needs "
                          "ulimit -v "
                        : "",
        n > 1 && k <= 1
            ? digits(b[3], 24,
                     bptt_address_space_advice(used, BPTT_BLAS_THREAD_BYTES +
                                                        BPTT_AS_SLACK_BYTES))
            : "",
        n > 1 && k <= 1 ? ")" : "", "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (write(2, parts[i], strlen(parts[i])) < 0)
            break;
    _exit(EXIT_USAGE);
}
__attribute__((section(".preinit_array"), used)) static void (
    *const preinit_address_space)(int, char **, char **) =
    address_space_preinit;

static void usage(FILE *f)
{
    fputs("usage: bptt COMMAND [OPTIONS]\n"
          "\n"
          "Memory-efficient backpropagation through time (Gruslys et al.,\n"
          "NIPS 2016): optimal checkpointing plans for recurrent networks.\n"
          "\n"
          "commands:\n"
          "  plan   plan one training iteration under a memory budget\n"
          "  run    train a recurrent network under a plan and measure it\n"
          "  compare  time plans against a reference, pair by pair, in one process\n"
          "  sweep  plan or run every point of a grid, resumably, into a file\n"
          "  validate  check a plan given as JSON actions and count it\n"
          "  calibrate  measure a slow level's write and read costs in forward\n"
          "           steps, for plan --disk\n"
          "\n"
          "  bptt COMMAND --help   options of a command\n"
          "  bptt --version        version and git revision\n",
          f);
}

/* What a subcommand returned, unless its output could not be written
 * (a full disk, a closed pipe): then one line and 1. */
static int finish(const char *cmd, int rc)
{
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        const int e = errno;
        return cli_error(1, cmd, "cannot write the output: %s",
                         e ? strerror(e) : "write error");
    }
    return rc;
}

/* fds 0-2 held open (on /dev/null where the caller closed one), so that
 * no file bptt opens becomes standard error and takes its messages (a
 * sweep's FILE.partial would, and the rerun would refuse it). */
static void hold_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            const int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (got >= 0 && got != fd)
                close(got); /* a lower one was taken meanwhile: not ours */
        }
}

int main(int argc, char **argv)
{
    hold_std_fds();
    if (argc < 2)
        return cli_error(EXIT_USAGE, "", "no command given (usage: bptt plan "
                         "--length T ...; see bptt --help)");
    /* OpenBLAS's kernels: a better set than its own fallback, by a new
     * start before any work (blascore.h); when that fails the run goes on
     * with OpenBLAS's choice, which every output records */
    (void)bptt_blas_reexec(argv);
    /* training calls OpenBLAS: kernels the CPU cannot run would stop it
     * on an illegal instruction */
    const char *forced = getenv("OPENBLAS_CORETYPE");
    const int cpu = bptt_cpu_isa();
    if ((strcmp(argv[1], "run") == 0 || strcmp(argv[1], "compare") == 0 ||
         strcmp(argv[1], "calibrate") == 0) &&
        forced &&
        bptt_blas_core_runnable(forced, cpu) != 0)
        return cli_error(EXIT_USAGE, argv[1], "OPENBLAS_CORETYPE=%s asks for %s "
                         "kernels, which this CPU cannot run (it offers %s, "
                         "as cpuid reports it; valgrind hides AVX-512): set "
                         "OPENBLAS_CORETYPE=%s, or unset it and bptt chooses",
                         forced, bptt_isa_name(bptt_blas_core_isa(forced)),
                         bptt_isa_name(cpu),
                         bptt_blas_core_for_isa(cpu) ? bptt_blas_core_for_isa(cpu)
                                                     : "Prescott");
    /* the cells' GEMM path: a name the library does not know would be
     * passed over for the widest kernel, and the run not be the one asked
     * for */
    const char *gemm = getenv("BPTT_GEMM_KERNEL");
    if ((strcmp(argv[1], "run") == 0 || strcmp(argv[1], "compare") == 0 ||
         strcmp(argv[1], "calibrate") == 0) &&
        gemm && !bptt_cell_kernel_known(gemm)) {
        char all[64], here[64];
        bptt_cell_kernel_names(all, sizeof all, " or ", 0);
        bptt_cell_kernel_names(here, sizeof here, " and ", 1);
        return cli_error(EXIT_USAGE, argv[1], "BPTT_GEMM_KERNEL=%.32s%s names "
                         "no GEMM path: set it to %s (this CPU runs %s), or "
                         "unset it for the widest",
                         gemm, strlen(gemm) > 32 ? "..." : "", all, here);
    }
    const char *cmd = argv[1];
    /* OMP_NUM_THREADS beyond what --threads takes would end the process
     * in libgomp (a team of 100000): capped as --threads is, said once */
    const int omp_threads = bptt_threads_cap();
    if (omp_threads > BPTT_THREADS_MAX)
        cli_note(strcmp(cmd, "plan") == 0 || strcmp(cmd, "run") == 0 ||
                         strcmp(cmd, "compare") == 0 ||
                         strcmp(cmd, "sweep") == 0 ||
                         strcmp(cmd, "validate") == 0 ||
                         strcmp(cmd, "calibrate") == 0
                     ? cmd
                     : "",
                 "note: OMP_NUM_THREADS asks for %d threads; using %d, the "
                 "most --threads takes",
                 omp_threads, BPTT_THREADS_MAX);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        usage(stdout);
        return finish("", 0);
    }
    /* --version, after the command too (bptt run --version): the version
     * and nothing else, whatever else is given */
    int version = strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0;
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
        version |= strcmp(argv[i], "--version") == 0;
    if (version) {
        printf("bptt %s (git %s)\n", PACKAGE_VERSION, BPTT_GIT_REVISION);
        return finish("", 0);
    }
    if (strcmp(cmd, "plan") == 0)
        return finish(cmd, cli_plan(argc - 1, argv + 1));
    if (strcmp(cmd, "run") == 0)
        return finish(cmd, cli_run(argc - 1, argv + 1));
    if (strcmp(cmd, "compare") == 0)
        return finish(cmd, cli_compare(argc - 1, argv + 1));
    if (strcmp(cmd, "sweep") == 0)
        return finish(cmd, cli_sweep(argc - 1, argv + 1));
    if (strcmp(cmd, "validate") == 0)
        return finish(cmd, cli_validate(argc - 1, argv + 1));
    if (strcmp(cmd, "calibrate") == 0)
        return finish(cmd, cli_calibrate(argc - 1, argv + 1));
    return cli_error(EXIT_USAGE, "", "unknown command '%s' (try: bptt plan, "
                     "bptt --help)", cmd);
}
