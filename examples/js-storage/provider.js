// storage-js: an azd provisioning provider in JavaScript for the containers, queues and tables
// of one Azure Storage account, through the Storage REST API with `fetch` (ComponentizeJS).
// It does what examples/azure-storage does in Rust, with the same configuration and outputs:
//
//   infra:
//     provider: storage-js
//     config:
//       account: mystorage            # the storage account (it must exist)
//       auth: token                   # or shared-key: the key in AZURE_STORAGE_KEY
//       endpoints:                    # optional; Azure's by default
//         blob: http://127.0.0.1:10000/devstoreaccount1
//       containers: [web, uploads]
//       queues: [jobs]
//       tables: [audit]
//
// preview lists what the account holds and shows each declared resource as Create or
// NoChange; deploy creates what is missing, a progress step each, and is skipped when nothing
// is; state reads what exists (azd env refresh); destroy deletes the declared resources that
// exist (nothing else), asking first unless --force. Build: azd-wasm-host build.

import { change, defineProvider, invalidConfig, localError, outputs, parseConfig, prompt, report } from "./lib/azd-provider.js";
import { Account, KINDS, RESOURCE_TYPES, sharedKeySigner, tokenSigner } from "./storage.js";

const OUTPUT_KEYS = [
  "AZURE_STORAGE_ACCOUNT_NAME",
  "AZURE_STORAGE_BLOB_ENDPOINT",
  "AZURE_STORAGE_QUEUE_ENDPOINT",
  "AZURE_STORAGE_TABLE_ENDPOINT",
  "AZURE_STORAGE_CONTAINERS",
  "AZURE_STORAGE_QUEUES",
  "AZURE_STORAGE_TABLES",
];
const CONFIG_KEYS = ["account", "auth", "endpoints", "containers", "queues", "tables"];
const LIST_KEY = { container: "containers", queue: "queues", table: "tables" };
const SERVICE_KEY = { container: "blob", queue: "queue", table: "table" };
const HELP = "Check infra.config in azure.yaml (examples/js-storage/README.md).";

/** What initialize learned; the host gives each layer a fresh instance. */
let account = null;
/** @type {[string, string][]} the declared resources: [kind, name], in the config's order */
let declared = [];
let ignoreDeploymentState = false;

function checkName(kind, name) {
  const ok = kind === "table"
    ? /^[A-Za-z][A-Za-z0-9]{2,62}$/.test(name) && name.toLowerCase() !== "tables"
    : /^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/.test(name);
  if (!ok) {
    throw invalidConfig(
      `${JSON.stringify(name)} is not a valid ${kind} name`,
      kind === "table"
        ? "A table name is 3 to 63 letters and digits, starting with a letter."
        : `A ${kind} name is 3 to 63 lower-case letters, digits and single dashes, starting and ending with a letter or digit.`,
    );
  }
}

function plural(n, noun) {
  return n === 1 ? `1 ${noun}` : `${n} ${noun}s`;
}

/** Every resource of the account, by kind. */
async function existing() {
  const found = {};
  for (const kind of KINDS) {
    found[kind] = declared.some(([k]) => k === kind) ? new Set(await account.list(kind)) : new Set();
  }
  return found;
}

function outputsFor(present) {
  const names = (kind) => present.filter(([k]) => k === kind).map(([, n]) => n);
  return outputs({
    AZURE_STORAGE_ACCOUNT_NAME: account.name,
    AZURE_STORAGE_BLOB_ENDPOINT: account.endpoints.container,
    AZURE_STORAGE_QUEUE_ENDPOINT: account.endpoints.queue,
    AZURE_STORAGE_TABLE_ENDPOINT: account.endpoints.table,
    AZURE_STORAGE_CONTAINERS: names("container"),
    AZURE_STORAGE_QUEUES: names("queue"),
    AZURE_STORAGE_TABLES: names("table"),
  });
}

