#ifndef CARGON2_SHIM_H
#define CARGON2_SHIM_H
#include <argon2.h>
#include <stdlib.h>

// ARGON2_FLAG_* are shifted-constant macros Swift does not import.
static inline uint32_t cargon2_flags_clear_inputs(void) {
    return ARGON2_FLAG_CLEAR_PASSWORD | ARGON2_FLAG_CLEAR_SECRET;
}

// libargon2's allocation callbacks carry no context: the block a computation may use is lent
// to the calling thread for the duration of one computation (Argon2.swift, Argon2Memory.swift).
// The slot is a function-local static: it is emitted with the function that uses it.
typedef struct { uint8_t *block; size_t bytes; } cargon2_lent;

static inline cargon2_lent *cargon2_lent_slot(void) {
    static _Thread_local cargon2_lent slot;
    return &slot;
}

static inline void cargon2_lend(uint8_t *block, size_t bytes) {
    cargon2_lent_slot()->block = block;
    cargon2_lent_slot()->bytes = bytes;
}

// The lent block when it is large enough, else a fresh allocation (libargon2's own way).
static inline int cargon2_allocate(uint8_t **memory, size_t bytes) {
    cargon2_lent *lent = cargon2_lent_slot();
    *memory = (lent->block != NULL && bytes <= lent->bytes) ? lent->block : malloc(bytes);
    return *memory != NULL ? ARGON2_OK : ARGON2_MEMORY_ALLOCATION_ERROR;
}

// libargon2 has wiped `memory` already; the lent block goes back to its owner, not to free().
static inline void cargon2_free(uint8_t *memory, size_t bytes) {
    (void)bytes;
    if (memory != cargon2_lent_slot()->block) free(memory);
}
#endif
