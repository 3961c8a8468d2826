/*
 * http-probe in C: the C route of the host's [policy.http] tests (host/cli/tests/http.rs).
 *
 * Its config is two top-level strings (the C helper reads top-level strings only): `urls`, the
 * GET requests to send, separated by spaces, and optionally `token_scope`, a scope to ask an
 * access token for first and send as each request's bearer. Deploy reports RESULTS, one object
 * per request, `{"status": 200, "bytes": 12, "body": "<first 200 bytes>"}` or
 * `{"error": "<wasi:http error code>"}`, and TOKEN, `{"expires_on": N, "length": N}` or
 * `{"code": "...", "error": "..."}` (never the token).
 *
 * Build: scripts/build-examples.sh http-probe-c (its world: ../http-world/world.wit).
 */
#define AZD_PROVIDER_HTTP
#include "azd_provider.h"

static char *g_urls;  /* NULL until initialize */
static char *g_scope; /* NULL when no token is asked for */

/* Appends `text` (len bytes) to *json as a JSON string. */
static void json_string(azd_string_t *json, const char *text, size_t len) {
  size_t cap = json->len + len * 6 + 3;
  json->ptr = (uint8_t *)azd_grow(json->ptr, cap, 1);
  char *out = (char *)json->ptr + json->len;
  *out++ = '"';
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c == '"' || c == '\\') {
      *out++ = '\\';
      *out++ = (char)c;
    } else if (c < 0x20 || c >= 0x80) {
      /* Control bytes, and bytes past ASCII (a body need not be UTF-8), as \u00XX. */
      out += sprintf(out, "\\u%04x", c);
    } else {
      *out++ = (char)c;
    }
  }
  *out++ = '"';
  json->len = (size_t)(out - (char *)json->ptr);
}

static void json_raw(azd_string_t *json, const char *text) {
  size_t n = strlen(text);
  json->ptr = (uint8_t *)azd_grow(json->ptr, json->len + n, 1);
  memcpy(json->ptr + json->len, text, n);
  json->len += n;
}

bool exports_azd_provisioning_0_1_0_provider_initialize(
    provisioning_provider_string_t *project_path,
    exports_azd_provisioning_0_1_0_provider_provisioning_options_t *options,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  char *urls = NULL, *scope = NULL;
  bool ok = azd_json_get_string(&options->config, "urls", &urls) == AZD_JSON_OK;
  if (!ok) {
    azd_local_error(err, "invalid_config", "validation", "Set `urls` under `infra.config`.",
                    "the http-probe-c config needs a string `urls`");
  } else {
    if (azd_json_get_string(&options->config, "token_scope", &scope) != AZD_JSON_OK) scope = NULL;
    free(g_urls);
    free(g_scope);
    g_urls = urls;
    g_scope = scope;
  }
  provisioning_provider_string_free(project_path);
  exports_azd_provisioning_0_1_0_provider_provisioning_options_free(options);
  return ok;
}

/* The TOKEN output's JSON, and the bearer header value (or NULL). */
static char *ask_token(azd_outputs_t *outputs) {
  if (g_scope == NULL) return NULL;
  char *token = NULL;
  uint64_t expires_on = 0;
  azd_error_t e;
  azd_string_t json = {NULL, 0};
  char *bearer = NULL;
  if (azd_access_token(g_scope, &token, &expires_on, &e)) {
    char *text = (char *)azd_format("{\"expires_on\":%llu,\"length\":%zu}",
                                    (unsigned long long)expires_on, strlen(token)).ptr;
    json_raw(&json, text);
    free(text);
    bearer = (char *)azd_format("Bearer %s", token).ptr;
    free(token);
  } else {
    json_raw(&json, "{\"code\":");
    azd_string_t *code = &e.detail.val.val.local.code;
    char *dashed = azd_cstr(code);
    for (char *c = dashed; *c; c++) {
      if (*c == '_') *c = '-';
    }
    json_string(&json, dashed, strlen(dashed));
    free(dashed);
    json_raw(&json, ",\"error\":");
    json_string(&json, (const char *)e.message.ptr, e.message.len);
    json_raw(&json, "}");
    azd_provisioning_0_1_0_types_error_free(&e);
  }
  azd_outputs_push(outputs, "TOKEN", "object", json);
  return bearer;
}

bool exports_azd_provisioning_0_1_0_provider_deploy(
    exports_azd_provisioning_0_1_0_provider_deploy_result_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  if (g_urls == NULL) return azd_local_error(err, "not_initialized", "internal", "", "no initialize");
  azd_outputs_t outputs;
  azd_outputs_init(&outputs);
  char *bearer = ask_token(&outputs);
  const char *headers[] = {"authorization", bearer, NULL};
  azd_string_t json = {NULL, 0};
  json_raw(&json, "[");
  char *urls = azd_strdup(g_urls);
  bool first = true;
  for (char *url = strtok(urls, " "); url != NULL; url = strtok(NULL, " ")) {
    azd_report("Requesting %s", url);
    azd_http_response_t r;
    json_raw(&json, first ? "" : ",");
    first = false;
    if (azd_http_request("GET", url, bearer ? headers : NULL, NULL, 0, &r)) {
      char *head = (char *)azd_format("{\"status\":%u,\"bytes\":%zu,\"body\":", r.status, r.body_len).ptr;
      json_raw(&json, head);
      free(head);
      json_string(&json, (const char *)r.body, r.body_len < 200 ? r.body_len : 200);
      json_raw(&json, "}");
      azd_http_response_free(&r);
    } else {
      json_raw(&json, "{\"error\":");
      json_string(&json, r.code, strlen(r.code));
      json_raw(&json, "}");
    }
  }
  json_raw(&json, "]");
  free(urls);
  free(bearer);
  azd_outputs_push(&outputs, "RESULTS", "array", json);
  azd_outputs_sort(&outputs);
  ret->deployment.parameters.ptr = NULL;
  ret->deployment.parameters.len = 0;
  ret->deployment.outputs = outputs;
  ret->skipped_reason = AZD_PROVISIONING_0_1_0_TYPES_SKIPPED_REASON_UNSPECIFIED;
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_state(
    exports_azd_provisioning_0_1_0_provider_state_options_t *options,
    exports_azd_provisioning_0_1_0_provider_provisioning_state_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)err;
  exports_azd_provisioning_0_1_0_provider_state_options_free(options);
  memset(ret, 0, sizeof *ret);
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_preview(
    exports_azd_provisioning_0_1_0_provider_deployment_preview_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)err;
  memset(ret, 0, sizeof *ret);
  ret->summary = azd_str("http-probe-c sends requests on deploy only");
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_destroy(
    exports_azd_provisioning_0_1_0_provider_destroy_options_t *options,
    exports_azd_provisioning_0_1_0_provider_destroy_result_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)options;
  (void)err;
  memset(ret, 0, sizeof *ret);
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_ensure_env(exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)err;
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_parameters(
    exports_azd_provisioning_0_1_0_provider_list_parameter_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)err;
  ret->ptr = NULL;
  ret->len = 0;
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_planned_outputs(
    exports_azd_provisioning_0_1_0_provider_list_planned_output_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)err;
  ret->ptr = NULL;
  ret->len = 0;
  return true;
}
