#ifndef BAAS_LIFECYCLE_H
#define BAAS_LIFECYCLE_H

#include <stdbool.h>

/* 0 when running; else the exit status (*eal_up says whether to stop). */
int baas_start(int argc, char **argv, bool *eal_up);
int baas_stop(bool write_stats);

#endif
