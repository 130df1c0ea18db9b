/* JSON text -> Erlang terms, iteratively (no recursion: nesting depth costs
 * heap, never C stack, so it is safe on the library's threads). The mapping
 * is documented in lmcp_nif.h. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lmcp_nif.h"

typedef struct {
  size_t base; /* index in vals where this container's items start */
  int is_obj;
} frame;

typedef struct {
  ErlNifEnv *env;
  const unsigned char *s;
  size_t n, pos;
  ERL_NIF_TERM *vals;
  size_t nvals, capvals;
  frame *frames;
  size_t nframes, capframes;
  unsigned char *scratch; /* unescaped strings; as long as the input */
  ERL_NIF_TERM *tmp;      /* keys then values of the object being built */
  size_t captmp;
  const char *err;
} jd;

/* plain[c]: an ASCII byte a string holds as is. */
static unsigned char plain[256];
static int plain_ready;

static void init_plain(void) {
  for (int c = 0x20; c < 0x80; c++) {
    plain[c] = (c != '"' && c != '\\');
  }
  plain_ready = 1;
}

static int fail(jd *d, const char *msg) {
  if (d->err == NULL) {
    d->err = msg;
  }
  return 0;
}

static void skip_ws(jd *d) {
  while (d->pos < d->n) {
    unsigned char c = d->s[d->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      return;
    }
    d->pos++;
  }
}

static int push(jd *d, ERL_NIF_TERM t) {
  if (d->nvals == d->capvals) {
    size_t cap = d->capvals ? d->capvals * 2 : 64;
    ERL_NIF_TERM *v = realloc(d->vals, cap * sizeof(*v));
    if (v == NULL) {
      return fail(d, "out of memory");
    }
    d->vals = v;
    d->capvals = cap;
  }
  d->vals[d->nvals++] = t;
  return 1;
}

static int open_frame(jd *d, int is_obj) {
  if (d->nframes == d->capframes) {
    size_t cap = d->capframes ? d->capframes * 2 : 16;
    frame *f = realloc(d->frames, cap * sizeof(*f));
    if (f == NULL) {
      return fail(d, "out of memory");
    }
    d->frames = f;
    d->capframes = cap;
  }
  d->frames[d->nframes].base = d->nvals;
  d->frames[d->nframes].is_obj = is_obj;
  d->nframes++;
  return 1;
}

/* utf8_len returns the length of the valid UTF-8 sequence at p (avail bytes
 * left), or 0: no overlong forms, no surrogates, nothing past U+10FFFF. */
