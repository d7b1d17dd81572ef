/* numbers.h: the one reader of the numbers people write, for budgets,
 * options, config files and records read back: decimal only, the same in
 * every locale (digits checked here, then strtod_l in the C locale,
 * whatever LC_NUMERIC the caller set), and the words for what is wrong
 * with a number written in a form that is not read.  Private to the
 * libraries and the command line (not installed). */
#ifndef BPTT_NUMBERS_H
#define BPTT_NUMBERS_H

#include <stddef.h>
#include <stdint.h>

/* The most decimals a number may have where a fraction is read exactly
 * (a byte budget: 19 are exact at any unit). */
#define BPTT_NUMBER_MAX_DECIMALS 19

/* A decimal integer filling text[0..n) (an optional '-', digits; no '+',
 * space or other byte): 0; -1 when it is not one; -2 when it is beyond
 * int64.  The one integer reader of the command line's options too. */
int bptt_parse_whole(const char *text, size_t n, int64_t *out);

/* A non-negative decimal number filling text[0..n): digits with at most
 * one point ("2.5", ".5", "3."), read the same in every locale (in the C
 * locale, whatever LC_NUMERIC the caller set); no sign, space, exponent, hex,
 * "inf" or "nan".  0 with *out, or -1 when it is not one. */
int bptt_parse_decimal(const char *text, size_t n, double *out);

/* A non-negative number in decimal notation with an optional exponent
 * ("0.001", "1e-3", "2.5E+2"; the whole string), read the same in every
 * locale; no sign, space, hex, "inf" or "nan".  0 with *out, or -1 when it
 * is not one (or out of a double's range). */
int bptt_parse_real(const char *text, double *out);

/* v (finite, >= 0) as the shortest decimal that bptt_parse_real reads
 * back as v, into buf[cap] (cap >= 32): a whole number below 2^53
 * without a point or an exponent ("3847"), else %g's form with the
 * fewest digits that does ("9.6", "1e-07"), in the C locale whatever
 * LC_NUMERIC says; %.17g for any other value.  Returns buf. */
const char *bptt_real_text(char *buf, size_t cap, double v);

/* What is wrong with a number as written, in words, when it is one of
 * the forms people try that are not read ("0x10KiB": "hexadecimal is
 * not read"; "2,5%": a comma; "inf", "nan"; "1e3"): a static string, or
 * NULL when none of those. */
const char *bptt_number_trouble(const char *text);

#endif
