// Helpers for azd provisioning providers written in JavaScript (or TypeScript).
//
// A provider is an ES module that exports `provider`, an object with one method per
// function of the WIT interface `azd:provisioning/provider@0.1.0` (camelCase names:
// initialize, state, deploy, preview, destroy, ensureEnv, parameters, plannedOutputs).
// Wrap it in `defineProvider({...})`: any exception a method throws then reaches azd
// as an error with its message (the stack goes to the host's log), instead of a trap
// that loses it. The component targets world `provisioning-provider` of
// `azd:provisioning@0.2.0`, which adds azd's services (`environment`, `prompt` below).
// WIT values are plain JS values: records are objects with camelCase keys,
// `list<tuple<string, T>>` is an array of `[key, value]` pairs, enums are strings, and a
// function returning `result<T, error>` returns T or *throws* the error record.
//
// This module works with both engines `azd-wasm-host build` knows:
// - ComponentizeJS (the default): methods may be `async` (fetch, for one); files, access
//   tokens and HTTP errors are in `azd-io.js` beside this file;
// - QuickJS (`[build] engine = "quickjs"`, componentize-qjs --sync): a small component
//   without files or fetch; methods must not be async.
//
// scripts/build-examples.sh builds the QuickJS examples from the repository root:
//
//   npx componentize-qjs --sync -w wit -n provisioning-provider \
//       -j examples/js-hello/provider.js --module-root . -o build/provider.wasm

import * as progressApi from "azd:provisioning/progress@0.1.0";
import * as logApi from "azd:provisioning/log@0.1.0";
import * as environmentApi from "azd:provisioning/environment@0.2.0";
import * as promptApi from "azd:provisioning/prompt@0.2.0";

// The API's types are generated from the WIT (azd-provisioning.d.ts beside this file);
// TypeScript providers are checked against them. OutputType and ChangeType narrow two
// strings the WIT leaves open to the values azd accepts.
/**
 * @typedef {import("./azd-provisioning.js").ErrorOrigin} ErrorOrigin
 * @typedef {import("./azd-provisioning.js").ErrorLink} ErrorLink
 * @typedef {import("./azd-provisioning.js").LocalError} LocalErrorDetail
 * @typedef {import("./azd-provisioning.js").ServiceError} ServiceErrorDetail
 * @typedef {import("./azd-provisioning.js").ErrorDetail} ErrorDetail
 * @typedef {import("./azd-provisioning.js").ProviderError} ProviderError
 * @typedef {import("./azd-provisioning.js").ProvisioningOptions} ProvisioningOptions
 * @typedef {"string" | "number" | "bool" | "object" | "array"} OutputType
 * @typedef {import("./azd-provisioning.js").OutputParameter} OutputParameter
 * @typedef {import("./azd-provisioning.js").InputParameter} InputParameter
 * @typedef {import("./azd-provisioning.js").ProvisioningState} ProvisioningState
 * @typedef {import("./azd-provisioning.js").Deployment} Deployment
 * @typedef {import("./azd-provisioning.js").DeployResult} DeployResult
 * @typedef {"Create" | "Delete" | "Deploy" | "Ignore" | "Modify" | "NoChange" | "Unsupported"} ChangeType
 * @typedef {import("./azd-provisioning.js").PreviewChange} PreviewChange
 * @typedef {import("./azd-provisioning.js").DeploymentPreview} DeploymentPreview
 * @typedef {import("./azd-provisioning.js").DestroyOptions} DestroyOptions
 * @typedef {import("./azd-provisioning.js").DestroyResult} DestroyResult
 * @typedef {import("./azd-provisioning.js").Parameter} Parameter
 * @typedef {import("./azd-provisioning.js").StateOptions} StateOptions
 * @typedef {import("./azd-provisioning.js").PlannedOutput} PlannedOutput
 */

/**
 * The methods a provider exports (the WIT interface `azd:provisioning/provider@0.1.0`, in
 * camelCase). Each returns its value, or throws an error record (`localError`, ...); under
 * ComponentizeJS a method may also be async and return a promise of its value.
 * @template V
 * @typedef {import("./azd-provisioning.js").Answer<V>} Answer
 */
/**
 * @typedef {import("./azd-provisioning.js").Provider} Provider
 */

/**
 * Shows `message` on azd's spinner. Only deploy, preview and destroy show progress;
 * during other calls the host writes it to its debug log.
 * @param {string} message
 */
export function report(message) {
  progressApi.report(String(message));
}

/** Levelled lines for the host's debug log (stderr with `azd --debug`). Never log secrets. */
export const log = {
  /** @param {string} message */
  trace: (message) => logApi.write("trace", String(message)),
  /** @param {string} message */
  debug: (message) => logApi.write("debug", String(message)),
  /** @param {string} message */
  info: (message) => logApi.write("info", String(message)),
  /** @param {string} message */
  warn: (message) => logApi.write("warn", String(message)),
  /** @param {string} message */
  error: (message) => logApi.write("error", String(message)),
};

