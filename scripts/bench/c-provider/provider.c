/*
 * The benchmark's trivial provider, as a WebAssembly component (C), the twin of
 * scripts/bench/go-provider (azd's Go SDK):
 *
 *   - state answers two fixed outputs;
 *   - deploy reports `progress` messages (infra.config, a decimal string, default 100000);
 *   - everything else answers at once.
 *
 * Built by scripts/build-examples.sh bench-c; driven by host/cli/benches/vs_go.rs.
 */
#include <stdlib.h>

#include "azd_provider.h"

static long g_progress = 100000;

static azd_outputs_t fixed_outputs(void) {
  azd_outputs_t outputs;
  azd_outputs_init(&outputs);
  azd_output_number(&outputs, "COUNT", 3);
  azd_output_string(&outputs, "GREETING", "hello");
  return outputs;
}

bool exports_azd_provisioning_0_1_0_provider_initialize(
    provisioning_provider_string_t *project_path,
    exports_azd_provisioning_0_1_0_provider_provisioning_options_t *options,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  char *progress = NULL;
  bool ok = true;
  if (azd_json_get_string(&options->config, "progress", &progress) == AZD_JSON_OK) {
    char *end = NULL;
    long n = strtol(progress, &end, 10);
    if (end == progress || *end != '\0' || n < 0) {
      ok = azd_local_error(err, "invalid_config", "validation",
                           "Set `progress` to a decimal string such as \"100000\".",
                           "the bench config's `progress` is not a count");
    } else {
      g_progress = n;
    }
  }
  free(progress);
  provisioning_provider_string_free(project_path);
  exports_azd_provisioning_0_1_0_provider_provisioning_options_free(options);
  return ok;
}

bool exports_azd_provisioning_0_1_0_provider_state(
    exports_azd_provisioning_0_1_0_provider_state_options_t *options,
    exports_azd_provisioning_0_1_0_provider_provisioning_state_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)err;
  exports_azd_provisioning_0_1_0_provider_state_options_free(options);
  ret->outputs = fixed_outputs();
  ret->resources.ptr = NULL;
  ret->resources.len = 0;
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_deploy(
    exports_azd_provisioning_0_1_0_provider_deploy_result_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)err;
  for (long i = 0; i < g_progress; i++) azd_report("%ld", i);
  ret->deployment.parameters.ptr = NULL;
  ret->deployment.parameters.len = 0;
  ret->deployment.outputs = fixed_outputs();
  ret->skipped_reason = AZD_PROVISIONING_0_1_0_TYPES_SKIPPED_REASON_UNSPECIFIED;
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_preview(
    exports_azd_provisioning_0_1_0_provider_deployment_preview_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)err;
  ret->summary = azd_str("nothing to change");
  ret->parameters.ptr = NULL;
  ret->parameters.len = 0;
  ret->outputs = fixed_outputs();
  ret->changes.ptr = NULL;
  ret->changes.len = 0;
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_destroy(
    exports_azd_provisioning_0_1_0_provider_destroy_options_t *options,
    exports_azd_provisioning_0_1_0_provider_destroy_result_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)options;
  (void)err;
  ret->invalidated_env_keys.ptr = NULL;
  ret->invalidated_env_keys.len = 0;
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
