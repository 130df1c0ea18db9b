/* Erlang terms -> JSON text, for configurations, call parameters and host
 * request answers. See lmcp_nif.h for the mapping. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmcp_nif.h"

#define MAX_DEPTH 512

static int grow(lmcp_buf *b, size_t extra) {
  if (b->len + extra <= b->cap) {
    return 1;
  }
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra) {
    cap *= 2;
  }
  char *p = realloc(b->data, cap);
  if (p == NULL) {
    return 0;
  }
  b->data = p;
  b->cap = cap;
  return 1;
}

static int put(lmcp_buf *b, const char *s, size_t n) {
  if (!grow(b, n)) {
    return 0;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  return 1;
}

void lmcp_buf_free(lmcp_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

static int valid_utf8(const unsigned char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t k;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      k = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      k = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      k = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return 0;
    }
    if (i + k > n || p[i + 1] < lo || p[i + 1] > hi) {
      return 0;
    }
    for (size_t j = 2; j < k; j++) {
      if ((p[i + j] & 0xC0) != 0x80) {
        return 0;
      }
    }
    i += k;
  }
  return 1;
}

/* put_string writes a JSON string literal of UTF-8 text. */
static int put_string(lmcp_buf *b, const unsigned char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  if (!grow(b, n + 2)) {
    return 0;
  }
  b->data[b->len++] = '"';
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = s[i];
    if (c >= 0x20 && c != '"' && c != '\\') {
      continue;
    }
    if (!put(b, (const char *)s + run, i - run)) {
      return 0;
    }
    run = i + 1;
    char esc[6] = {'\\', 0, 0, 0, 0, 0};
    size_t k = 2;
    switch (c) {
    case '"': esc[1] = '"'; break;
    case '\\': esc[1] = '\\'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    default:
      esc[1] = 'u';
      esc[2] = '0';
      esc[3] = '0';
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      k = 6;
    }
    if (!put(b, esc, k)) {
      return 0;
    }
  }
  return put(b, (const char *)s + run, n - run) && put(b, "\"", 1);
}

/* put_atom_string writes an atom's name (latin-1) as a JSON string. */
static int atom_text(ErlNifEnv *env, ERL_NIF_TERM t, unsigned char *out, size_t *n) {
  char name[256];
  int len = enif_get_atom(env, t, name, sizeof(name), ERL_NIF_LATIN1);
  if (len <= 0) {
    return 0;
  }
  size_t w = 0;
  for (int i = 0; i < len - 1; i++) { /* len counts the NUL */
    unsigned char c = (unsigned char)name[i];
    if (c < 0x80) {
      out[w++] = c;
    } else {
      out[w++] = (unsigned char)(0xC0 | (c >> 6));
      out[w++] = (unsigned char)(0x80 | (c & 0x3F));
    }
  }
  *n = w;
  return 1;
}

/* put_bignum writes an integer that does not fit 64 bits, read from its
 * external format (SMALL_BIG_EXT or LARGE_BIG_EXT). */
