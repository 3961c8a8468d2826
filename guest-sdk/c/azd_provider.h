/*
 * azd_provider.h: helpers for azd provisioning providers written in C.
 *
 * Header-only; include it after generating the bindings of the WIT world:
 *
 *   azd-wasm-host c-bindings wit --world provisioning-provider --out-dir gen
 *   python -m ziglang cc -target wasm32-wasi -mexec-model=reactor -O2 -s \
 *       -I gen -I guest-sdk/c provider.c gen/provisioning_provider.c \
 *       gen/provisioning_provider_component_type.o -o core.wasm
 *   wasm-tools component new core.wasm -o provider.wasm
 *
 * (`azd-wasm-host build` does all of it in a project `azd-wasm-host new c` wrote;
 * scripts/build-examples.sh does it with pinned tools; clang-14 with
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
 *   azd_http_request / azd_access_token  outbound HTTP and access tokens (define
 *                                        AZD_PROVIDER_HTTP; a world that imports them)
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

#ifdef AZD_PROVIDER_HTTP
#include <strings.h>

/*
 * Outbound HTTP and access tokens, for a world that imports wasi:http/outgoing-handler and
 * azd:credentials/credentials beside the provider world (see guest-sdk/c/README.md). Define
 * AZD_PROVIDER_HTTP before including this header.
 *
 *   azd_http_request   one request, the whole response read (any status is a response)
 *   azd_access_token   a bearer token for a scope [policy.azd] credential_scopes grants
 */

/* wasi:http's error-code cases, in the WIT's order, in lower case. */
static const char *const azd__http_codes[] = {
    "dns-timeout", "dns-error", "destination-not-found", "destination-unavailable",
    "destination-ip-prohibited", "destination-ip-unroutable", "connection-refused",
    "connection-terminated", "connection-timeout", "connection-read-timeout",
    "connection-write-timeout", "connection-limit-reached", "tls-protocol-error",
    "tls-certificate-error", "tls-alert-received", "http-request-denied",
    "http-request-length-required", "http-request-body-size", "http-request-method-invalid",
    "http-request-uri-invalid", "http-request-uri-too-long", "http-request-header-section-size",
    "http-request-header-size", "http-request-trailer-section-size", "http-request-trailer-size",
    "http-response-incomplete", "http-response-header-section-size", "http-response-header-size",
    "http-response-body-size", "http-response-trailer-section-size", "http-response-trailer-size",
    "http-response-transfer-coding", "http-response-content-coding", "http-response-timeout",
    "http-upgrade-failed", "http-protocol-error", "loop-detected", "configuration-error",
    "internal-error",
};

typedef struct {
  uint16_t status;
  uint8_t *body; /* heap, body_len bytes (plus a NUL after them); free with azd_http_response_free */
  size_t body_len;
  /* On failure: the wasi:http error code (`http-request-denied`, `connection-read-timeout`, ...)
   * or `invalid-url`, `http-request-invalid`, `http-request-body`. */
  const char *code;
} azd_http_response_t;

static inline void azd_http_response_free(azd_http_response_t *r) {
  free(r->body);
  r->body = NULL;
  r->body_len = 0;
}

static inline bool azd__http_fail(azd_http_response_t *r, const char *code) {
  r->code = code;
  return false;
}

static inline bool azd__http_error(azd_http_response_t *r, wasi_http_types_error_code_t *e) {
  size_t n = sizeof azd__http_codes / sizeof azd__http_codes[0];
  r->code = e->tag < n ? azd__http_codes[e->tag] : "internal-error";
  wasi_http_types_error_code_free(e);
  return false;
}

/* Adds one header; false when wasi:http refuses its name or value. */
static inline bool azd__http_append(wasi_http_types_borrow_fields_t fields, const char *name, const char *value) {
  wasi_http_types_field_name_t n = azd_str(name);
  wasi_http_types_field_value_t v = {(uint8_t *)value, strlen(value)};
  wasi_http_types_header_error_t herr;
  bool ok = wasi_http_types_method_fields_append(fields, &n, &v, &herr);
  provisioning_provider_string_free(&n);
  return ok;
}

