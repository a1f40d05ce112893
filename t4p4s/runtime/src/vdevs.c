/* The --vdev arguments of a DPDK process's command line, noted before
 * rte_eal_init() consumes them and checked once it has probed them: the
 * target runtime's and the BaaS's. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>

#include "vdevs.h"

#define MAX_NOTED_VDEVS RTE_MAX_ETHPORTS

struct noted_vdev {
	char name[RTE_DEV_NAME_MAX_LEN];   /* the ethdev's name: the spec up to ',' */
	const char *spec;
};

static struct noted_vdev noted_vdevs[MAX_NOTED_VDEVS];
static unsigned n_noted_vdevs;

/* A memif server's socket file that a process killed with SIGKILL left:
 * the PMD cannot bind the path again ("Address already in use"), so a
 * restarted target would not start. It is removed when nothing listens on
 * it (connect() refused); a live server's socket stays, and this process's
 * PMD then fails to probe, as it should. */
static void
remove_stale_memif_socket(const char *spec)
{
	const char *args = strchr(spec, ',');
	if (strncmp(spec, "net_memif", 9) != 0 || args == NULL)
		return;
	struct rte_kvargs *kv = rte_kvargs_parse(args + 1, NULL);
	if (kv == NULL)
		return;
	const char *role = rte_kvargs_get(kv, "role");
	const char *path = rte_kvargs_get(kv, "socket");
	const char *abstract = rte_kvargs_get(kv, "socket-abstract");
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (role != NULL && strcmp(role, "server") == 0 && path != NULL &&
	    abstract != NULL && strcmp(abstract, "no") == 0 &&
	    strlen(path) < sizeof(addr.sun_path)) {
		strcpy(addr.sun_path, path);
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 &&
		    errno == ECONNREFUSED && unlink(path) == 0)
			fprintf(stderr, "t4p4s: removed the stale memif socket %s\n", path);
		if (fd >= 0)
			close(fd);
	}
	rte_kvargs_free(kv);
}

void
t4p4s_vdevs_note(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *spec = NULL;
		if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc)
			spec = argv[++i];
		else if (strncmp(argv[i], "--vdev=", 7) == 0)
			spec = argv[i] + 7;
		if (spec == NULL || n_noted_vdevs == MAX_NOTED_VDEVS)
			continue;
		struct noted_vdev *v = &noted_vdevs[n_noted_vdevs++];
		snprintf(v->name, sizeof(v->name), "%.*s", (int)strcspn(spec, ","), spec);
		v->spec = spec;
		remove_stale_memif_socket(spec);
	}
}

int
t4p4s_vdevs_check_probed(void)
{
	int failed = 0;
	for (unsigned i = 0; i < n_noted_vdevs; i++) {
		uint16_t port;
		if (rte_eth_dev_get_port_by_name(noted_vdevs[i].name, &port) != 0) {
			fprintf(stderr, "error: --vdev %s did not probe (the EAL's "
				"message above says why); nothing was started, since "
				"the ports after it would be renumbered\n",
				noted_vdevs[i].spec);
			failed = -1;
		}
	}
	return failed;
}
