#ifndef CARGON2_SHIM_H
#define CARGON2_SHIM_H
#include <argon2.h>

// ARGON2_FLAG_* are shifted-constant macros Swift does not import.
static inline uint32_t cargon2_flags_clear_inputs(void) {
    return ARGON2_FLAG_CLEAR_PASSWORD | ARGON2_FLAG_CLEAR_SECRET;
}
#endif
