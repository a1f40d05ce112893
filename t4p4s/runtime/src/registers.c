/* Register arrays. Every register's cells are laid out in one block, each
 * array on a cache line of its own; the block is anonymous memory, or with
 * --registers-file PATH the file mapped MAP_SHARED (register_memory(), the
 * one place that allocates). The lcores read and write the cells the same
 * way in both cases: one relaxed 64-bit atomic per access.
 *
 * The registers file:
 *
 *   offset 0     header (struct regfile_header, zero-padded to 4096 bytes)
 *   offset 4096  register 0's cells: uint64_t each, host byte order
 *                register 1's cells, from the next 64-byte boundary, ...
 *   the file's size is rounded up to its file system's block size (a
 *   hugetlbfs file: the huge page size)
 *
 * The header names the program and fingerprints its register layout (each
 * register's name, bit width and size, in the program's order). A file
 * whose header does not match this program, or that is no registers file,
 * is refused: the runtime stops with an error and leaves the file as it
 * is (it may be another process's state; its sequence numbers must not be
 * lost or reused), and the operator removes it to start from zeros. A file
 * that does not exist or is empty is made, zero-filled. The file is locked
 * (flock) while mapped, so two live processes never share one; the kernel
 * drops the lock when the process dies, however it dies. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "options.h"
#include "registers.h"
#include "runtime.h"

struct t4p4s_register *t4p4s_registers[T4P4S_MAX_REGISTERS];

uint64_t
t4p4s_register_read(struct t4p4s_register *r, uint32_t index)
{
	if (unlikely(index >= r->size))
		return 0;
	return __atomic_load_n(&r->cells[index], __ATOMIC_RELAXED);
}

void
t4p4s_register_prefetch(const struct t4p4s_register *r, uint32_t index)
{
	if (likely(index < r->size))
		rte_prefetch0(&r->cells[index]);
}

void
t4p4s_register_write(struct t4p4s_register *r, uint32_t index, uint64_t value)
{
	if (unlikely(index >= r->size))
		return;
	__atomic_store_n(&r->cells[index], value & r->mask, __ATOMIC_RELAXED);
}

void
t4p4s_register_reset(struct t4p4s_register *r)
{
	for (uint32_t i = 0; i < r->size; i++)
		__atomic_store_n(&r->cells[i], 0, __ATOMIC_RELAXED);
}

/* ---- the registers file ------------------------------------------------ */

#define REGFILE_MAGIC "T4P4SREG"
#define REGFILE_VERSION 1u
#define REGFILE_HEADER_SIZE 4096u
#define REGFILE_PROGRAM_LEN 64

struct regfile_header {
	char magic[8];              /* REGFILE_MAGIC, written last */
	uint32_t version;           /* REGFILE_VERSION */
	uint32_t header_size;       /* where register 0's cells start */
	uint64_t layout;            /* layout_fingerprint() */
	uint64_t file_size;
	uint32_t n_registers;
	uint32_t cell_size;         /* sizeof(uint64_t) */
	uint64_t opens;             /* processes that mapped it, this one included */
	int32_t pid;                /* the last of them */
	uint32_t reserved;
	char program[REGFILE_PROGRAM_LEN];   /* t4p4s_program.name, NUL-terminated */
};
_Static_assert(sizeof(struct regfile_header) <= REGFILE_HEADER_SIZE,
	       "the header fits its page");

static struct {
	void *base;                 /* the whole block (file: from its header) */
	uint64_t *cells;            /* register 0's first cell */
	size_t map_size;            /* file: the mapping's length */
	int fd;                     /* file: open and locked while mapped; else -1 */
} block = { .fd = -1 };

static size_t cell_offset[T4P4S_MAX_REGISTERS];   /* in cells, from block.cells */

static uint32_t
n_cells(const struct t4p4s_register_desc *d)
{
	return d->size ? d->size : 1;
}

/* Lays out every register's cells (cell_offset); returns their bytes. */
static size_t
layout(void)
{
	size_t at = 0;
	for (uint16_t i = 0; i < t4p4s_program.n_registers; i++) {
		cell_offset[i] = at / sizeof(uint64_t);
		at += RTE_ALIGN_CEIL(n_cells(&t4p4s_program.registers[i]) *
				     sizeof(uint64_t), RTE_CACHE_LINE_SIZE);
	}
	return at;
}

static uint64_t
fnv1a(uint64_t h, const void *data, size_t n)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

static uint64_t
fnv1a_le(uint64_t h, uint64_t value, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		h = fnv1a(h, &(uint8_t){ (uint8_t)(value >> (8 * i)) }, 1);
	return h;
}

