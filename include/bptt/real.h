/* real.h: bptt_real, the floating-point type of cells, model, data and
 * executor: float by default; a build with -DBPTT_DOUBLE makes it double
 * (the finite-difference gradient test uses that build).  The installed
 * libraries are built with float: a program that uses them must not
 * define BPTT_DOUBLE.  BPTT_REAL_NAME names the type as NumPy does. */
#ifndef BPTT_REAL_H
#define BPTT_REAL_H

#ifdef BPTT_DOUBLE
typedef double bptt_real;
#define BPTT_REAL_NAME "float64"
#else
typedef float bptt_real;
#define BPTT_REAL_NAME "float32"
#endif

#endif
