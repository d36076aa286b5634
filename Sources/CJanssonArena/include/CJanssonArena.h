#ifndef TYPINGD_CJANSSON_ARENA_H
#define TYPINGD_CJANSSON_ARENA_H

#include <stddef.h>

/// A per-thread bump allocator for jansson's allocations while one line is decoded.
///
/// jansson allocates every value, key and string of a document with its own
/// `malloc`, and frees each on `json_decref`: for a command line of a few keys,
/// malloc and free were about an eighth of typingd's instructions. Between
/// `cj_arena_begin` and `cj_arena_end`, the calling thread's allocations come from
/// its own 64 KiB block instead (one that does not fit falls back to `malloc`),
/// frees of them cost a count, and the block is reused from its start once every
/// allocation in it was freed. Nothing allocated inside a scope may be freed on
/// another thread, or after `cj_arena_end` on another thread: the decoder frees the
/// whole document before it ends the scope.
///
/// `cj_arena_install` sets jansson's allocation functions (process-wide, once,
/// before any thread decodes): outside a scope, and on threads that never open
/// one, they are plain `malloc` and `free`.

/// Routes jansson's allocations through the arena functions. Idempotent.
void cj_arena_install(void);

/// Opens the calling thread's scope: jansson allocations come from its arena.
void cj_arena_begin(void);

/// Closes it: later allocations use `malloc` again.
void cj_arena_end(void);

/// The allocations of the calling thread's arena not yet freed (for tests).
size_t cj_arena_live(void);

/// The allocations the calling thread's arena has served so far, freed or not (for
/// tests: that the arena is used at all).
size_t cj_arena_served(void);

/// The arena blocks of all threads not yet released: a thread's block is freed
/// when the thread ends (for tests).
size_t cj_arena_blocks(void);

/// The blocks released so far because their thread ended (for tests: it counts
/// every thread's, so it is robust to other threads coming and going).
size_t cj_arena_released(void);

/// True when `pointer` lies in the calling thread's arena (for tests).
int cj_arena_owns(const void *pointer);

#endif
