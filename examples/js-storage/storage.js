// One Azure Storage account through its REST API: list, create and delete containers (Blob
// service), queues (Queue service) and tables (Table service), each request signed with the
// account key (Shared Key, HMAC-SHA256 through crypto.subtle) or an access token from azd.
// `fetch` goes out over wasi:http and reaches only the origins provider.toml grants.

import { localError } from "./lib/azd-provider.js";
import { accessToken, env, httpError } from "./lib/azd-io.js";

const VERSION = "2021-12-02";
export const KEY_VARIABLE = "AZURE_STORAGE_KEY";
export const STORAGE_SCOPE = "https://storage.azure.com/.default";
const SERVICE = "Azure Storage";
/** A listing of more pages than this is refused instead of looping forever. */
const MAX_PAGES = 100;

/** @typedef {"container" | "queue" | "table"} Kind */
export const KINDS = /** @type {const} */ (["container", "queue", "table"]);
/** The resource types preview shows. */
export const RESOURCE_TYPES = {
  container: "Microsoft.Storage/storageAccounts/blobServices/containers",
  queue: "Microsoft.Storage/storageAccounts/queueServices/queues",
  table: "Microsoft.Storage/storageAccounts/tableServices/tables",
};

const encoder = new TextEncoder();

function base64(bytes) {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}

