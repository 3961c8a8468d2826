// e2e-steps: a JavaScript provider that scripts/azd-e2e.sh drives through the real azd.
//
// It provisions nothing. Its deploy reports "step 1 of 6" … "step 6 of 6" on azd's spinner,
// `pauseMs` apart (default 60, longer than the host's progress pacing window, so that every
// step is shown), and returns outputs that prove what it was given:
//   E2E_STEPS         6
//   E2E_CONFIG_DEPTH  how deeply the config (infra.config in azure.yaml) nests; objects and
//                     arrays each count one level, the config object itself included
//   E2E_RUN           the deploy's start time in ms, so that every provision changes something
// With `fail: <message>` in the config, deploy logs a line and throws `new Error(<message>)`,
// the way a provider with a bug fails; with `failInitialize: <message>`, initialize throws it,
// the way a provider refuses a config.
//
// Built by scripts/azd-e2e.sh with componentize-qjs, like examples/js-hello.

import { defineProvider, log, outputs, report } from "../../guest-sdk/js/azd-provider.js";

/** @type {Record<string, unknown>} */
let config = {};
let depth = 0;

/** Nesting depth of a JSON value, without recursion (the value may be deep). */
function depthOf(value) {
  let deepest = 0;
  const pending = [[value, 1]];
  while (pending.length > 0) {
    const [v, level] = pending.pop();
    if (v === null || typeof v !== "object") continue;
    deepest = Math.max(deepest, level);
    for (const child of Object.values(v)) pending.push([child, level + 1]);
  }
  return deepest;
}

/** Busy-waits: a synchronous component has no timer to sleep on. */
function pause(ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // waiting
  }
}

export const provider = defineProvider({
  initialize(_projectPath, options) {
    config = JSON.parse(options.config === "" ? "{}" : options.config);
    if (typeof config.failInitialize === "string") throw new Error(config.failInitialize);
    depth = depthOf(config);
    log.info(`e2e-steps initialized; config depth ${depth}`);
  },

  state() {
    return { outputs: outputs({ E2E_STEPS: 6, E2E_CONFIG_DEPTH: depth }), resources: [] };
  },

  deploy() {
    const started = Date.now();
    if (typeof config.fail === "string") {
      log.info(`e2e-steps: deploy is about to fail on purpose with '${config.fail}'`);
      throw new Error(config.fail);
    }
    const pauseMs = typeof config.pauseMs === "number" ? config.pauseMs : 60;
    for (let step = 1; step <= 6; step++) {
      report(`step ${step} of 6`);
      pause(pauseMs);
    }
    return {
      deployment: { parameters: [], outputs: outputs({ E2E_STEPS: 6, E2E_CONFIG_DEPTH: depth, E2E_RUN: started }) },
      skippedReason: "unspecified",
    };
  },

  preview() {
    return { summary: "e2e-steps changes nothing", parameters: [], outputs: [], changes: [] };
  },

  destroy() {
    return { invalidatedEnvKeys: ["E2E_STEPS", "E2E_CONFIG_DEPTH", "E2E_RUN"] };
  },

  ensureEnv() {},

  parameters() {
    return [];
  },

  plannedOutputs() {
    return [{ name: "E2E_STEPS" }, { name: "E2E_CONFIG_DEPTH" }, { name: "E2E_RUN" }];
  },
});