/**
 * An error with a local cause (configuration, files, validation). Throw it from a provider
 * method: azd shows the message, the suggestion and the links.
 * @param {string} message
 * @param {{ code: string, category?: string, suggestion?: string, links?: ErrorLink[] }} details
 *   `code` is lower snake_case; `category` one of validation, auth, dependency,
 *   compatibility, user, internal, local (default `local`).
 * @returns {ProviderError}
 */
export function localError(message, { code, category = "local", suggestion = "", links = [] }) {
  return {
    message,
    origin: "local",
    suggestion,
    links,
    detail: { tag: "local", val: { code, category } },
  };
}

/**
 * An error a remote service reported.
 * @param {string} message
 * @param {{ errorCode: string, statusCode: number, serviceName: string, suggestion?: string,
 *           links?: ErrorLink[] }} details
 * @returns {ProviderError}
 */
export function serviceError(message, { errorCode, statusCode, serviceName, suggestion = "", links = [] }) {
  return {
    message,
    origin: "service",
    suggestion,
    links,
    detail: { tag: "service", val: { errorCode, statusCode, serviceName } },
  };
}

/**
 * The standard "your azure.yaml config is wrong" error: origin local, code `invalid_config`,
 * category `validation`.
 * @param {string} message
 * @param {string} suggestion
 * @returns {ProviderError}
 */
export function invalidConfig(message, suggestion) {
  return localError(message, { code: "invalid_config", category: "validation", suggestion });
}

/**
 * Parses the provider's `config:` section (JSON object text in `options.config`) and checks
 * that every key in `required` is present with a non-empty string value.
 * @param {ProvisioningOptions} options
 * @param {string[]} [required]
 * @returns {Record<string, unknown>}
 * @throws {ProviderError} `invalid_config` when the text is not a JSON object or a key is missing.
 */
export function parseConfig(options, required = []) {
  let config;
  try {
    config = JSON.parse(options.config === "" ? "{}" : options.config);
  } catch (e) {
    throw invalidConfig(
      `the provider config is not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
      "Check the `infra.config` section of azure.yaml.",
    );
  }
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    throw invalidConfig("the provider config must be an object", "Write `infra.config` in azure.yaml as a mapping.");
  }
  for (const key of required) {
    const value = config[key];
    if (typeof value !== "string" || value === "") {
      throw invalidConfig(
        `the provider config needs a non-empty string \`${key}\``,
        `Add \`${key}: <value>\` under \`infra.config\` in azure.yaml.`,
      );
    }
  }
  return config;
}

/**
 * One output value with the type azd expects, inferred from the JS value:
 * string → `string`, number → `number`, boolean → `bool`, array → `array`, other objects → `object`.
 * @param {unknown} value
 * @returns {OutputParameter}
 */
export function output(value) {
  switch (typeof value) {
    case "string":
      return { type: "string", value };
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("an output number must be finite");
      return { type: "number", value: String(value) };
    case "boolean":
      return { type: "bool", value: String(value) };
    case "object":
      if (value === null) throw new TypeError("an output cannot be null");
      return { type: Array.isArray(value) ? "array" : "object", value: JSON.stringify(value) };
    default:
      throw new TypeError(`an output cannot be a ${typeof value}`);
  }
}

/**
 * Turns `{ NAME: value }` into the sorted `[name, OutputParameter]` list WIT expects.
 * @param {Record<string, unknown>} values
 * @returns {[string, OutputParameter][]}
 */
export function outputs(values) {
  return Object.keys(values)
    .sort()
    .map((name) => [name, output(values[name])]);
}

/**
 * One entry of a preview.
 * @param {ChangeType} changeType
 * @param {string} name
 * @param {string} resourceType
 * @param {string} [resourceId]
 * @returns {PreviewChange}
 */
export function change(changeType, name, resourceType, resourceId = name) {
  return { changeType, resourceId, resourceType, name };
}

/**
 * A parameter description for `parameters()`.
 * @param {string} name
 * @param {{ secret?: boolean, value?: string, envVarMapping?: string[], localPrompt?: boolean }} [more]
 * @returns {Parameter}
 */
export function parameter(name, { secret = false, value = "", envVarMapping = [], localPrompt = false } = {}) {
  return { name, secret, value, envVarMapping, localPrompt, usingEnvVarMapping: envVarMapping.length > 0 };
}

/**
 * Makes `methods` the provider: every method that throws something other than an error
 * record (`localError`, `serviceError`, ...) answers azd with an error carrying the
 * exception's message (category `internal`, code `provider_exception`); its stack goes to
 * the host's log. Export the result: `export const provider = defineProvider({ ... })`.
 * TypeScript (and editors, for JavaScript) check `methods` against {@link Provider}.
 * @param {Provider} methods
 * @returns {Provider}
 */