/* Builds the request; false (with r->code) when the URL or a header is refused. */
static inline bool azd__http_outgoing(const char *method, const char *url, const char *const *headers,
                                      size_t body_len, wasi_http_types_own_outgoing_request_t *out,
                                      azd_http_response_t *r) {
  const char *sep = strstr(url, "://");
  if (sep == NULL) return azd__http_fail(r, "invalid-url");
  size_t scheme_len = (size_t)(sep - url);
  bool https = scheme_len == 5 && strncmp(url, "https", 5) == 0;
  if (!https && !(scheme_len == 4 && strncmp(url, "http", 4) == 0)) return azd__http_fail(r, "invalid-url");
  const char *authority = sep + 3;
  size_t authority_len = strcspn(authority, "/?#");
  if (authority_len == 0 || memchr(authority, '@', authority_len) != NULL) return azd__http_fail(r, "invalid-url");
  const char *path = authority + authority_len;

  wasi_http_types_own_fields_t fields = wasi_http_types_constructor_fields();
  wasi_http_types_borrow_fields_t b = wasi_http_types_borrow_fields(fields);
  bool sized = false, ok = true;
  for (size_t i = 0; ok && headers != NULL && headers[i] != NULL && headers[i + 1] != NULL; i += 2) {
    sized = sized || strcasecmp(headers[i], "content-length") == 0;
    ok = azd__http_append(b, headers[i], headers[i + 1]);
  }
  bool bodiless = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
  if (ok && !sized && (body_len > 0 || !bodiless)) {
    char length[24];
    snprintf(length, sizeof length, "%zu", body_len);
    ok = azd__http_append(b, "content-length", length);
  }
  if (!ok) {
    wasi_http_types_fields_drop_own(fields);
    return azd__http_fail(r, "http-request-invalid");
  }
  *out = wasi_http_types_constructor_outgoing_request(fields);
  wasi_http_types_borrow_outgoing_request_t req = wasi_http_types_borrow_outgoing_request(*out);

  static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT",
                                        "OPTIONS", "TRACE", "PATCH"};
  wasi_http_types_method_t m;
  m.tag = WASI_HTTP_TYPES_METHOD_OTHER;
  for (uint8_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
    if (strcmp(method, methods[i]) == 0) m.tag = i;
  }
  if (m.tag == WASI_HTTP_TYPES_METHOD_OTHER) m.val.other = azd_str(method);
  wasi_http_types_scheme_t scheme = {.tag = https ? WASI_HTTP_TYPES_SCHEME_HTTPS : WASI_HTTP_TYPES_SCHEME_HTTP};
  provisioning_provider_string_t auth = azd_strn(authority, authority_len);
  provisioning_provider_string_t pq = azd_str(*path ? path : "/");
  ok = wasi_http_types_method_outgoing_request_set_method(req, &m) &&
            wasi_http_types_method_outgoing_request_set_scheme(req, &scheme) &&
            wasi_http_types_method_outgoing_request_set_authority(req, &auth) &&
            wasi_http_types_method_outgoing_request_set_path_with_query(req, &pq);
  if (m.tag == WASI_HTTP_TYPES_METHOD_OTHER) provisioning_provider_string_free(&m.val.other);
  provisioning_provider_string_free(&auth);
  provisioning_provider_string_free(&pq);
  if (!ok) {
    wasi_http_types_outgoing_request_drop_own(*out);
    return azd__http_fail(r, "http-request-invalid");
  }
  return true;
}

/* Reads a response body to its end into r. */
static inline bool azd__http_read(wasi_http_types_own_incoming_response_t response, azd_http_response_t *r) {
  wasi_http_types_borrow_incoming_response_t resp = wasi_http_types_borrow_incoming_response(response);
  r->status = wasi_http_types_method_incoming_response_status(resp);
  wasi_http_types_own_incoming_body_t body;
  if (!wasi_http_types_method_incoming_response_consume(resp, &body)) {
    wasi_http_types_incoming_response_drop_own(response);
    return azd__http_fail(r, "http-response-incomplete");
  }
  wasi_http_types_own_input_stream_t stream;
  if (!wasi_http_types_method_incoming_body_stream(wasi_http_types_borrow_incoming_body(body), &stream)) {
    wasi_http_types_incoming_body_drop_own(body);
    wasi_http_types_incoming_response_drop_own(response);
    return azd__http_fail(r, "http-response-incomplete");
  }
  bool ok = true;
  r->body = (uint8_t *)azd_alloc(1);
  r->body_len = 0;
  for (;;) {
    provisioning_provider_list_u8_t chunk;
    wasi_io_streams_stream_error_t serr;
    if (!wasi_io_streams_method_input_stream_blocking_read(wasi_io_streams_borrow_input_stream(stream),
                                                           65536, &chunk, &serr)) {
      ok = serr.tag == WASI_IO_STREAMS_STREAM_ERROR_CLOSED;
      wasi_io_streams_stream_error_free(&serr);
      break;
    }
    r->body = (uint8_t *)azd_grow(r->body, r->body_len + chunk.len + 1, 1);
    memcpy(r->body + r->body_len, chunk.ptr, chunk.len);
    r->body_len += chunk.len;
    provisioning_provider_list_u8_free(&chunk);
  }
  r->body[r->body_len] = 0;
  /* Children first: the stream, then the body, then the response. */
  wasi_io_streams_input_stream_drop_own(stream);
  wasi_http_types_incoming_body_drop_own(body);
  wasi_http_types_incoming_response_drop_own(response);
  if (!ok) {
    azd_http_response_free(r);
    return azd__http_fail(r, "http-response-incomplete");
  }
  return true;
}

