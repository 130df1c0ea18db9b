/* Shared declarations of the LemonMCP NIF shim: the JSON <-> term
 * converters (json_term.c, term_json.c) used by lmcp_nif.c. */
#ifndef LMCP_NIF_H
#define LMCP_NIF_H

#include <stddef.h>
#include <erl_nif.h>

#define LMCP_HIDDEN __attribute__((visibility("hidden")))

/* Integer literals longer than this become a binary of their text
 * (converting huge decimals is quadratic). */
#define LMCP_MAX_INTEGER_DIGITS 1024

/* The atoms the converters use, made once in load(). */
LMCP_HIDDEN extern ERL_NIF_TERM lmcp_atom_true, lmcp_atom_false, lmcp_atom_nil,
    lmcp_atom_struct;

/* json_to_term converts one JSON value (len bytes; white space around it
 * allowed) into a term in env: objects are
 * maps with binary keys (the last of a repeated key wins), arrays lists,
 * strings binaries, integers integers of any size (bignums beyond 64 bits),
 * other numbers floats, true/false atoms, null nil. A number beyond the
 * range of a double, or an integer longer than LMCP_MAX_INTEGER_DIGITS
 * digits, becomes a binary of its text. Invalid UTF-8 and invalid JSON are
 * errors. It works with any environment, on any thread (it is called from
 * library threads with a process-independent env). Returns 1 and *out, or 0
 * and a static message in *err with the byte offset in *err_offset. */
LMCP_HIDDEN int lmcp_json_to_term(ErlNifEnv *env, const char *json, size_t len,
                                  ERL_NIF_TERM *out, const char **err,
                                  size_t *err_offset);

/* A growable output buffer (malloc'd). */
typedef struct {
  char *data;
  size_t len, cap;
  size_t limit; /* stop when len passes this (0: no limit) */
  int over;     /* set when limit was passed */
} lmcp_buf;

/* term_to_json appends the JSON text of term to buf. Maps (binary, atom or
 * integer keys) become objects, proper lists arrays, binaries strings (they
 * must be UTF-8), integers and floats numbers, nil null, true/false
 * themselves, other atoms strings. Tuples, pids, references, functions,
 * structs and improper lists are errors. Returns 1, or 0 with a message
 * in *err (static text); buf->over is set (and 0 returned) when the output
 * passed buf->limit. */
LMCP_HIDDEN int lmcp_term_to_json(ErlNifEnv *env, ERL_NIF_TERM term,
                                  lmcp_buf *buf, const char **err);

LMCP_HIDDEN void lmcp_buf_free(lmcp_buf *buf);

#endif
