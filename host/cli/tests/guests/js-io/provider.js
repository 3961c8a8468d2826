// js-io: a test guest for the JavaScript helpers of ComponentizeJS providers
// (guest-sdk/js/azd-io.js): files in a granted folder, fetch under [policy.http], and
// azd's access tokens. host/cli/tests/js_io.rs copies it with the helpers into a project,
// builds it with `azd-wasm-host build` and drives it with `azd-wasm-host run`.
//
// Config: `url` (fetched on deploy, with a bearer token for `scope` when given) and `dir`
// (the granted folder where deploy writes `fetched.json`, which state reads and down
// removes).

import { defineProvider, outputs, parseConfig, report } from "./lib/azd-provider.js";
import { accessToken, files, httpError } from "./lib/azd-io.js";

/** @type {{ url: string, dir: string, scope: string }} */
let config = { url: "", dir: "", scope: "" };

export const provider = defineProvider({
  initialize(_projectPath, options) {
    const c = parseConfig(options, ["url", "dir"]);
    config = { url: String(c.url), dir: String(c.dir), scope: typeof c.scope === "string" ? c.scope : "" };
  },

  state() {
    const dir = files.dir(config.dir);
    if (!dir.exists("fetched.json")) return { outputs: [], resources: [] };
    const saved = /** @type {{ status: number, body: string }} */ (dir.readJson("fetched.json"));
    return {
      outputs: outputs({ BODY: saved.body, STATUS: saved.status, FILES: dir.list().join(",") }),
      resources: [{ id: `file/${config.dir}/fetched.json` }],
    };
  },

  async deploy() {
    /** @type {Record<string, string>} */
    const headers = {};
    if (config.scope !== "") {
      headers.authorization = `Bearer ${accessToken(config.scope).token}`;
      report("Got a token");
    }
    report(`Fetching ${config.url}`);
    const response = await fetch(config.url, { headers });
    if (!response.ok) throw await httpError(response, "test service");
    const body = (await response.text()).trim();
    const dir = files.dir(config.dir);
    dir.writeJson("fetched.json", { status: response.status, body });
    report(`Wrote ${config.dir}/fetched.json`);
    const back = /** @type {{ body: string }} */ (dir.readJson("fetched.json"));
    return {
      deployment: { parameters: [], outputs: outputs({ BODY: back.body, STATUS: response.status }) },
      skippedReason: "unspecified",
    };
  },

  preview() {
    return { summary: `would fetch ${config.url}`, parameters: [], outputs: [], changes: [] };
  },

  destroy() {
    const removed = files.dir(config.dir).remove("fetched.json");
    report(removed ? "Removed fetched.json" : "Nothing to remove");
    return { invalidatedEnvKeys: ["BODY", "STATUS"] };
  },

  ensureEnv() {},
  parameters() {
    return [];
  },
  plannedOutputs() {
    return [{ name: "BODY" }, { name: "STATUS" }];
  },
});
