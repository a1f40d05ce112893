#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "option_number.h"

int
t4p4s_option_number(const char *opt, const char *arg, double min, double max,
		    double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "error: %s: invalid value '%s' (expected a number in %g..%g)\n",
			opt, arg, min, max);
		return -1;
	}
	*out = v;
	return 0;
}