/*
 * Sends one request and reads the whole response. `headers` is NULL or a NULL-terminated list
 * of name, value pairs. A request with a body, or whose method is not GET or HEAD, carries a
 * content-length. Returns true with r->status and r->body (any status is a response), or false
 * with r->code naming why there is none.
 */
static inline bool azd_http_request(const char *method, const char *url, const char *const *headers,
                                    const uint8_t *body, size_t body_len, azd_http_response_t *r) {
  memset(r, 0, sizeof *r);
  wasi_http_types_own_outgoing_request_t request;
  if (!azd__http_outgoing(method, url, headers, body_len, &request, r)) return false;
  wasi_http_types_own_outgoing_body_t out;
  if (!wasi_http_types_method_outgoing_request_body(wasi_http_types_borrow_outgoing_request(request), &out)) {
    wasi_http_types_outgoing_request_drop_own(request);
    return azd__http_fail(r, "http-request-invalid");
  }
  wasi_http_types_own_future_incoming_response_t future;
  wasi_http_types_error_code_t e;
  if (!wasi_http_outgoing_handler_handle(request, NULL, &future, &e)) {
    wasi_http_types_outgoing_body_drop_own(out);
    return azd__http_error(r, &e);
  }
  if (body_len > 0) {
    wasi_http_types_own_output_stream_t stream;
    if (!wasi_http_types_method_outgoing_body_write(wasi_http_types_borrow_outgoing_body(out), &stream)) {
      wasi_http_types_outgoing_body_drop_own(out);
      wasi_http_types_future_incoming_response_drop_own(future);
      return azd__http_fail(r, "http-request-body");
    }
    bool written = true;
    for (size_t at = 0; at < body_len && written; at += 4096) {
      size_t n = body_len - at < 4096 ? body_len - at : 4096;
      provisioning_provider_list_u8_t part = {(uint8_t *)body + at, n};
      wasi_io_streams_stream_error_t serr;
      written = wasi_io_streams_method_output_stream_blocking_write_and_flush(
          wasi_io_streams_borrow_output_stream(stream), &part, &serr);
      if (!written) wasi_io_streams_stream_error_free(&serr);
    }
    wasi_io_streams_output_stream_drop_own(stream);
    if (!written) {
      wasi_http_types_outgoing_body_drop_own(out);
      wasi_http_types_future_incoming_response_drop_own(future);
      return azd__http_fail(r, "http-request-body");
    }
  }
  if (!wasi_http_types_static_outgoing_body_finish(out, NULL, &e)) {
    wasi_http_types_future_incoming_response_drop_own(future);
    return azd__http_error(r, &e);
  }
  wasi_http_types_borrow_future_incoming_response_t f = wasi_http_types_borrow_future_incoming_response(future);
  wasi_http_types_result_result_own_incoming_response_error_code_void_t got;
  while (!wasi_http_types_method_future_incoming_response_get(f, &got)) {
    wasi_io_poll_own_pollable_t ready = wasi_http_types_method_future_incoming_response_subscribe(f);
    wasi_io_poll_method_pollable_block(wasi_io_poll_borrow_pollable(ready));
    wasi_io_poll_pollable_drop_own(ready);
  }
  wasi_http_types_future_incoming_response_drop_own(future);
  if (got.is_err) return azd__http_fail(r, "internal-error"); /* the response was taken twice */
  if (got.val.ok.is_err) return azd__http_error(r, &got.val.ok.val.err);
  return azd__http_read(got.val.ok.val.ok, r);
}

/*
 * A bearer token for `scope` (heap, NUL-terminated; free it) and when it expires (Unix seconds).
 * Returns false with an `auth` error (code `scope_not_granted`, `not_signed_in`, ...) in err.
 */
static inline bool azd_access_token(const char *scope, char **token, uint64_t *expires_on, azd_error_t *err) {
  provisioning_provider_string_t s = azd_str(scope);
  azd_credentials_credentials_access_token_t t;
  azd_credentials_credentials_credential_error_t e;
  bool ok = azd_credentials_credentials_get_token(&s, &t, &e);
  provisioning_provider_string_free(&s);
  if (!ok) {
    char *code = azd_cstr(&e.code);
    char *message = azd_cstr(&e.message);
    for (char *c = code; *c; c++) {
      if (*c == '-') *c = '_';
    }
    azd_credentials_credentials_credential_error_free(&e);
    azd_local_error(err, code, "auth", "", "%s", message);
    free(code);
    free(message);
    return false;
  }
  *token = azd_cstr(&t.token);
  *expires_on = t.expires_on;
  azd_credentials_credentials_access_token_free(&t);
  return true;
}
#endif /* AZD_PROVIDER_HTTP */

#endif /* AZD_PROVIDER_H */
