#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "eal_cleanup.h"

/* DPDK 22.11 leaves its runtime directory (/var/run/dpdk/PREFIX) behind
 * after rte_eal_cleanup(), empty or with its sockets, one per run and file
 * prefix: the primary process that made it removes it. */
static void
remove_runtime_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return;
	char path[PATH_MAX];
	for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

void
t4p4s_eal_cleanup(void)
{
	char runtime_dir[PATH_MAX];
	bool primary = rte_eal_process_type() == RTE_PROC_PRIMARY;
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (primary)
		remove_runtime_dir(runtime_dir);
}