static size_t utf8_len(const unsigned char *p, size_t avail) {
  unsigned char c = p[0];
  if (c < 0x80) {
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF) {
    return (avail >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    if (avail < 3 || (p[2] & 0xC0) != 0x80) {
      return 0;
    }
    unsigned char lo = 0x80, hi = 0xBF;
    if (c == 0xE0) {
      lo = 0xA0;
    } else if (c == 0xED) {
      hi = 0x9F;
    }
    return (p[1] >= lo && p[1] <= hi) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (avail < 4 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) {
      return 0;
    }
    unsigned char lo = 0x80, hi = 0xBF;
    if (c == 0xF0) {
      lo = 0x90;
    } else if (c == 0xF4) {
      hi = 0x8F;
    }
    return (p[1] >= lo && p[1] <= hi) ? 4 : 0;
  }
  return 0;
}

static int hex4(const unsigned char *p, uint32_t *out) {
  uint32_t r = 0;
  for (int i = 0; i < 4; i++) {
    unsigned char c = p[i];
    r <<= 4;
    if (c >= '0' && c <= '9') {
      r |= (uint32_t)(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      r |= (uint32_t)(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      r |= (uint32_t)(c - 'A' + 10);
    } else {
      return 0;
    }
  }
  *out = r;
  return 1;
}

static size_t put_utf8(unsigned char *o, uint32_t r) {
  if (r < 0x80) {
    o[0] = (unsigned char)r;
    return 1;
  }
  if (r < 0x800) {
    o[0] = (unsigned char)(0xC0 | (r >> 6));
    o[1] = (unsigned char)(0x80 | (r & 0x3F));
    return 2;
  }
  if (r < 0x10000) {
    o[0] = (unsigned char)(0xE0 | (r >> 12));
    o[1] = (unsigned char)(0x80 | ((r >> 6) & 0x3F));
    o[2] = (unsigned char)(0x80 | (r & 0x3F));
    return 3;
  }
  o[0] = (unsigned char)(0xF0 | (r >> 18));
  o[1] = (unsigned char)(0x80 | ((r >> 12) & 0x3F));
  o[2] = (unsigned char)(0x80 | ((r >> 6) & 0x3F));
  o[3] = (unsigned char)(0x80 | (r & 0x3F));
  return 4;
}

static ERL_NIF_TERM make_binary(ErlNifEnv *env, const unsigned char *p, size_t len) {
  ERL_NIF_TERM t;
  unsigned char *dst = enif_make_new_binary(env, len, &t);
  if (len > 0) {
    memcpy(dst, p, len);
  }
  return t;
}

/* parse_string reads the string at d->pos (its opening quote) into *out. */
static int parse_string(jd *d, ERL_NIF_TERM *out) {
  const unsigned char *s = d->s;
  size_t i = d->pos + 1, start = i;
  /* Fast path: no escapes. */
  for (;;) {
    while (i < d->n && plain[s[i]]) {
      i++;
    }
    if (i >= d->n) {
      return fail(d, "unterminated string");
    }
    unsigned char c = s[i];
    if (c == '"') {
      *out = make_binary(d->env, s + start, i - start);
      d->pos = i + 1;
      return 1;
    }
    if (c == '\\') {
      break;
    }
    if (c < 0x20) {
      d->pos = i;
      return fail(d, "control character in a string");
    }
    size_t k = utf8_len(s + i, d->n - i);
    if (k == 0) {
      d->pos = i;
      return fail(d, "invalid UTF-8 in a string");
    }
    i += k;
  }
  /* Slow path: unescape into scratch. */
  if (d->scratch == NULL) {
    d->scratch = malloc(d->n + 1);
    if (d->scratch == NULL) {
      return fail(d, "out of memory");
    }
  }
  unsigned char *o = d->scratch;
  size_t w = i - start;
  memcpy(o, s + start, w);
  for (;;) {
    if (i >= d->n) {
      return fail(d, "unterminated string");
    }
    unsigned char c = s[i];
    if (c == '"') {
      *out = make_binary(d->env, o, w);
      d->pos = i + 1;
      return 1;
    }
    if (c < 0x20) {
      d->pos = i;
      return fail(d, "control character in a string");
    }
    if (c != '\\') {
      size_t k = (c < 0x80) ? 1 : utf8_len(s + i, d->n - i);
      if (k == 0) {
        d->pos = i;
        return fail(d, "invalid UTF-8 in a string");
      }
      memcpy(o + w, s + i, k);
      w += k;
      i += k;
      continue;
    }
    if (i + 1 >= d->n) {
      d->pos = i;
      return fail(d, "unterminated escape");
    }
    unsigned char e = s[i + 1];
    i += 2;
    switch (e) {
    case '"':
    case '\\':
    case '/': o[w++] = e; break;
    case 'b': o[w++] = '\b'; break;
    case 'f': o[w++] = '\f'; break;
    case 'n': o[w++] = '\n'; break;
    case 'r': o[w++] = '\r'; break;
    case 't': o[w++] = '\t'; break;
    case 'u': {
      uint32_t r;
      if (i + 4 > d->n || !hex4(s + i, &r)) {
        d->pos = i;
        return fail(d, "invalid \\u escape");
      }
      i += 4;
      if (r >= 0xD800 && r <= 0xDFFF) {
        /* A high surrogate and a low one make one character; a lone one is
         * U+FFFD (and an escape after it stands on its own). */
        uint32_t r2;
        if (r < 0xDC00 && i + 6 <= d->n && s[i] == '\\' && s[i + 1] == 'u') {
          if (!hex4(s + i + 2, &r2)) {
            d->pos = i + 2;
            return fail(d, "invalid \\u escape");
          }
          if (r2 >= 0xDC00 && r2 <= 0xDFFF) {
            r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
            i += 6;
          } else {
            r = 0xFFFD;
          }
        } else if (r < 0xDC00 && i + 1 < d->n && s[i] == '\\' && s[i + 1] == 'u') {
          d->pos = i + 2; /* \u with fewer than four characters left */
          return fail(d, "invalid \\u escape");
        } else {
          r = 0xFFFD;
        }
      }
      w += put_utf8(o + w, r);
      break;
    }
    default: d->pos = i - 2; return fail(d, "invalid escape");
    }
  }
}

/* make_bigint converts the digits (no sign) of an integer literal. */
static int make_bigint(jd *d, const unsigned char *digits, size_t nd, int neg, ERL_NIF_TERM *out) {
  /* Base 2^32 limbs, least significant first: limbs = limbs * 10^k + chunk. */
  size_t cap = nd / 9 + 2;
  uint32_t *limbs = calloc(cap, sizeof(uint32_t));
  if (limbs == NULL) {
    return fail(d, "out of memory");
  }
  size_t nl = 0;
  size_t i = 0;
  while (i < nd) {
    size_t k = nd - i < 9 ? nd - i : 9;
    uint32_t chunk = 0, mul = 1;
    for (size_t j = 0; j < k; j++) {
      chunk = chunk * 10 + (uint32_t)(digits[i + j] - '0');
      mul *= 10;
    }
    i += k;
    uint64_t carry = chunk;
    for (size_t j = 0; j < nl; j++) {
      uint64_t v = (uint64_t)limbs[j] * mul + carry;
      limbs[j] = (uint32_t)v;
      carry = v >> 32;
    }
    if (carry) {
      limbs[nl++] = (uint32_t)carry;
    }
  }
  size_t nbytes = nl * 4;
  while (nbytes > 0 && ((limbs[(nbytes - 1) / 4] >> (8 * ((nbytes - 1) % 4))) & 0xFF) == 0) {
    nbytes--;
  }
  if (nbytes <= 8) {
    uint64_t u = (nl > 0 ? limbs[0] : 0) | ((uint64_t)(nl > 1 ? limbs[1] : 0) << 32);
    free(limbs);
    if (!neg) {
      *out = enif_make_uint64(d->env, u);
      return 1;
    }
    if (u <= (uint64_t)1 << 63) {
      *out = enif_make_int64(d->env, (int64_t)(0 - u));
      return 1;
    }
    /* -(2^63+1) .. -(2^64-1): fall through to the bignum encoding. */
    limbs = calloc(2, sizeof(uint32_t));
    if (limbs == NULL) {
      return fail(d, "out of memory");
    }
    limbs[0] = (uint32_t)u;
    limbs[1] = (uint32_t)(u >> 32);
  }
  /* SMALL_BIG_EXT / LARGE_BIG_EXT, decoded by the runtime. */
  unsigned char *etf = malloc(nbytes + 8);
  if (etf == NULL) {
    free(limbs);
    return fail(d, "out of memory");
  }
  size_t o = 0;
  etf[o++] = 131;
  if (nbytes <= 255) {
    etf[o++] = 110;
    etf[o++] = (unsigned char)nbytes;
  } else {
    etf[o++] = 111;
    etf[o++] = (unsigned char)(nbytes >> 24);
    etf[o++] = (unsigned char)(nbytes >> 16);
    etf[o++] = (unsigned char)(nbytes >> 8);
    etf[o++] = (unsigned char)nbytes;
  }
  etf[o++] = neg ? 1 : 0;
  for (size_t b = 0; b < nbytes; b++) {
    etf[o++] = (unsigned char)(limbs[b / 4] >> (8 * (b % 4)));
  }
  free(limbs);
  size_t used = enif_binary_to_term(d->env, etf, o, out, 0);
  free(etf);
  return used == o ? 1 : fail(d, "cannot build a big integer");
}

static int parse_number(jd *d, ERL_NIF_TERM *out) {
  const unsigned char *s = d->s;
  size_t start = d->pos, i = d->pos;
  int neg = 0, is_int = 1;
  if (s[i] == '-') {
    neg = 1;
    i++;
  }
  size_t digits = i;
  if (i < d->n && s[i] == '0') {
    i++;
  } else if (i < d->n && s[i] >= '1' && s[i] <= '9') {
    while (i < d->n && s[i] >= '0' && s[i] <= '9') {
      i++;
    }
  } else {
    d->pos = i;
    return fail(d, "invalid number");
  }
  size_t nd = i - digits;
  if (i < d->n && s[i] == '.') {
    is_int = 0;
    i++;
    size_t f = i;
    while (i < d->n && s[i] >= '0' && s[i] <= '9') {
      i++;
    }
    if (i == f) {
      d->pos = i;
      return fail(d, "invalid number: digits expected after '.'");
    }
  }
  if (i < d->n && (s[i] == 'e' || s[i] == 'E')) {
    is_int = 0;
    i++;
    if (i < d->n && (s[i] == '+' || s[i] == '-')) {
      i++;
    }
    size_t x = i;
    while (i < d->n && s[i] >= '0' && s[i] <= '9') {
      i++;
    }
    if (i == x) {
      d->pos = i;
      return fail(d, "invalid number: digits expected in the exponent");
    }
  }
  d->pos = i;
  size_t len = i - start;
  if (is_int) {
    if (nd <= 18) {
      int64_t v = 0;
      for (size_t j = digits; j < i; j++) {
        v = v * 10 + (s[j] - '0');
      }
      *out = enif_make_int64(d->env, neg ? -v : v);
      return 1;
    }
    if (nd > LMCP_MAX_INTEGER_DIGITS) {
      *out = make_binary(d->env, s + start, len);
      return 1;
    }
    return make_bigint(d, s + digits, nd, neg, out);
  }
  char local[64];
  char *text = len < sizeof(local) ? local : malloc(len + 1);
  if (text == NULL) {
    return fail(d, "out of memory");
  }
  memcpy(text, s + start, len);
  text[len] = 0;
  errno = 0;
  double v = strtod(text, NULL);
  int overflow = (errno == ERANGE && isinf(v));
  if (text != local) {
    free(text);
  }
  if (overflow || !isfinite(v)) {
    *out = make_binary(d->env, s + start, len); /* beyond the largest double */
    return 1;
  }
  *out = enif_make_double(d->env, v);
  return 1;
}

static int parse_literal(jd *d, const char *word, ERL_NIF_TERM atom, ERL_NIF_TERM *out) {
  size_t k = strlen(word);
  if (d->n - d->pos < k || memcmp(d->s + d->pos, word, k) != 0) {
    return fail(d, "invalid literal");
  }
  d->pos += k;
  *out = atom;
  return 1;
}

/* parse_scalar reads a string, number or literal. */
static int parse_scalar(jd *d, ERL_NIF_TERM *out) {
  if (d->pos >= d->n) {
    return fail(d, "unexpected end of input");
  }
  unsigned char c = d->s[d->pos];
  switch (c) {
  case '"': return parse_string(d, out);
  case 't': return parse_literal(d, "true", lmcp_atom_true, out);
  case 'f': return parse_literal(d, "false", lmcp_atom_false, out);
  case 'n': return parse_literal(d, "null", lmcp_atom_nil, out);
  default:
    if (c == '-' || (c >= '0' && c <= '9')) {
      return parse_number(d, out);
    }
    return fail(d, "unexpected character");
  }
}

static int close_object(jd *d) {
  frame f = d->frames[--d->nframes];
  size_t n = (d->nvals - f.base) / 2;
  if (d->captmp < 2 * n) {
    ERL_NIF_TERM *t = realloc(d->tmp, 2 * n * sizeof(*t));
    if (t == NULL) {
      return fail(d, "out of memory");
    }
    d->tmp = t;
    d->captmp = 2 * n;
  }
  ERL_NIF_TERM *keys = d->tmp, *values = d->tmp + n;
  for (size_t j = 0; j < n; j++) {
    keys[j] = d->vals[f.base + 2 * j];
    values[j] = d->vals[f.base + 2 * j + 1];
  }
  ERL_NIF_TERM m;
  if (!enif_make_map_from_arrays(d->env, keys, values, n, &m)) {
    /* A repeated key: put them one by one, so the last one wins. */
    m = enif_make_new_map(d->env);
    for (size_t j = 0; j < n; j++) {
      enif_make_map_put(d->env, m, keys[j], values[j], &m);
    }
  }
  d->nvals = f.base;
  return push(d, m);
}

static int close_array(jd *d) {
  frame f = d->frames[--d->nframes];
  ERL_NIF_TERM l = enif_make_list_from_array(d->env, d->vals + f.base, (unsigned)(d->nvals - f.base));
  d->nvals = f.base;
  return push(d, l);
}

/* parse_key reads `"key" :` inside an object. */
static int parse_key(jd *d) {
  skip_ws(d);
  if (d->pos >= d->n || d->s[d->pos] != '"') {
    return fail(d, "expected a string key in an object");
  }
  ERL_NIF_TERM k;
  if (!parse_string(d, &k) || !push(d, k)) {
    return 0;
  }
  skip_ws(d);
  if (d->pos >= d->n || d->s[d->pos] != ':') {
    return fail(d, "expected ':' after an object key");
  }
  d->pos++;
  return 1;
}

static int run(jd *d) {
  for (;;) {
    /* A value is expected. */
    skip_ws(d);
    if (d->pos >= d->n) {
      return fail(d, "unexpected end of input");
    }
    unsigned char c = d->s[d->pos];
    if (c == '{' || c == '[') {
      d->pos++;
      skip_ws(d);
      if (d->pos < d->n && d->s[d->pos] == (c == '{' ? '}' : ']')) {
        d->pos++;
        if (!push(d, c == '{' ? enif_make_new_map(d->env) : enif_make_list(d->env, 0))) {
          return 0;
        }
      } else {
        if (!open_frame(d, c == '{')) {
          return 0;
        }
        if (c == '{' && !parse_key(d)) {
          return 0;
        }
        continue;
      }
    } else {
      ERL_NIF_TERM t;
      if (!parse_scalar(d, &t) || !push(d, t)) {
        return 0;
      }
    }
    /* A value was pushed: close containers as far as they end here. */
    for (;;) {
      if (d->nframes == 0) {
        return 1;
      }
      skip_ws(d);
      if (d->pos >= d->n) {
        return fail(d, "unexpected end of input");
      }
      c = d->s[d->pos];
      int is_obj = d->frames[d->nframes - 1].is_obj;
      if (c == ',') {
        d->pos++;
        if (is_obj && !parse_key(d)) {
          return 0;
        }
        break; /* the next value */
      }
      if (c == (is_obj ? '}' : ']')) {
        d->pos++;
        if (!(is_obj ? close_object(d) : close_array(d))) {
          return 0;
        }
        continue;
      }
      return fail(d, is_obj ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array");
    }
  }
}

int lmcp_json_to_term(ErlNifEnv *env, const char *json, size_t len, ERL_NIF_TERM *out, const char **err,
                      size_t *err_offset) {
  if (!plain_ready) {
    init_plain(); /* idempotent; load() runs it first */
  }
  jd d;
  memset(&d, 0, sizeof(d));
  d.env = env;
  d.s = (const unsigned char *)json;
  d.n = len;
  int ok = run(&d);
  if (ok) {
    skip_ws(&d);
    if (d.pos != d.n) {
      ok = fail(&d, "unexpected data after the value");
    }
  }
  if (ok) {
    *out = d.vals[0];
  } else {
    *err = d.err ? d.err : "invalid JSON";
    *err_offset = d.pos;
  }
  free(d.vals);
  free(d.frames);
  free(d.scratch);
  free(d.tmp);
  return ok;
}

LMCP_HIDDEN void lmcp_json_init(void);
void lmcp_json_init(void) {
  init_plain();
}
