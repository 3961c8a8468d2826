/*
 * c-hello: a small azd provisioning provider in C.
 *
 * It "provisions" a greeting: azure.yaml's `infra.config` must name who to greet
 * (`name`, required) and may pick the `greeting` word (default "Hello"). Deploy, preview
 * and destroy report progress; deploy returns GREETING (string), GREETING_LENGTH (number)
 * and GREETING_DEFAULTED (bool); a config without `name` is refused with a structured
 * `invalid_config` error. It keeps no state of its own and needs no WASI access.
 *
 * Build: scripts/build-examples.sh c-hello (see guest-sdk/c/azd_provider.h).
 */
#include "azd_provider.h"

#define CONFIG_HELP "Add `name: <who to greet>` under `infra.config` in azure.yaml."

static char *g_name;     /* who to greet; NULL until initialize succeeded */
static char *g_greeting; /* the greeting word */
static bool g_defaulted; /* whether the config left the greeting word out */

static bool not_initialized(azd_error_t *err) {
  return azd_local_error(err, "not_initialized", "internal", "",
                         "c-hello was called before initialize");
}

static char *greeting_text(void) {
  azd_string_t text = azd_format("%s, %s!", g_greeting, g_name);
  return (char *)text.ptr; /* azd_format always NUL-terminates */
}

static azd_outputs_t greeting_outputs(void) {
  azd_outputs_t outputs;
  azd_outputs_init(&outputs);
  char *text = greeting_text();
  azd_output_string(&outputs, "GREETING", text);
  azd_output_number(&outputs, "GREETING_LENGTH", (long long)strlen(text));
  azd_output_bool(&outputs, "GREETING_DEFAULTED", g_defaulted);
  free(text);
  azd_outputs_sort(&outputs);
  return outputs;
}

bool exports_azd_provisioning_0_1_0_provider_initialize(
    provisioning_provider_string_t *project_path,
    exports_azd_provisioning_0_1_0_provider_provisioning_options_t *options,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  char *name = NULL, *greeting = NULL;
  bool ok = true;
  switch (azd_json_get_string(&options->config, "name", &name)) {
    case AZD_JSON_OK:
      if (name[0] != '\0') break;
      ok = azd_local_error(err, "invalid_config", "validation", CONFIG_HELP,
                           "the c-hello config has an empty `name`");
      break;
    case AZD_JSON_MISSING:
      ok = azd_local_error(err, "invalid_config", "validation", CONFIG_HELP,
                           "the c-hello config needs the key `name`");
      break;
    case AZD_JSON_NOT_STRING:
      ok = azd_local_error(err, "invalid_config", "validation", CONFIG_HELP,
                           "the c-hello config's `name` must be a string");
      break;
    case AZD_JSON_INVALID:
      ok = azd_local_error(err, "invalid_config", "validation",
                           "Check the `infra.config` section of azure.yaml.",
                           "the c-hello config is not a JSON object");
      break;
  }
  if (ok && azd_json_get_string(&options->config, "greeting", &greeting) != AZD_JSON_OK) {
    greeting = NULL;
  }
  if (ok) {
    free(g_name);
    free(g_greeting);
    g_name = name;
    g_defaulted = greeting == NULL || greeting[0] == '\0';
    if (g_defaulted) {
      free(greeting);
      greeting = azd_strdup("Hello");
    }
    g_greeting = greeting;
    azd_log(AZD_PROVISIONING_0_1_0_LOG_LEVEL_INFO, "c-hello initialized for %.*s",
            (int)project_path->len, (const char *)project_path->ptr);
  } else {
    free(name);
  }
  provisioning_provider_string_free(project_path);
  exports_azd_provisioning_0_1_0_provider_provisioning_options_free(options);
  return ok;
}