export function defineProvider(methods) {
  /** @type {Record<string, Function>} */
  const wrapped = {};
  for (const [name, method] of Object.entries(methods)) {
    wrapped[name] = function (...args) {
      let result;
      try {
        result = method.apply(methods, args);
      } catch (e) {
        throw asProviderError(e, name);
      }
      // An async method (ComponentizeJS): its rejection becomes the error azd shows.
      if (result !== null && typeof result === "object" && typeof result.then === "function") {
        return result.then(undefined, (e) => {
          throw asProviderError(e, name);
        });
      }
      return result;
    };
  }
  return /** @type {Provider} */ (/** @type {unknown} */ (wrapped));
}

/**
 * Calls an import of azd's services: an error it returns is thrown as the error record
 * itself (ComponentizeJS wraps it in an exception whose `payload` is the record).
 * @template T
 * @param {() => T} call
 * @returns {T}
 */
export function callImport(call) {
  try {
    return call();
  } catch (e) {
    const payload = /** @type {any} */ (e)?.payload;
    throw payload !== undefined ? payload : e;
  }
}

/** @param {unknown} e @returns {e is ProviderError} */
function isProviderError(e) {
  return (
    typeof e === "object" &&
    e !== null &&
    typeof (/** @type {any} */ (e).message) === "string" &&
    "origin" in e &&
    "suggestion" in e &&
    "links" in e &&
    "detail" in e
  );
}

/**
 * An exception as the error azd shows: an error record stays as it is; anything else keeps
 * its message, and its stack goes to the host's log.
 * @param {unknown} e
 * @param {string} method
 * @returns {ProviderError}
 */
function asProviderError(e, method) {
  if (isProviderError(e)) return e;
  const payload = /** @type {any} */ (e)?.payload;
  if (isProviderError(payload)) return payload;
  const message = e instanceof Error ? e.message : String(e);
  const stack = e instanceof Error && typeof e.stack === "string" ? e.stack : "";
  log.error(`${method} threw: ${message}${stack ? `\n${stack}` : ""}`);
  return localError(message === "" ? `${method} failed` : message, {
    code: "provider_exception",
    category: "internal",
    suggestion: `The provider threw an exception in ${method}; the host's log has its stack.`,
  });
}

/**
 * The azd environment of the running command (world 0.2.0). Needs
 * `[policy.azd] environment = "read"` in provider.toml (`"read-write"` for `set`);
 * otherwise each call throws an error record naming the grant.
 */
export const environment = {
  /** The environment's name. @returns {string} */
  name: () => callImport(() => environmentApi.name()),
  /**
   * One value, or `null` when it is not set.
   * @param {string} key
   * @returns {string | null}
   */
  get: (key) => callImport(() => environmentApi.getValue(String(key))) ?? null,
  /** Every value, sorted by key. @returns {[string, string][]} */
  values: () => callImport(() => environmentApi.getValues()),
  /**
   * Sets a value; azd saves it to the environment's `.env`.
   * @param {string} key
   * @param {string} value
   */
  set: (key, value) => callImport(() => environmentApi.setValue(String(key), String(value))),
};

/**
 * Questions to the user on azd's terminal (world 0.2.0). Needs `[policy.azd] prompt = true`.
 * Under `azd --no-prompt` a question gets its default, and one without a default throws:
 * give a default to every question that has a safe answer.
 */
export const prompt = {
  /** Whether the user can be asked. @returns {boolean} */
  interactive: () => promptApi.interactive(),
  /**
   * A yes/no question.
   * @param {string} message
   * @param {{ default?: boolean, help?: string }} [options]
   * @returns {boolean}
   */
  confirm: (message, { default: defaultValue, help = "" } = {}) =>
    callImport(() => promptApi.confirm({ message: String(message), defaultValue, helpMessage: help })),
  /**
   * A question answered with text.
   * @param {string} message
   * @param {{ default?: string, help?: string, placeholder?: string, secret?: boolean, required?: boolean }} [options]
   * @returns {string}
   */
  text: (message, { default: defaultValue, help = "", placeholder = "", secret = false, required = false } = {}) =>
    callImport(() =>
      promptApi.text({ message: String(message), defaultValue, helpMessage: help, placeholder, secret, required }),
    ),
  /**
   * Choose one of `choices`; returns the chosen index.
   * @param {string} message
   * @param {{ value: string, label: string }[]} choices
   * @param {{ default?: number, help?: string }} [options]
   * @returns {number}
   */
  select: (message, choices, { default: defaultIndex, help = "" } = {}) =>
    callImport(() => promptApi.select({ message: String(message), choices, defaultIndex, helpMessage: help })),
};
