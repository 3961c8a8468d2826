/*
 * azd_provider.h: helpers for azd provisioning providers written in C.
 *
 * Header-only; include it after generating the bindings of the WIT world:
 *
 *   wit-bindgen c wit --world provisioning-provider --out-dir gen
 *   python -m ziglang cc -target wasm32-wasi -mexec-model=reactor -O2 -s \
 *       -I gen -I guest-sdk/c provider.c gen/provisioning_provider.c \
 *       gen/provisioning_provider_component_type.o -o core.wasm
 *   wasm-tools component new core.wasm -o provider.wasm
 *
 * (scripts/build-examples.sh does that with pinned tools; clang-14 with
 * `--target=wasm32-wasi --sysroot=/usr` from Debian's wasi-libc works the same way.)
 *
 * Ownership, as wit-bindgen's C bindings define it: everything a provider function
 * returns (strings, lists, errors) is freed by the generated code with free() after the
 * host has read it, so it must be heap memory. The helpers below always copy. Arguments
 * passed to a provider function are owned by it; free them with the generated *_free.
 *
 * What it gives:
 *   azd_report / azd_log                 printf-style progress and log lines
 *   azd_local_error / azd_service_error  fill the error out-parameter, return false
 *   azd_outputs_*                        build a sorted output list (string/number/bool/json)
 *   azd_changes_push, azd_strings_push   grow preview-change and string lists
 *   azd_json_get_string                  read one top-level string of the config JSON
 *   azd_env_get / azd_env_set            azd environment values (world 0.2.0; needs
 *                                        [policy.azd] environment = "read" / "read-write")
 *   azd_confirm                          a yes/no question on azd's terminal (needs
 *                                        [policy.azd] prompt = true)
 */
#ifndef AZD_PROVIDER_H
#define AZD_PROVIDER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provisioning_provider.h"

typedef provisioning_provider_string_t azd_string_t;
typedef azd_provisioning_0_1_0_types_error_t azd_error_t;
typedef azd_provisioning_0_1_0_types_list_tuple2_string_output_parameter_t azd_outputs_t;
typedef azd_provisioning_0_1_0_types_list_preview_change_t azd_changes_t;
typedef provisioning_provider_list_string_t azd_strings_t;

/* Memory exhaustion inside a guest is a fault, not an input error: trap. */
static inline void *azd_alloc(size_t size) {
  void *p = malloc(size == 0 ? 1 : size);
  if (p == NULL) abort();
  return p;
}

static inline void *azd_grow(void *ptr, size_t count, size_t size) {
  void *p = realloc(ptr, (count == 0 ? 1 : count) * size);
  if (p == NULL) abort();
  return p;
}

/* A heap copy of `len` bytes as a WIT string. */
static inline azd_string_t azd_strn(const char *s, size_t len) {
  azd_string_t out;
  out.ptr = (uint8_t *)azd_alloc(len);
  if (len > 0) memcpy(out.ptr, s, len);
  out.len = len;
  return out;
}

/* A heap copy of a NUL-terminated string. */
static inline azd_string_t azd_str(const char *s) { return azd_strn(s, strlen(s)); }

/* A heap copy of printf-style text. */
static inline azd_string_t azd_vformat(const char *fmt, va_list args) {
  va_list again;
  va_copy(again, args);
  int n = vsnprintf(NULL, 0, fmt, args);
  if (n < 0) n = 0;
  char *buf = (char *)azd_alloc((size_t)n + 1);
  vsnprintf(buf, (size_t)n + 1, fmt, again);
  va_end(again);
  azd_string_t out = {(uint8_t *)buf, (size_t)n};
  return out;
}

static inline azd_string_t azd_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline azd_string_t azd_format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  azd_string_t out = azd_vformat(fmt, args);
  va_end(args);
  return out;
}

