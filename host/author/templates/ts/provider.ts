// {{name}}: an azd provisioning provider in TypeScript.
//
// It "provisions" a greeting: azure.yaml's `infra.config` must name who to greet
// (`name`, required) and may pick the `greeting` word (default "Hello"). Deploy reports
// its steps on azd's spinner and returns two outputs; a config without `name` is
// refused with a structured `invalid_config` error. It keeps no state of its own.
//
// Build: azd-wasm-host build ([build] in provider.toml): tsc type-checks this file and
// writes JavaScript into build/js/, which ComponentizeJS makes a component. The types
// of everything azd sends and expects are generated from the WIT (lib/azd-provisioning.d.ts,
// re-exported by lib/azd-provider.js); files, environment variables, access tokens and
// HTTP errors are in lib/azd-io.js, and `fetch` is built in.

import {
  change,
  defineProvider,
  log,
  outputs,
  parameter,
  parseConfig,
  report,
  type DestroyOptions,
  type ProvisioningOptions,
} from "./lib/azd-provider.js";

interface Settings {
  name: string;
  greeting: string;
}

let settings: Settings | null = null;

function current(): Settings {
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
  initialize(projectPath: string, options: ProvisioningOptions) {
    const config = parseConfig(options, ["name"]);
    const greeting = typeof config.greeting === "string" && config.greeting !== "" ? config.greeting : "Hello";
    settings = { name: String(config.name), greeting };
    log.info(`{{name}} initialized for ${projectPath} (layer '${options.name}')`);
  },

  state() {
    return { outputs: greetingOutputs(), resources: [{ id: `greeting/${current().name}` }] };
  },

  deploy() {
    report(`Composing the greeting for ${current().name}`);
    const result = greetingOutputs();
    report("Greeting ready");
    return { deployment: { parameters: [], outputs: result }, skippedReason: "unspecified" as const };
  },

  preview() {
    report("Comparing the greeting with the configuration");
    return {
      summary: `{{name}} would greet ${current().name}`,
      parameters: [],
      outputs: greetingOutputs(),
      changes: [change("Create", current().name, "hello/greeting", `greeting/${current().name}`)],
    };
  },

  destroy(options: DestroyOptions) {
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
