#ifndef TYPINGD_CJANSSON_SHIM_H
#define TYPINGD_CJANSSON_SHIM_H

// jansson's public header. Swift imports its functions and its static inline
// functions (json_decref, json_error_code) directly; the function-like macros
// below are not importable, so each gets a static inline twin with a `cj_` prefix.
#include <jansson.h>

/// The type of a JSON value (`json_typeof`). `value` must not be NULL.
static inline json_type cj_typeof(const json_t *value) { return json_typeof(value); }

/// True when `value` is a non-NULL object (`json_is_object`).
static inline int cj_is_object(const json_t *value) { return json_is_object(value); }

/// True when `value` is a non-NULL string (`json_is_string`).
static inline int cj_is_string(const json_t *value) { return json_is_string(value); }

/// True when `value` is a non-NULL integer (`json_is_integer`).
static inline int cj_is_integer(const json_t *value) { return json_is_integer(value); }

/// True when `value` is `true` or `false` (`json_is_boolean`).
static inline int cj_is_boolean(const json_t *value) { return json_is_boolean(value); }

/// True when `value` is `true` (`json_is_true`).
static inline int cj_is_true(const json_t *value) { return json_is_true(value); }

/// The flags typingd decodes every line with: duplicate keys are errors at any
/// depth, and any JSON value (not only arrays and objects) is accepted, so that
/// a scalar line can be told apart as `not_object`.
static inline size_t cj_decode_flags(void) { return JSON_REJECT_DUPLICATES | JSON_DECODE_ANY; }

#endif