/* A NUL-terminated heap copy of a WIT string (for C string functions). */
static inline char *azd_cstr(const azd_string_t *s) {
  char *out = (char *)azd_alloc(s->len + 1);
  if (s->len > 0) memcpy(out, s->ptr, s->len);
  out[s->len] = '\0';
  return out;
}

/* A NUL-terminated heap copy of a C string. */
static inline char *azd_strdup(const char *s) {
  size_t n = strlen(s);
  char *out = (char *)azd_alloc(n + 1);
  memcpy(out, s, n + 1);
  return out;
}

/* Shows a progress step on azd's spinner (during deploy, preview and destroy). */
static inline void azd_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void azd_report(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  azd_string_t msg = azd_vformat(fmt, args);
  va_end(args);
  azd_provisioning_0_1_0_progress_report(&msg);
  provisioning_provider_string_free(&msg);
}

/* Writes a line to the host's debug log; `level` is AZD_PROVISIONING_0_1_0_LOG_LEVEL_*. */
static inline void azd_log(azd_provisioning_0_1_0_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void azd_log(azd_provisioning_0_1_0_log_level_t level, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  azd_string_t msg = azd_vformat(fmt, args);
  va_end(args);
  azd_provisioning_0_1_0_log_write(level, &msg);
  provisioning_provider_string_free(&msg);
}

/*
 * Fills `err` with a local error and returns false, so a provider function can
 * `return azd_local_error(err, "invalid_config", "validation", "Add ...", "bad %s", x);`.
 * `code` is lower snake_case; `category` one of validation, auth, dependency,
 * compatibility, user, internal, local.
 */
static inline bool azd_local_error(azd_error_t *err, const char *code, const char *category,
                                   const char *suggestion, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static inline bool azd_local_error(azd_error_t *err, const char *code, const char *category,
                                   const char *suggestion, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  err->message = azd_vformat(fmt, args);
  va_end(args);
  err->origin = AZD_PROVISIONING_0_1_0_TYPES_ERROR_ORIGIN_LOCAL;
  err->suggestion = azd_str(suggestion);
  err->links.ptr = NULL;
  err->links.len = 0;
  err->detail.is_some = true;
  err->detail.val.tag = AZD_PROVISIONING_0_1_0_TYPES_ERROR_DETAIL_LOCAL;
  err->detail.val.val.local.code = azd_str(code);
  err->detail.val.val.local.category = azd_str(category);
  return false;
}

/* Fills `err` with an error a remote service reported and returns false. */
static inline bool azd_service_error(azd_error_t *err, const char *error_code, int32_t status_code,
                                     const char *service_name, const char *suggestion,
                                     const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static inline bool azd_service_error(azd_error_t *err, const char *error_code, int32_t status_code,
                                     const char *service_name, const char *suggestion,
                                     const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  err->message = azd_vformat(fmt, args);
  va_end(args);
  err->origin = AZD_PROVISIONING_0_1_0_TYPES_ERROR_ORIGIN_SERVICE;
  err->suggestion = azd_str(suggestion);
  err->links.ptr = NULL;
  err->links.len = 0;
  err->detail.is_some = true;
  err->detail.val.tag = AZD_PROVISIONING_0_1_0_TYPES_ERROR_DETAIL_SERVICE;
  err->detail.val.val.service.error_code = azd_str(error_code);
  err->detail.val.val.service.status_code = status_code;
  err->detail.val.val.service.service_name = azd_str(service_name);
  return false;
}

/* ---- outputs ------------------------------------------------------------------------ */

static inline void azd_outputs_init(azd_outputs_t *list) {
  list->ptr = NULL;
  list->len = 0;
}

/* Adds an output whose `type` is string, number, bool, object or array (JSON text). */
static inline void azd_outputs_push(azd_outputs_t *list, const char *name, const char *type,
                                    azd_string_t value) {
  list->ptr = (azd_provisioning_0_1_0_types_tuple2_string_output_parameter_t *)azd_grow(
      list->ptr, list->len + 1, sizeof(*list->ptr));
  azd_provisioning_0_1_0_types_tuple2_string_output_parameter_t *slot = &list->ptr[list->len++];
  slot->f0 = azd_str(name);
  slot->f1.type = azd_str(type);
  slot->f1.value = value;
}

static inline void azd_output_string(azd_outputs_t *list, const char *name, const char *value) {
  azd_outputs_push(list, name, "string", azd_str(value));
}

static inline void azd_output_number(azd_outputs_t *list, const char *name, long long value) {
  azd_outputs_push(list, name, "number", azd_format("%lld", value));
}

static inline void azd_output_bool(azd_outputs_t *list, const char *name, bool value) {
  azd_outputs_push(list, name, "bool", azd_str(value ? "true" : "false"));
}

static inline int azd__output_cmp(const void *a, const void *b) {
  const azd_string_t *x = &((const azd_provisioning_0_1_0_types_tuple2_string_output_parameter_t *)a)->f0;
  const azd_string_t *y = &((const azd_provisioning_0_1_0_types_tuple2_string_output_parameter_t *)b)->f0;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = n == 0 ? 0 : memcmp(x->ptr, y->ptr, n);
  if (c != 0) return c;
  return (x->len > y->len) - (x->len < y->len);
}

/* Sorts the list by name, as the WIT contract asks of every map. Call it last. */
static inline void azd_outputs_sort(azd_outputs_t *list) {
  if (list->len > 1) qsort(list->ptr, list->len, sizeof(*list->ptr), azd__output_cmp);
}

/* ---- other lists ---------------------------------------------------------------------- */

/* Adds a preview entry; `change_type` is Create, Delete, Deploy, Ignore, Modify, NoChange
 * or Unsupported. */
static inline void azd_changes_push(azd_changes_t *list, const char *change_type,
                                    const char *resource_id, const char *resource_type,
                                    const char *name) {
  list->ptr = (azd_provisioning_0_1_0_types_preview_change_t *)azd_grow(list->ptr, list->len + 1,
                                                                 sizeof(*list->ptr));
  azd_provisioning_0_1_0_types_preview_change_t *slot = &list->ptr[list->len++];
  slot->change_type = azd_str(change_type);
  slot->resource_id = azd_str(resource_id);
  slot->resource_type = azd_str(resource_type);
  slot->name = azd_str(name);
}

static inline void azd_strings_push(azd_strings_t *list, const char *value) {
  list->ptr = (azd_string_t *)azd_grow(list->ptr, list->len + 1, sizeof(*list->ptr));
  list->ptr[list->len++] = azd_str(value);
}

/* ---- reading the config --------------------------------------------------------------- */

typedef enum {
  AZD_JSON_OK = 0,
  AZD_JSON_MISSING,    /* the object has no such key */
  AZD_JSON_NOT_STRING, /* the key's value is not a string */
  AZD_JSON_INVALID,    /* the text is not a JSON object */
} azd_json_status_t;

typedef struct {
  const uint8_t *p, *end;
  int depth;
} azd__json_t;

static inline void azd__json_ws(azd__json_t *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static inline void azd__utf8(char *out, size_t *n, uint32_t cp) {
  if (cp < 0x80) {
    out[(*n)++] = (char)cp;
  } else if (cp < 0x800) {
    out[(*n)++] = (char)(0xC0 | (cp >> 6));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[(*n)++] = (char)(0xE0 | (cp >> 12));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*n)++] = (char)(0xF0 | (cp >> 18));
    out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  }
}

static inline bool azd__json_hex4(azd__json_t *j, uint32_t *cp) {
  if (j->end - j->p < 4) return false;
  *cp = 0;
  for (int i = 0; i < 4; i++) {
    uint8_t c = *j->p++;
    *cp <<= 4;
    if (c >= '0' && c <= '9') *cp |= (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f') *cp |= (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') *cp |= (uint32_t)(c - 'A' + 10);
    else return false;
  }
  return true;
}

/* Reads a JSON string at j->p (which is at the opening quote). With `out` non-NULL it
 * stores a NUL-terminated heap copy of the decoded text (at most as long as the raw text). */
static inline bool azd__json_string(azd__json_t *j, char **out) {
  if (j->p >= j->end || *j->p != '"') return false;
  j->p++;
  const uint8_t *start = j->p;
  char *buf = out ? (char *)azd_alloc((size_t)(j->end - start) + 1) : NULL;
  size_t n = 0;
  while (j->p < j->end) {
    uint8_t c = *j->p++;
    if (c == '"') {
      if (out) {
        buf[n] = '\0';
        *out = buf;
      }
      return true;
    }
    if (c < 0x20) break;
    if (c != '\\') {
      if (buf) buf[n++] = (char)c;
      continue;
    }
    if (j->p >= j->end) break;
    uint8_t e = *j->p++;
    char simple = 0;
    switch (e) {
      case '"': simple = '"'; break;
      case '\\': simple = '\\'; break;
      case '/': simple = '/'; break;
      case 'b': simple = '\b'; break;
      case 'f': simple = '\f'; break;
      case 'n': simple = '\n'; break;
      case 'r': simple = '\r'; break;
      case 't': simple = '\t'; break;
      case 'u': {
        uint32_t cp;
        if (!azd__json_hex4(j, &cp)) goto bad;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo;
          if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u') goto bad;
          j->p += 2;
          if (!azd__json_hex4(j, &lo) || lo < 0xDC00 || lo > 0xDFFF) goto bad;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          goto bad;
        }
        /* 6 escaped bytes become at most 4 UTF-8 bytes: the buffer is big enough. */
        if (buf) azd__utf8(buf, &n, cp);
        continue;
      }
      default: goto bad;
    }
    if (buf) buf[n++] = simple;
  }
bad:
  free(buf);
  return false;
}

static inline bool azd__json_value(azd__json_t *j);

static inline bool azd__json_container(azd__json_t *j, uint8_t close, bool keyed) {
  if (++j->depth > 64) return false; /* bounded recursion on hostile input */
  j->p++;
  azd__json_ws(j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
    j->depth--;
    return true;
  }
  for (;;) {
    if (keyed) {
      if (!azd__json_string(j, NULL)) return false;
      azd__json_ws(j);
      if (j->p >= j->end || *j->p != ':') return false;
      j->p++;
    }
    if (!azd__json_value(j)) return false;
    azd__json_ws(j);
    if (j->p >= j->end) return false;
    if (*j->p == ',') {
      j->p++;
      azd__json_ws(j);
      continue;
    }
    if (*j->p != close) return false;
    j->p++;
    j->depth--;
    return true;
  }
}

static inline bool azd__json_literal(azd__json_t *j, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0) return false;
  j->p += n;
  return true;
}

