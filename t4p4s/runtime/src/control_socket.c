/* The --control UNIX stream socket: JSON lines in, JSON lines out, served
 * by one control thread (rte_ctrl_thread_create) that polls the listening
 * socket and up to MAX_CLIENTS connections, so every EAL lcore stays free
 * for packet polling. What a line means is the caller's: the runtime's
 * commands (control_json.c), or another process's (the BaaS's) built on
 * the same socket. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "control_socket.h"

#define MAX_CLIENTS 16
#define MAX_LINE (64u << 20)   /* one command; beyond this the client is cut */
#define POLL_MS 100

struct client {
	int fd;
	char *buf;
	size_t len;
	size_t cap;
};

static int listen_fd = -1;
static char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static pthread_t thread;
static volatile bool stopping;
static struct client clients[MAX_CLIENTS];
static t4p4s_control_line_fn serve_line;

static void
client_close(struct client *c)
{
	close(c->fd);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static bool
send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* Answers every complete line in the buffer; false if the client is gone. */
static bool
serve_lines(struct client *c)
{
	size_t start = 0;
	for (;;) {
		char *nl = memchr(c->buf + start, '\n', c->len - start);
		if (nl == NULL)
			break;
		size_t n = (size_t)(nl - (c->buf + start));
		if (n > 0 && !(n == 1 && c->buf[start] == '\r')) {
			char *reply = serve_line(c->buf + start, n);
			bool ok = reply != NULL && send_all(c->fd, reply, strlen(reply)) &&
				  send_all(c->fd, "\n", 1);
			free(reply);
			if (!ok)
				return false;
		}
		start += n + 1;
	}
	memmove(c->buf, c->buf + start, c->len - start);
	c->len -= start;
	return true;
}

static bool
client_read(struct client *c)
{
	if (c->cap - c->len < 4096) {
		size_t cap = c->cap ? c->cap * 2 : 65536;
		if (cap > MAX_LINE) {
			const char *msg = "{\"ok\":false,\"error\":\"EPARSE\","
				"\"message\":\"command too long\"}\n";
			send_all(c->fd, msg, strlen(msg));
			return false;
		}
		char *b = realloc(c->buf, cap);
		if (b == NULL)
			return false;
		c->buf = b;
		c->cap = cap;
	}
	ssize_t r = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (r <= 0)
		return false;   /* closed; a partial last line is dropped */
	c->len += (size_t)r;
	return serve_lines(c);
}

static void
accept_client(void)
{
	int fd = accept(listen_fd, NULL, NULL);
	if (fd < 0)
		return;
	for (int i = 0; i < MAX_CLIENTS; i++) {
		if (clients[i].fd < 0) {
			clients[i].fd = fd;
			return;
		}
	}
	const char *msg = "{\"ok\":false,\"error\":\"ENOSPC\","
			  "\"message\":\"too many control clients\"}\n";
	send_all(fd, msg, strlen(msg));
	close(fd);
}

static void *
serve(void *unused __rte_unused)
{
	while (!stopping) {
		struct pollfd pfd[MAX_CLIENTS + 1];
		int who[MAX_CLIENTS + 1];
		int n = 0;
		pfd[n] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
		who[n++] = -1;
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (clients[i].fd < 0)
				continue;
			pfd[n] = (struct pollfd){ .fd = clients[i].fd, .events = POLLIN };
			who[n++] = i;
		}
		if (poll(pfd, (nfds_t)n, POLL_MS) <= 0)
			continue;
		for (int k = 0; k < n; k++) {
			if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (who[k] < 0)
				accept_client();
			else if (!client_read(&clients[who[k]]))
				client_close(&clients[who[k]]);
		}
	}
	return NULL;
}

int
t4p4s_control_socket_start(const char *path, t4p4s_control_line_fn fn)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "error: --control %s: path too long (max %zu)\n",
			path, sizeof(addr.sun_path) - 1);
		return -1;
	}
	strcpy(addr.sun_path, path);
	for (int i = 0; i < MAX_CLIENTS; i++)
		clients[i].fd = -1;
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(path);   /* a stale socket of an earlier run */
	if (listen_fd < 0 ||
	    bind(listen_fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(listen_fd, 8) != 0) {
		fprintf(stderr, "error: --control %s: %s\n", path, strerror(errno));
		return -1;
	}
	strcpy(socket_path, path);
	serve_line = fn;
	int ret = rte_ctrl_thread_create(&thread, "t4p4s-control", NULL, serve,
					 NULL);
	if (ret != 0) {
		fprintf(stderr, "error: cannot start the control thread: %s\n",
			strerror(ret));
		return -1;
	}
	return 0;
}

void
t4p4s_control_socket_stop(void)
{
	if (listen_fd < 0)
		return;
	stopping = true;
	pthread_join(thread, NULL);
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].fd >= 0)
			client_close(&clients[i]);
	close(listen_fd);
	unlink(socket_path);
	listen_fd = -1;
}
