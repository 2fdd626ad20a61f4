/*
 * libevent's memory for the fuzz targets (event_set_mem_functions): as
 * malloc, except that a freed block of 64 KB or more is kept, poisoned,
 * for the next request of the same size.
 *
 * Why: an evbuffer's chain for a 64 KB read (lib/conn.c's READ_CHUNK) is
 * 128 KB with its header, which ASan's allocator takes from mmap(2) and
 * gives back with munmap(2) each time; on this project's VMs each munmap
 * is a TLB shootdown of every CPU.  That was 30 % of the lib target's
 * time (perf record -e cpu-clock).  A kept block stays poisoned until it
 * is handed out again, so a use after its free is still reported (as a
 * use-after-poison) for as long as it is kept; ASan still checks the
 * block's end (it is a malloc'd block of exactly the size asked for, plus
 * the size word in front).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "fuzz.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FZ_ASAN 1
#endif
#ifdef FZ_ASAN
#include <sanitizer/asan_interface.h>
#define FZ_POISON(p, n)		ASAN_POISON_MEMORY_REGION((p), (n))
#define FZ_UNPOISON(p, n)	ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define FZ_POISON(p, n)		((void)(p), (void)(n))
#define FZ_UNPOISON(p, n)	((void)(p), (void)(n))
#endif

#define EVMEM_BIG	(64u << 10)	/* blocks this big are kept */
#define EVMEM_KEEP	8		/* at most so many */
#define EVMEM_HDR	16		/* the size, keeping the alignment */

static void	*evmem_keep[EVMEM_KEEP];
static size_t	 evmem_nkeep;

static void *
evmem_malloc(size_t n)
{
	uint8_t	*b;
	size_t	 i;

	if (n >= EVMEM_BIG) {
		for (i = 0; i < evmem_nkeep; i++) {
			b = evmem_keep[i];
			FZ_UNPOISON(b, EVMEM_HDR);
			if (*(size_t *)(void *)b == n) {
				evmem_keep[i] = evmem_keep[--evmem_nkeep];
				FZ_UNPOISON(b + EVMEM_HDR, n);
				return (b + EVMEM_HDR);
			}
			FZ_POISON(b, EVMEM_HDR);
		}
	}
	if (n > SIZE_MAX - EVMEM_HDR || (b = malloc(EVMEM_HDR + n)) == NULL)
		return (NULL);
	*(size_t *)(void *)b = n;
	return (b + EVMEM_HDR);
}

static void
evmem_free(void *p)
{
	uint8_t	*b;
	size_t	 n;

	if (p == NULL)
		return;
	b = (uint8_t *)p - EVMEM_HDR;
	n = *(size_t *)(void *)b;
	if (n < EVMEM_BIG) {
		free(b);
		return;
	}
	if (evmem_nkeep == EVMEM_KEEP) {
		/* the oldest goes back to malloc */
		FZ_UNPOISON(evmem_keep[0], EVMEM_HDR);
		free(evmem_keep[0]);
		memmove(evmem_keep, evmem_keep + 1,
		    (EVMEM_KEEP - 1) * sizeof(evmem_keep[0]));
		evmem_nkeep--;
	}
	FZ_POISON(b, EVMEM_HDR + n);
	evmem_keep[evmem_nkeep++] = b;
}

static void *
evmem_realloc(void *p, size_t n)
{
	void	*q;
	size_t	 old;

	if (p == NULL)
		return (evmem_malloc(n));
	if (n == 0) {
		evmem_free(p);
		return (NULL);
	}
	if ((q = evmem_malloc(n)) == NULL)
		return (NULL);
	old = *(size_t *)(void *)((uint8_t *)p - EVMEM_HDR);
	memcpy(q, p, old < n ? old : n);
	evmem_free(p);
	return (q);
}

/* Before libevent allocates anything (LLVMFuzzerInitialize). */
void
fz_evmem_init(void)
{
	event_set_mem_functions(evmem_malloc, evmem_realloc, evmem_free);
}