/* Skips one JSON value (checking its syntax). */
static inline bool azd__json_value(azd__json_t *j) {
  azd__json_ws(j);
  if (j->p >= j->end) return false;
  switch (*j->p) {
    case '"': return azd__json_string(j, NULL);
    case '{': return azd__json_container(j, '}', true);
    case '[': return azd__json_container(j, ']', false);
    case 't': return azd__json_literal(j, "true");
    case 'f': return azd__json_literal(j, "false");
    case 'n': return azd__json_literal(j, "null");
    default: {
      const uint8_t *start = j->p;
      while (j->p < j->end && (strchr("+-.eE", *j->p) != NULL || (*j->p >= '0' && *j->p <= '9')))
        j->p++;
      return j->p > start;
    }
  }
}

/*
 * Looks up `key` in the top-level JSON object `json` (e.g. the config the host passes in
 * `options.config`). On AZD_JSON_OK `*out` is a NUL-terminated heap copy of the string
 * value (free it). The whole text is checked: AZD_JSON_INVALID when it is not one object.
 */
static inline azd_json_status_t azd_json_get_string(const azd_string_t *json, const char *key,
                                                    char **out) {
  azd__json_t j = {json->ptr, json->ptr + json->len, 0};
  azd_json_status_t status = AZD_JSON_MISSING;
  *out = NULL;
  azd__json_ws(&j);
  if (j.p >= j.end || *j.p != '{') return AZD_JSON_INVALID;
  j.p++;
  azd__json_ws(&j);
  if (j.p < j.end && *j.p == '}') {
    j.p++;
  } else {
    for (;;) {
      char *name = NULL;
      if (!azd__json_string(&j, &name)) goto invalid;
      bool wanted = strcmp(name, key) == 0;
      free(name);
      azd__json_ws(&j);
      if (j.p >= j.end || *j.p != ':') goto invalid;
      j.p++;
      azd__json_ws(&j);
      if (wanted && j.p < j.end && *j.p == '"') {
        char *value = NULL;
        if (!azd__json_string(&j, &value)) goto invalid;
        free(*out); /* a repeated key: the last one wins, as in most parsers */
        *out = value;
        status = AZD_JSON_OK;
      } else {
        if (!azd__json_value(&j)) goto invalid;
        if (wanted) {
          free(*out);
          *out = NULL;
          status = AZD_JSON_NOT_STRING;
        }
      }
      azd__json_ws(&j);
      if (j.p < j.end && *j.p == ',') {
        j.p++;
        azd__json_ws(&j);
        continue;
      }
      if (j.p < j.end && *j.p == '}') {
        j.p++;
        break;
      }
      goto invalid;
    }
  }
  azd__json_ws(&j);
  if (j.p != j.end) goto invalid;
  return status;
invalid:
  free(*out);
  *out = NULL;
  return AZD_JSON_INVALID;
}