/* Names, bit widths and sizes of the program's registers, in order. */
static uint64_t
layout_fingerprint(void)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	h = fnv1a_le(h, t4p4s_program.n_registers, 2);
	for (uint16_t i = 0; i < t4p4s_program.n_registers; i++) {
		const struct t4p4s_register_desc *d = &t4p4s_program.registers[i];
		h = fnv1a(h, d->name, strlen(d->name) + 1);
		h = fnv1a_le(h, d->bitwidth, 2);
		h = fnv1a_le(h, d->size, 4);
	}
	return h;
}

static bool
all_zero(const void *data, size_t n)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

static const char *
filesystem_note(int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs) != 0)
		return NULL;
	switch ((unsigned long)fs.f_type) {
	case TMPFS_MAGIC:
	case RAMFS_MAGIC:
	case HUGETLBFS_MAGIC:
		return NULL;
	default:
		return "it is not on tmpfs or hugetlbfs: the kernel writes its pages "
		       "back to the disk, and an lcore's next store to a page written "
		       "back takes a page fault";
	}
}

/* Why a registers file's header does not fit this program, or NULL. */
static const char *
header_mismatch(const struct regfile_header *h, uint64_t fingerprint,
		uint64_t file_size, off_t actual_size, char *why, size_t why_size)
{
	char program[REGFILE_PROGRAM_LEN];
	if (h->version != REGFILE_VERSION || h->header_size != REGFILE_HEADER_SIZE ||
	    h->cell_size != sizeof(uint64_t)) {
		snprintf(why, why_size, "it is a registers file of format version %u "
			 "(header %u bytes, %u-byte cells); this runtime uses version %u",
			 h->version, h->header_size, h->cell_size, REGFILE_VERSION);
		return why;
	}
	memcpy(program, h->program, sizeof(program));
	program[sizeof(program) - 1] = '\0';
	if (strncmp(program, t4p4s_program.name, sizeof(program) - 1) != 0 ||
	    h->layout != fingerprint || h->n_registers != t4p4s_program.n_registers) {
		snprintf(why, why_size, "it holds the registers of program '%s' (%u registers, "
			 "layout %016" PRIx64 "); this is program '%s' (%u registers, layout "
			 "%016" PRIx64 ")", program, h->n_registers, h->layout,
			 t4p4s_program.name, t4p4s_program.n_registers, fingerprint);
		return why;
	}
	if (h->file_size != file_size || (uint64_t)actual_size != file_size) {
		snprintf(why, why_size, "its size is %lld bytes and its header says %" PRIu64
			 "; this program's registers take %" PRIu64, (long long)actual_size,
			 h->file_size, file_size);
		return why;
	}
	return NULL;
}

/* Says why the file cannot be used, closes it (and drops its lock);
 * returns -err. */
static int __rte_format_printf(4, 5)
refuse(const char *path, int fd, int err, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "error: --registers-file %s: ", path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (fd >= 0)
		close(fd);
	return -err;
}