export const provider = defineProvider({
  async initialize(_projectPath, options) {
    const config = parseConfig(options, ["account"]);
    const unknown = Object.keys(config).filter((k) => !CONFIG_KEYS.includes(k));
    if (unknown.length > 0) throw invalidConfig(`unknown config keys: ${unknown.join(", ")}`, `Known: ${CONFIG_KEYS.join(", ")}.`);
    const name = config.account;
    if (typeof name !== "string" || !/^[a-z0-9]{3,24}$/.test(name)) {
      throw localError(`${JSON.stringify(name)} is not a storage account name`, {
        code: "invalid_account",
        category: "validation",
        suggestion: "A storage account name is 3 to 24 lower-case letters and digits.",
      });
    }
    const auth = config.auth ?? "token";
    if (auth !== "token" && auth !== "shared-key") throw invalidConfig(`auth must be token or shared-key, not ${JSON.stringify(auth)}`, HELP);
    const given = /** @type {Record<string, unknown>} */ (config.endpoints ?? {});
    const endpoints = {};
    for (const kind of KINDS) {
      const key = SERVICE_KEY[kind];
      const value = given[key] ?? `https://${name}.${key}.core.windows.net`;
      if (typeof value !== "string" || !/^https?:\/\/[^/]+/.test(value)) throw invalidConfig(`endpoints.${key} is not an http(s) URL`, HELP);
      endpoints[kind] = value.replace(/\/+$/, "");
    }
    declared = [];
    for (const kind of KINDS) {
      const list = config[LIST_KEY[kind]] ?? [];
      if (!Array.isArray(list)) throw invalidConfig(`${LIST_KEY[kind]} must be a list of names`, HELP);
      for (const item of list) {
        checkName(kind, String(item));
        if (!declared.some(([k, n]) => k === kind && n === String(item))) declared.push([kind, String(item)]);
      }
    }
    const sign = auth === "shared-key" ? await sharedKeySigner(name) : tokenSigner();
    account = new Account(name, endpoints, sign);
    ignoreDeploymentState = options.ignoreDeploymentState;
  },

  async state() {
    const found = await existing();
    const present = declared.filter(([k, n]) => found[k].has(n));
    if (present.length === 0) return { outputs: [], resources: [] };
    return { outputs: outputsFor(present), resources: present.map(([k, n]) => ({ id: account.url(k, n) })) };
  },

  async preview() {
    report(`Comparing ${plural(declared.length, "declared resource")} with storage account ${account.name}`);
    const found = await existing();
    const changes = declared.map(([k, n]) => change(found[k].has(n) ? "NoChange" : "Create", n, RESOURCE_TYPES[k], account.url(k, n)));
    const creates = changes.filter((c) => c.changeType === "Create").length;
    const summary = `${creates} to create, ${declared.length - creates} unchanged in storage account ${account.name}`;
    report(summary);
    return { summary, parameters: [], outputs: outputsFor(declared), changes };
  },

  async deploy() {
    const found = await existing();
    let created = 0;
    for (const [kind, name] of declared) {
      if (found[kind].has(name)) {
        report(`The ${kind} ${name} exists`);
        continue;
      }
      report(`Creating ${kind} ${name}`);
      if (await account.create(kind, name)) created++;
    }
    const deployment = { parameters: [], outputs: outputsFor(declared) };
    const skipped = created === 0 && !ignoreDeploymentState;
    return { deployment, skippedReason: skipped ? "deployment-state" : "unspecified" };
  },

  async destroy(options) {
    const found = await existing();
    const targets = declared.filter(([k, n]) => found[k].has(n));
    if (targets.length > 0 && !options.force) {
      const listed = targets.map(([k, n]) => `${k} ${n}`).join(", ");
      const yes = prompt.confirm(`Delete ${plural(targets.length, "resource")} from storage account ${account.name} (${listed})?`, { default: false });
      if (!yes) {
        throw localError("the deletion was not confirmed, so nothing was deleted", {
          code: "not_confirmed",
          category: "user",
          suggestion: "run `azd down --force` to delete without asking",
        });
      }
    }
    for (const [kind, name] of targets) {
      report(`Deleting ${kind} ${name}`);
      await account.delete(kind, name);
    }
    return { invalidatedEnvKeys: OUTPUT_KEYS };
  },

  ensureEnv() {},

  parameters() {
    return [];
  },

  plannedOutputs() {
    return OUTPUT_KEYS.map((name) => ({ name }));
  },
});
