// js-hello: a small azd provisioning provider in JavaScript.
//
// It "provisions" a greeting: azure.yaml's `infra.config` must name who to greet
// (`name`, required) and may pick the `greeting` word (default "Hello"). Deploy reports
// its steps on azd's spinner and returns two outputs; a config without `name` is
// refused with a structured `invalid_config` error. It keeps no state of its own.
//
// Build: scripts/build-examples.sh (see guest-sdk/js/azd-provider.js for the command).

import {
  change,
  defineProvider,
  log,
  outputs,
  parameter,
  parseConfig,
  report,
} from "../../guest-sdk/js/azd-provider.js";

/** @type {{ name: string, greeting: string } | null} */
let settings = null;
let layer = "";

function current() {
  if (settings === null) {
    // The host always calls initialize first; this guards a misbehaving host.
    throw new Error("initialize was not called");
  }
  return settings;
}

function greetingOutputs() {
  const { name, greeting } = current();
  const text = `${greeting}, ${name}!`;
  return outputs({ GREETING: text, GREETING_LENGTH: text.length });
}

export const provider = defineProvider({
  /**
   * @param {string} projectPath
   * @param {import("../../guest-sdk/js/azd-provider.js").ProvisioningOptions} options
   */
  initialize(projectPath, options) {
    const config = parseConfig(options, ["name"]);
    const greeting = typeof config.greeting === "string" && config.greeting !== "" ? config.greeting : "Hello";
    settings = { name: String(config.name), greeting };
    layer = options.name;
    log.info(`js-hello initialized for ${projectPath} (layer '${layer}')`);
  },

  state(_options) {
    return { outputs: greetingOutputs(), resources: [{ id: `greeting/${current().name}` }] };
  },

  deploy() {
    report(`Composing the greeting for ${current().name}`);
    const result = greetingOutputs();
    report("Greeting ready");
    return { deployment: { parameters: [], outputs: result }, skippedReason: "unspecified" };
  },

  preview() {
    report("Comparing the greeting with the configuration");
    return {
      summary: `js-hello would greet ${current().name}`,
      parameters: [],
      outputs: greetingOutputs(),
      changes: [change("Create", current().name, "hello/greeting", `greeting/${current().name}`)],
    };
  },

  destroy(options) {
    report(`Forgetting the greeting for ${current().name}${options.force ? " (forced)" : ""}`);
    return { invalidatedEnvKeys: ["GREETING", "GREETING_LENGTH"] };
  },

  ensureEnv() {
    current();
  },

  parameters() {
    return [parameter("name", { value: current().name }), parameter("greeting", { value: current().greeting })];
  },

  plannedOutputs() {
    return [{ name: "GREETING" }, { name: "GREETING_LENGTH" }];
  },
});