/* ---- azd's services (world 0.2.0) ------------------------------------------------- */

/*
 * One value of the azd environment. Returns true and sets *value (a heap string, NULL when
 * unset; free() it) on success; on failure fills *err (e.g. when the manifest does not grant
 * `[policy.azd] environment = "read"`) and returns false.
 */
static inline bool azd_env_get(const char *key, char **value, azd_error_t *err) {
  azd_string_t k = azd_str(key);
  provisioning_provider_option_string_t got;
  bool ok = azd_provisioning_0_2_0_environment_get_value(&k, &got, err);
  provisioning_provider_string_free(&k);
  *value = NULL;
  if (ok && got.is_some) {
    *value = azd_cstr(&got.val);
    provisioning_provider_string_free(&got.val);
  }
  return ok;
}

/* Sets a value of the azd environment (needs `environment = "read-write"`). */
static inline bool azd_env_set(const char *key, const char *value, azd_error_t *err) {
  azd_string_t k = azd_str(key);
  azd_string_t v = azd_str(value);
  bool ok = azd_provisioning_0_2_0_environment_set_value(&k, &v, err);
  provisioning_provider_string_free(&k);
  provisioning_provider_string_free(&v);
  return ok;
}

/*
 * Asks a yes/no question on azd's terminal. `default_answer` is -1 for none, else 0 or 1:
 * the answer under `azd --no-prompt` (where a question without a default fails).
 */
static inline bool azd_confirm(const char *message, int default_answer, bool *answer,
                               azd_error_t *err) {
  azd_provisioning_0_2_0_prompt_confirm_options_t options;
  memset(&options, 0, sizeof options);
  options.message = azd_str(message);
  options.default_value.is_some = default_answer >= 0;
  options.default_value.val = default_answer > 0;
  options.help_message = azd_str("");
  bool ok = azd_provisioning_0_2_0_prompt_confirm(&options, answer, err);
  azd_provisioning_0_2_0_prompt_confirm_options_free(&options);
  return ok;
}

#endif /* AZD_PROVIDER_H */
