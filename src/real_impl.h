/* real_impl.h: the library's own short name for bptt_real (real.h), and
 * the BLAS and libm functions of that precision.  Internal: it includes
 * <cblas.h>, which no installed header does. */
#ifndef BPTT_REAL_IMPL_H
#define BPTT_REAL_IMPL_H

#include <cblas.h>
#include <math.h>

#include "real.h"

typedef bptt_real real;

#ifdef BPTT_DOUBLE
#define REAL_GEMM cblas_dgemm
#define REAL_EXP exp
#define REAL_TANH tanh
#define REAL_LOG log
#else
#define REAL_GEMM cblas_sgemm
#define REAL_EXP expf
#define REAL_TANH tanhf
#define REAL_LOG logf
#endif
#define REAL_NAME BPTT_REAL_NAME

#endif