/* Maps the registers file (see the top of this file), made or reused. */
static int
map_registers_file(const char *path, size_t cells_bytes)
{
	char why[512];
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return refuse(path, -1, errno, "%s", strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int err = errno;
		if (err == EWOULDBLOCK)
			return refuse(path, fd, EBUSY, "another process has it mapped (one "
				      "process at a time may own a registers file)");
		return refuse(path, fd, err, "%s", strerror(err));
	}
	struct stat st;
	if (fstat(fd, &st) != 0)
		return refuse(path, fd, errno, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return refuse(path, fd, EINVAL, "not a regular file");
	long page = sysconf(_SC_PAGESIZE);
	uint64_t unit = RTE_MAX((uint64_t)page, (uint64_t)st.st_blksize);
	uint64_t file_size = RTE_ALIGN_CEIL(REGFILE_HEADER_SIZE + cells_bytes, unit);
	uint64_t fingerprint = layout_fingerprint();

	struct regfile_header old;
	memset(&old, 0, sizeof(old));
	if (st.st_size > 0 && pread(fd, &old, sizeof(old), 0) < 0)
		return refuse(path, fd, errno, "%s", strerror(errno));
	/* empty, or made by a process that died before it wrote the magic
	 * (the header is written last, after the zeroed size was set) */
	bool fresh = st.st_size == 0 ||
		((uint64_t)st.st_size == file_size && all_zero(&old, sizeof(old)));
	if (!fresh && memcmp(old.magic, REGFILE_MAGIC, sizeof(old.magic)) != 0)
		return refuse(path, fd, EINVAL, "it is not a t4p4s registers file; it is "
			      "left as it is (give a new or empty file)");
	if (!fresh) {
		const char *mismatch = header_mismatch(&old, fingerprint, file_size,
						       st.st_size, why, sizeof(why));
		if (mismatch != NULL)
			return refuse(path, fd, EINVAL, "%s; it is left as it is: remove it "
				      "to start this program's registers at 0 (the values it "
				      "holds are then lost), or give another path", mismatch);
	} else if (ftruncate(fd, 0) != 0 || ftruncate(fd, (off_t)file_size) != 0) {
		return refuse(path, fd, errno, "%s", strerror(errno));
	}
	/* the space now, so that a full file system is an error here and not
	 * a SIGBUS in an lcore's first store to a page */
	int err = posix_fallocate(fd, 0, (off_t)file_size);
	if (err != 0 && err != EOPNOTSUPP && err != EINVAL)
		return refuse(path, fd, err, "cannot allocate it: %s", strerror(err));
	void *base = mmap(NULL, file_size, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_POPULATE, fd, 0);
	if (base == MAP_FAILED)
		return refuse(path, fd, errno, "mmap: %s", strerror(errno));
	(void)mlock(base, file_size);   /* best effort: kept resident */

	struct regfile_header *h = base;
	if (fresh) {
		h->version = REGFILE_VERSION;
		h->header_size = REGFILE_HEADER_SIZE;
		h->layout = fingerprint;
		h->file_size = file_size;
		h->n_registers = t4p4s_program.n_registers;
		h->cell_size = sizeof(uint64_t);
		snprintf(h->program, sizeof(h->program), "%s", t4p4s_program.name);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		memcpy(h->magic, REGFILE_MAGIC, sizeof(h->magic));
	}
	uint64_t opens_before = h->opens;
	int32_t pid_before = h->pid;
	h->opens = opens_before + 1;
	h->pid = (int32_t)getpid();

	block.base = base;
	block.cells = (uint64_t *)((uint8_t *)base + REGFILE_HEADER_SIZE);
	block.map_size = file_size;
	block.fd = fd;
	if (fresh)
		fprintf(stderr, "registers file %s: new, the %u registers of %s start at 0\n",
			path, t4p4s_program.n_registers, t4p4s_program.name);
	else
		fprintf(stderr, "registers file %s: the %u registers of %s kept (mapped "
			"%" PRIu64 " times before, last by pid %d)\n", path,
			t4p4s_program.n_registers, t4p4s_program.name, opens_before,
			pid_before);
	const char *note = filesystem_note(fd);
	if (note != NULL)
		fprintf(stderr, "note: registers file %s: %s\n", path, note);
	return 0;
}

/* The one allocation of every register's cells: anonymous memory, zeroed,
 * or the registers file when there is one. */
static int
register_memory(size_t cells_bytes)
{
	const struct t4p4s_options *o = t4p4s_rt.opts;
	if (o != NULL && o->registers_file != NULL) {
		int ret = map_registers_file(o->registers_file, cells_bytes);
		if (ret != 0)
			return ret;
		/* every page written once (the values kept, bits a register
		 * cannot hold cleared): no page fault in an lcore's first store */
		for (uint16_t i = 0; i < t4p4s_program.n_registers; i++) {
			const struct t4p4s_register_desc *d = &t4p4s_program.registers[i];
			uint64_t *cells = block.cells + cell_offset[i];
			uint64_t mask = t4p4s_mask64(d->bitwidth);
			for (uint32_t c = 0; c < n_cells(d); c++)
				cells[c] &= mask;
		}
		return 0;
	}
	block.base = rte_zmalloc(NULL, RTE_MAX(cells_bytes, (size_t)RTE_CACHE_LINE_SIZE),
				 RTE_CACHE_LINE_SIZE);
	if (block.base == NULL)
		return -ENOMEM;
	block.cells = block.base;
	return 0;
}

bool
t4p4s_registers_persistent(void)
{
	return block.fd >= 0;
}

int
t4p4s_registers_init(void)
{
	if (t4p4s_program.n_registers > T4P4S_MAX_REGISTERS)
		return -E2BIG;
	int ret = register_memory(layout());
	if (ret != 0)
		return ret;
	for (uint16_t i = 0; i < t4p4s_program.n_registers; i++) {
		const struct t4p4s_register_desc *d = &t4p4s_program.registers[i];
		struct t4p4s_register *r = rte_zmalloc(NULL, sizeof(*r), 0);
		if (r == NULL)
			return -ENOMEM;
		r->desc = d;
		r->size = d->size;
		r->mask = t4p4s_mask64(d->bitwidth);
		r->cells = block.cells + cell_offset[i];
		t4p4s_registers[i] = r;
	}
	return 0;
}

void
t4p4s_registers_fini(void)
{
	for (uint16_t i = 0; i < t4p4s_program.n_registers; i++) {
		rte_free(t4p4s_registers[i]);
		t4p4s_registers[i] = NULL;
	}
	if (block.fd >= 0) {
		munmap(block.base, block.map_size);
		close(block.fd);        /* and its lock */
		block.fd = -1;
	} else {
		rte_free(block.base);
	}
	block.base = NULL;
	block.cells = NULL;
}
