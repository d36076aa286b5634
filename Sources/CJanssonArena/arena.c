#include "CJanssonArena.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

// Under AddressSanitizer (the fuzzer's build) the block's free space is poisoned:
// a read of a decoded value after its line was freed, or past the end of one
// allocation, is reported as it would be with malloc.
#if defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define ARENA_ASAN 1
#  endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#  define ARENA_ASAN 1
#endif
#ifdef ARENA_ASAN
#  include <sanitizer/asan_interface.h>
#  define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#  define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#  define POISON(p, n) ((void)(p), (void)(n))
#  define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

enum { ARENA_BYTES = 64 * 1024, ARENA_ALIGN = 16 };

typedef struct {
    char *base;      // the block, allocated on the thread's first scope (NULL before)
    size_t used;     // bytes handed out since the block was last empty
    size_t live;     // allocations from the block not yet freed
    size_t served;   // allocations the block has served, ever (for tests)
    int active;      // inside cj_arena_begin ... cj_arena_end
} arena_t;

static _Thread_local arena_t arena;

// A thread's block is freed when the thread ends: parsing threads come and go with
// each session of a program that embeds the library (and the fuzzer's runs).
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static int key_made;
static atomic_size_t blocks;     // blocks allocated and not yet released, over all threads
static atomic_size_t released;   // blocks released when their thread ended, ever

static void release_block(void *block) {
    UNPOISON(block, ARENA_BYTES);
    free(block);
    atomic_fetch_sub(&blocks, 1);
    atomic_fetch_add(&released, 1);
}

static void make_key(void) { key_made = pthread_key_create(&key, release_block) == 0; }

static void *arena_malloc(size_t size) {
    // size 0 goes to malloc: on a full block it would be the block's end, which
    // arena_free would take for someone else's pointer.
    if (arena.active && size > 0) {
        size_t need = (size + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1);
        if (need >= size && need <= ARENA_BYTES - arena.used) {
            void *pointer = arena.base + arena.used;
            UNPOISON(pointer, size);
            arena.used += need;
            arena.live += 1;
            arena.served += 1;
            return pointer;
        }
    }
    return malloc(size);
}

static void arena_free(void *pointer) {
    if (pointer != NULL && arena.base != NULL && (uintptr_t)pointer - (uintptr_t)arena.base < ARENA_BYTES) {
        arena.live -= 1;
        if (arena.live == 0) {
            POISON(arena.base, arena.used);
            arena.used = 0;
        }
        return;
    }
    free(pointer);
}

void cj_arena_install(void) { json_set_alloc_funcs(arena_malloc, arena_free); }

void cj_arena_begin(void) {
    if (arena.base == NULL) {
        arena.base = aligned_alloc(ARENA_ALIGN, ARENA_BYTES);
        if (arena.base == NULL) return;   // no block: malloc as before
        atomic_fetch_add(&blocks, 1);
        pthread_once(&key_once, make_key);
        if (key_made) pthread_setspecific(key, arena.base);
        POISON(arena.base, ARENA_BYTES);
    }
    arena.active = 1;
}

void cj_arena_end(void) { arena.active = 0; }

size_t cj_arena_live(void) { return arena.live; }

size_t cj_arena_served(void) { return arena.served; }

size_t cj_arena_blocks(void) { return atomic_load(&blocks); }

size_t cj_arena_released(void) { return atomic_load(&released); }

int cj_arena_owns(const void *pointer) {
    return arena.base != NULL && (uintptr_t)pointer - (uintptr_t)arena.base < ARENA_BYTES;
}