static int put_bignum(ErlNifEnv *env, ERL_NIF_TERM t, lmcp_buf *b, const char **err) {
  ErlNifBinary bin;
  if (!enif_term_to_binary(env, t, &bin)) {
    *err = "cannot encode an integer";
    return 0;
  }
  const unsigned char *p = bin.data;
  size_t n, off;
  if (bin.size >= 3 && p[1] == 110) {
    n = p[2];
    off = 3;
  } else if (bin.size >= 6 && p[1] == 111) {
    n = ((size_t)p[2] << 24) | ((size_t)p[3] << 16) | ((size_t)p[4] << 8) | p[5];
    off = 6;
  } else {
    enif_release_binary(&bin);
    *err = "cannot encode an integer";
    return 0;
  }
  int neg = p[off] != 0;
  const unsigned char *mag = p + off + 1;
  /* Repeated division by 10^9 of base-2^32 limbs. */
  size_t nl = (n + 3) / 4;
  uint32_t *limbs = calloc(nl ? nl : 1, sizeof(uint32_t));
  char *digits = malloc(n * 3 + 16);
  if (limbs == NULL || digits == NULL) {
    free(limbs);
    free(digits);
    enif_release_binary(&bin);
    *err = "out of memory";
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    limbs[i / 4] |= (uint32_t)mag[i] << (8 * (i % 4));
  }
  enif_release_binary(&bin);
  size_t nd = 0;
  while (nl > 0) {
    uint64_t rem = 0;
    for (size_t i = nl; i-- > 0;) {
      uint64_t cur = (rem << 32) | limbs[i];
      limbs[i] = (uint32_t)(cur / 1000000000u);
      rem = cur % 1000000000u;
    }
    while (nl > 0 && limbs[nl - 1] == 0) {
      nl--;
    }
    for (int k = 0; k < 9; k++) {
      digits[nd++] = (char)('0' + rem % 10);
      rem /= 10;
      if (nl == 0 && rem == 0) {
        break;
      }
    }
  }
  if (neg) {
    digits[nd++] = '-';
  }
  for (size_t i = 0; i < nd / 2; i++) {
    char c = digits[i];
    digits[i] = digits[nd - 1 - i];
    digits[nd - 1 - i] = c;
  }
  int ok = put(b, digits, nd);
  free(limbs);
  free(digits);
  if (!ok) {
    *err = "out of memory";
  }
  return ok;
}

static int put_double(lmcp_buf *b, double v) {
  char s[40];
  int n = 0;
  /* The shortest of %.15g .. %.17g that reads back as the same double. */
  for (int prec = 15; prec <= 17; prec++) {
    n = snprintf(s, sizeof(s) - 3, "%.*g", prec, v);
    if (strtod(s, NULL) == v) {
      break;
    }
  }
  if (strchr(s, '.') == NULL && strchr(s, 'e') == NULL) {
    s[n++] = '.'; /* keep it a float for the reader: 1.0, not 1 */
    s[n++] = '0';
    s[n] = 0;
  }
  return put(b, s, (size_t)n);
}

static int over(lmcp_buf *b) {
  if (b->limit && b->len > b->limit) {
    b->over = 1;
    return 1;
  }
  return 0;
}

static int enc(ErlNifEnv *env, ERL_NIF_TERM t, lmcp_buf *b, int depth, const char **err);

static int enc_key(ErlNifEnv *env, ERL_NIF_TERM k, lmcp_buf *b, const char **err) {
  ErlNifBinary bin;
  if (enif_inspect_binary(env, k, &bin)) {
    if (!valid_utf8(bin.data, bin.size)) {
      *err = "a map key is not valid UTF-8";
      return 0;
    }
    return put_string(b, bin.data, bin.size);
  }
  if (enif_is_atom(env, k)) {
    unsigned char text[512];
    size_t n;
    if (!atom_text(env, k, text, &n)) {
      *err = "cannot encode an atom key";
      return 0;
    }
    return put_string(b, text, n);
  }
  ErlNifSInt64 i;
  if (enif_get_int64(env, k, &i)) {
    char s[32];
    int n = snprintf(s, sizeof(s), "\"%lld\"", (long long)i);
    return put(b, s, (size_t)n);
  }
  *err = "map keys must be strings, atoms or integers";
  return 0;
}

