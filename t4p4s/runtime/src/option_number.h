/* A numeric command-line value, checked: shared by the runtime's options
 * and the BaaS's (baas/src/options.c). */
#ifndef T4P4S_OPTION_NUMBER_H
#define T4P4S_OPTION_NUMBER_H

/* Parses arg as a number in min..max into *out; otherwise prints
 * "error: OPT: invalid value ..." to stderr and returns -1. */
int t4p4s_option_number(const char *opt, const char *arg, double min, double max,
			double *out);

#endif
