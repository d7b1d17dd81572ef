/* real.h: the floating-point type of cells, model, data and executor.
 * float32 by default; -DBPTT_DOUBLE builds the same code in double (the
 * finite-difference gradient test uses that build). */
#ifndef BPTT_REAL_H
#define BPTT_REAL_H

#include <cblas.h>
#include <math.h>

#ifdef BPTT_DOUBLE
typedef double real;
#define REAL_GEMM cblas_dgemm
#define REAL_EXP exp
#define REAL_TANH tanh
#define REAL_LOG log
#define REAL_NAME "float64"
#else
typedef float real;
#define REAL_GEMM cblas_sgemm
#define REAL_EXP expf
#define REAL_TANH tanhf
#define REAL_LOG logf
#define REAL_NAME "float32"
#endif

#endif