static int enc(ErlNifEnv *env, ERL_NIF_TERM t, lmcp_buf *b, int depth, const char **err) {
  if (depth > MAX_DEPTH) {
    *err = "nested too deeply";
    return 0;
  }
  if (over(b)) {
    return 0;
  }
  switch (enif_term_type(env, t)) {
  case ERL_NIF_TERM_TYPE_BITSTRING: {
    ErlNifBinary bin;
    if (!enif_inspect_binary(env, t, &bin)) {
      *err = "cannot encode a bitstring";
      return 0;
    }
    if (!valid_utf8(bin.data, bin.size)) {
      *err = "a binary is not valid UTF-8";
      return 0;
    }
    return put_string(b, bin.data, bin.size);
  }
  case ERL_NIF_TERM_TYPE_ATOM: {
    if (enif_is_identical(t, lmcp_atom_nil)) {
      return put(b, "null", 4);
    }
    if (enif_is_identical(t, lmcp_atom_true)) {
      return put(b, "true", 4);
    }
    if (enif_is_identical(t, lmcp_atom_false)) {
      return put(b, "false", 5);
    }
    unsigned char text[512];
    size_t n;
    if (!atom_text(env, t, text, &n)) {
      *err = "cannot encode an atom";
      return 0;
    }
    return put_string(b, text, n);
  }
  case ERL_NIF_TERM_TYPE_INTEGER: {
    ErlNifSInt64 i;
    ErlNifUInt64 u;
    char s[32];
    int n;
    if (enif_get_int64(env, t, &i)) {
      n = snprintf(s, sizeof(s), "%lld", (long long)i);
    } else if (enif_get_uint64(env, t, &u)) {
      n = snprintf(s, sizeof(s), "%llu", (unsigned long long)u);
    } else {
      return put_bignum(env, t, b, err);
    }
    return put(b, s, (size_t)n);
  }
  case ERL_NIF_TERM_TYPE_FLOAT: {
    double v;
    enif_get_double(env, t, &v);
    return put_double(b, v);
  }
  case ERL_NIF_TERM_TYPE_MAP: {
    ERL_NIF_TERM sv;
    if (enif_get_map_value(env, t, lmcp_atom_struct, &sv)) {
      *err = "cannot encode a struct (convert it to a plain map)";
      return 0;
    }
    if (!put(b, "{", 1)) {
      goto oom;
    }
    ErlNifMapIterator it;
    if (!enif_map_iterator_create(env, t, &it, ERL_NIF_MAP_ITERATOR_FIRST)) {
      *err = "cannot iterate a map";
      return 0;
    }
    ERL_NIF_TERM k, v;
    int first = 1, ok = 1;
    while (enif_map_iterator_get_pair(env, &it, &k, &v)) {
      if ((!first && !put(b, ",", 1)) || !enc_key(env, k, b, err) || !put(b, ":", 1) ||
          !enc(env, v, b, depth + 1, err)) {
        ok = 0;
        break;
      }
      first = 0;
      enif_map_iterator_next(env, &it);
    }
    enif_map_iterator_destroy(env, &it);
    if (!ok) {
      if (*err == NULL && !b->over) {
        goto oom;
      }
      return 0;
    }
    return put(b, "}", 1) || (*err = "out of memory", 0);
  }
  case ERL_NIF_TERM_TYPE_LIST: {
    if (!put(b, "[", 1)) {
      goto oom;
    }
    ERL_NIF_TERM head, tail = t;
    int first = 1;
    while (enif_get_list_cell(env, tail, &head, &tail)) {
      if ((!first && !put(b, ",", 1))) {
        goto oom;
      }
      if (!enc(env, head, b, depth + 1, err)) {
        return 0;
      }
      first = 0;
    }
    if (!enif_is_empty_list(env, tail)) {
      *err = "cannot encode an improper list";
      return 0;
    }
    return put(b, "]", 1) || (*err = "out of memory", 0);
  }
  case ERL_NIF_TERM_TYPE_TUPLE:
    *err = "cannot encode a tuple (JSON has no tuples; use a list or a map)";
    return 0;
  default: *err = "cannot encode a pid, port, reference or function"; return 0;
  }
oom:
  *err = "out of memory";
  return 0;
}

int lmcp_term_to_json(ErlNifEnv *env, ERL_NIF_TERM term, lmcp_buf *buf, const char **err) {
  *err = NULL;
  int ok = enc(env, term, buf, 0, err);
  if (!ok && buf->over) {
    *err = "too large for a normal scheduler";
  }
  return ok && !buf->over;
}