function fromBase64(text) {
  const raw = atob(text);
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

/** Shared Key: the account key signs a canonical form of each request. */
export async function sharedKeySigner(account) {
  const key = (env.get(KEY_VARIABLE) ?? "").trim();
  if (key === "") {
    throw localError(`\`auth: shared-key\` needs the account key in ${KEY_VARIABLE}, which is not set`, {
      code: "no_storage_key",
      category: "auth",
      suggestion: `export ${KEY_VARIABLE}=<key> before running azd (and keep ${KEY_VARIABLE} in the manifest's [policy] env), or use \`auth: token\``,
    });
  }
  let raw;
  try {
    raw = fromBase64(key);
  } catch {
    throw localError(`${KEY_VARIABLE} is not a base64 account key`, { code: "invalid_storage_key", category: "auth" });
  }
  const hmac = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return async (method, url, headers, table) => {
    const text = table ? tableStringToSign(method, url, headers, account) : stringToSign(method, url, headers, account);
    const signature = new Uint8Array(await crypto.subtle.sign("HMAC", hmac, encoder.encode(text)));
    headers.authorization = `SharedKey ${account}:${base64(signature)}`;
  };
}

/** A bearer token from azd's sign-in, for Azure accounts (`auth: token`). */
export function tokenSigner() {
  return async (_method, _url, headers) => {
    headers.authorization = `Bearer ${accessToken(STORAGE_SCOPE).token}`;
  };
}

function canonicalResource(url, account) {
  return `/${account}${url.pathname || "/"}`;
}

/** The Blob and Queue services' string to sign. */
function stringToSign(method, url, headers, account) {
  const get = (name) => headers[name] ?? "";
  const lines = [method];
  for (const name of ["content-encoding", "content-language", "content-length", "content-md5", "content-type", "date",
    "if-modified-since", "if-match", "if-none-match", "if-unmodified-since", "range"]) {
    const value = get(name);
    lines.push(name === "content-length" && value === "0" ? "" : value);
  }
  const ms = Object.keys(headers).filter((k) => k.startsWith("x-ms-")).sort();
  let text = lines.join("\n") + "\n" + ms.map((k) => `${k}:${headers[k].trim()}\n`).join("");
  text += canonicalResource(url, account);
  const params = new Map();
  for (const [k, v] of url.searchParams) {
    const name = k.toLowerCase();
    params.set(name, [...(params.get(name) ?? []), v]);
  }
  for (const name of [...params.keys()].sort()) text += `\n${name}:${params.get(name).join(",")}`;
  return text;
}

/** The Table service's string to sign (Shared Key for tables). */
function tableStringToSign(method, url, headers, account) {
  const comp = url.searchParams.get("comp");
  return [method, headers["content-md5"] ?? "", headers["content-type"] ?? "", headers["x-ms-date"],
    canonicalResource(url, account) + (comp ? `?comp=${comp}` : "")].join("\n");
}

export class Account {
  /**
   * @param {string} name
   * @param {Record<Kind, string>} endpoints
   * @param {(method: string, url: URL, headers: Record<string, string>, table: boolean) => Promise<void>} sign
   */
  constructor(name, endpoints, sign) {
    this.name = name;
    this.endpoints = endpoints;
    this.sign = sign;
  }

  /** Where a resource lives (its id in azd's state and preview). */
  url(kind, name) {
    return kind === "table" ? `${this.endpoints.table}/Tables('${name}')` : `${this.endpoints[kind]}/${name}`;
  }

  async request(method, url, { table = false, body = undefined, accept = undefined } = {}) {
    const headers = { "x-ms-date": new Date().toUTCString(), "x-ms-version": VERSION };
    if (table) {
      headers.accept = accept ?? "application/json;odata=nometadata";
      headers.dataserviceversion = "3.0;NetFx";
    }
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(encoder.encode(body).length);
    } else if (method === "PUT" || method === "POST") {
      headers["content-length"] = "0";
    }
    const target = new URL(url);
    await this.sign(method, target, headers, table);
    let response;
    try {
      response = await fetch(target.href, { method, headers, body });
    } catch (e) {
      throw localError(`${SERVICE} at ${target.origin} is unreachable: ${e?.message ?? e}`, {
        code: "unavailable",
        category: "dependency",
        suggestion: "Check the endpoints in azure.yaml (is Azurite running?) and that provider.toml's [policy.http] allows them.",
      });
    }
    return response;
  }

  /** The names of every resource of `kind` in the account. */
  async list(kind) {
    const names = [];
    let marker = "";
    for (let page = 0; page < MAX_PAGES; page++) {
      if (kind === "table") {
        const url = `${this.endpoints.table}/Tables${marker ? `?NextTableName=${encodeURIComponent(marker)}` : ""}`;
        const r = await this.request("GET", url, { table: true });
        if (!r.ok) throw await refused(r);
        const json = await r.json();
        names.push(...(json.value ?? []).map((t) => t.TableName));
        marker = r.headers.get("x-ms-continuation-nexttablename") ?? "";
      } else {
        const url = `${this.endpoints[kind]}/?comp=list${marker ? `&marker=${encodeURIComponent(marker)}` : ""}`;
        const r = await this.request("GET", url);
        if (!r.ok) throw await refused(r);
        const xml = await r.text();
        const tag = kind === "container" ? "Container" : "Queue";
        for (const m of xml.matchAll(new RegExp(`<${tag}>\\s*<Name>([^<]*)</Name>`, "g"))) names.push(unescapeXml(m[1]));
        marker = /<NextMarker>([^<]*)<\/NextMarker>/.exec(xml)?.[1] ?? "";
      }
      if (marker === "") return names;
    }
    throw localError(`${SERVICE} listed more than ${MAX_PAGES} pages of ${kind}s`, { code: "too_many_pages", category: "dependency" });
  }

  /** Creates a resource; false when it existed already (someone made it meanwhile). */
  async create(kind, name) {
    const r = kind === "table"
      ? await this.request("POST", `${this.endpoints.table}/Tables`, { table: true, body: JSON.stringify({ TableName: name }) })
      : await this.request("PUT", `${this.endpoints[kind]}/${name}${kind === "container" ? "?restype=container" : ""}`);
    if (r.status === 409) return false;
    if (!r.ok) throw await refused(r);
    return true;
  }

  async delete(kind, name) {
    const r = kind === "table"
      ? await this.request("DELETE", `${this.endpoints.table}/Tables('${name}')`, { table: true })
      : await this.request("DELETE", `${this.endpoints[kind]}/${name}${kind === "container" ? "?restype=container" : ""}`);
    if (r.status === 404) return;
    if (!r.ok) throw await refused(r);
  }
}

/** A failed answer as azd's service error; a refusal of the credentials says what to check. */
function refused(response) {
  const denied = response.status === 401 || response.status === 403;
  return httpError(response, SERVICE, {
    suggestion: denied
      ? `The storage account refused the credentials: check ${KEY_VARIABLE} (auth: shared-key), or that you hold a data role on the account (auth: token).`
      : "",
  });
}

function unescapeXml(text) {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");
}