bool exports_azd_provisioning_0_1_0_provider_state(
    exports_azd_provisioning_0_1_0_provider_state_options_t *options,
    exports_azd_provisioning_0_1_0_provider_provisioning_state_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  exports_azd_provisioning_0_1_0_provider_state_options_free(options);
  if (g_name == NULL) return not_initialized(err);
  ret->outputs = greeting_outputs();
  ret->resources.ptr = (azd_provisioning_0_1_0_types_resource_t *)azd_alloc(sizeof(*ret->resources.ptr));
  ret->resources.len = 1;
  ret->resources.ptr[0].id = azd_format("greeting/%s", g_name);
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_deploy(
    exports_azd_provisioning_0_1_0_provider_deploy_result_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  if (g_name == NULL) return not_initialized(err);
  azd_report("Composing the greeting for %s", g_name);
  ret->deployment.parameters.ptr = NULL;
  ret->deployment.parameters.len = 0;
  ret->deployment.outputs = greeting_outputs();
  ret->skipped_reason = AZD_PROVISIONING_0_1_0_TYPES_SKIPPED_REASON_UNSPECIFIED;
  azd_report("Greeting ready");
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_preview(
    exports_azd_provisioning_0_1_0_provider_deployment_preview_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  if (g_name == NULL) return not_initialized(err);
  azd_report("Comparing the greeting with the configuration");
  char *id = (char *)azd_format("greeting/%s", g_name).ptr;
  ret->summary = azd_format("c-hello would greet %s", g_name);
  ret->parameters.ptr = NULL;
  ret->parameters.len = 0;
  ret->outputs = greeting_outputs();
  ret->changes.ptr = NULL;
  ret->changes.len = 0;
  azd_changes_push(&ret->changes, "Create", id, "hello/greeting", g_name);
  free(id);
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_destroy(
    exports_azd_provisioning_0_1_0_provider_destroy_options_t *options,
    exports_azd_provisioning_0_1_0_provider_destroy_result_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  if (g_name == NULL) return not_initialized(err);
  azd_report("Forgetting the greeting for %s%s", g_name, options->force ? " (forced)" : "");
  ret->invalidated_env_keys.ptr = NULL;
  ret->invalidated_env_keys.len = 0;
  azd_strings_push(&ret->invalidated_env_keys, "GREETING");
  azd_strings_push(&ret->invalidated_env_keys, "GREETING_LENGTH");
  azd_strings_push(&ret->invalidated_env_keys, "GREETING_DEFAULTED");
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_ensure_env(exports_azd_provisioning_0_1_0_provider_error_t *err) {
  if (g_name == NULL) return not_initialized(err);
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_parameters(
    exports_azd_provisioning_0_1_0_provider_list_parameter_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  if (g_name == NULL) return not_initialized(err);
  ret->len = 2;
  ret->ptr = (exports_azd_provisioning_0_1_0_provider_parameter_t *)azd_alloc(2 * sizeof(*ret->ptr));
  const char *names[2] = {"name", "greeting"};
  const char *values[2] = {g_name, g_greeting};
  for (size_t i = 0; i < 2; i++) {
    ret->ptr[i] = (exports_azd_provisioning_0_1_0_provider_parameter_t){
        .name = azd_str(names[i]),
        .secret = false,
        .value = azd_str(values[i]),
        .env_var_mapping = {NULL, 0},
        .local_prompt = false,
        .using_env_var_mapping = false,
    };
  }
  return true;
}

bool exports_azd_provisioning_0_1_0_provider_planned_outputs(
    exports_azd_provisioning_0_1_0_provider_list_planned_output_t *ret,
    exports_azd_provisioning_0_1_0_provider_error_t *err) {
  (void)err;
  const char *names[3] = {"GREETING", "GREETING_LENGTH", "GREETING_DEFAULTED"};
  ret->len = 3;
  ret->ptr = (exports_azd_provisioning_0_1_0_provider_planned_output_t *)azd_alloc(3 * sizeof(*ret->ptr));
  for (size_t i = 0; i < 3; i++) ret->ptr[i].name = azd_str(names[i]);
  return true;
}
