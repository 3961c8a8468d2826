// Files, environment variables, azd's access tokens and HTTP errors for JavaScript providers built with
// ComponentizeJS (the default engine of `azd-wasm-host build`; not QuickJS, which has no
// such imports). `fetch` itself is JavaScript's own: it goes out over wasi:http, and
// reaches only the origins `[policy.http] allow` grants in provider.toml.
//
//   import { files, accessToken, httpError } from "./lib/azd-io.js";
//   const out = files.dir("localinfra");          // a folder `[policy] fs` grants
//   out.writeText("settings.json", JSON.stringify(settings));
//   const key = env.get("AZURE_STORAGE_KEY");      // a variable `[policy] env` grants, or null
//   const { token } = accessToken("https://storage.azure.com/.default");
//   const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
//   if (!r.ok) throw await httpError(r, "Azure Storage");

import * as credentialsApi from "azd:credentials/credentials@0.1.0";
import * as environmentApi from "wasi:cli/environment@0.2.12";
import * as preopens from "wasi:filesystem/preopens@0.2.12";
import { callImport, localError, serviceError } from "./azd-provider.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** How much one read asks for. */
const CHUNK = 64n * 1024n;

/**
 * A file error as an error record azd shows: what was done, to which file, and why
 * (`no-entry`, `access`, ...; wasi:filesystem's error codes).
 * @param {string} what
 * @param {string} path
 * @param {unknown} e
 */
function fileError(what, path, e) {
  const code = /** @type {any} */ (e)?.payload ?? (e instanceof Error ? e.message : String(e));
  return localError(`cannot ${what} ${path}: ${code}`, {
    code: code === "no-entry" ? "file_not_found" : "file_error",
    category: code === "access" || code === "not-permitted" ? "auth" : "local",
  });
}

/**
 * A folder the policy grants (`[policy] fs`), by the path the grant names (`"localinfra"`,
 * `".azure/{env}"` as expanded, or `"."`). Paths inside it are relative, with `/`; the
 * sandbox refuses `..` out of it and symbolic links.
 */
export class Dir {
  /** @param {any} descriptor @param {string} path */
  constructor(descriptor, path) {
    this.descriptor = descriptor;
    this.path = path;
  }

  /** @param {string} name @returns {Uint8Array} */
  readBytes(name) {
    let file;
    try {
      file = this.descriptor.openAt({ symlinkFollow: false }, name, {}, { read: true });
    } catch (e) {
      throw fileError("open", `${this.path}/${name}`, e);
    }
    const chunks = [];
    let offset = 0n;
    let total = 0;
    for (;;) {
      const [data, end] = file.read(CHUNK, offset);
      chunks.push(data);
      offset += BigInt(data.length);
      total += data.length;
      if (end || data.length === 0) break;
    }
    const all = new Uint8Array(total);
    let at = 0;
    for (const chunk of chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    return all;
  }

  /** @param {string} name @returns {string} */
  readText(name) {
    return decoder.decode(this.readBytes(name));
  }

  /** @param {string} name @returns {unknown} */
  readJson(name) {
    return JSON.parse(this.readText(name));
  }

  /**
   * Writes `bytes` as the whole file `name` (created, or truncated first).
   * @param {string} name
   * @param {Uint8Array} bytes
   */
  writeBytes(name, bytes) {
    let file;
    try {
      file = this.descriptor.openAt({ symlinkFollow: false }, name, { create: true, truncate: true }, { write: true });
    } catch (e) {
      throw fileError("create", `${this.path}/${name}`, e);
    }
    let done = 0;
    while (done < bytes.length) {
      done += Number(file.write(bytes.subarray(done), BigInt(done)));
    }
  }

  /** @param {string} name @param {string} text */
  writeText(name, text) {
    this.writeBytes(name, encoder.encode(String(text)));
  }

  /** @param {string} name @param {unknown} value */
  writeJson(name, value) {
    this.writeText(name, `${JSON.stringify(value, null, 2)}\n`);
  }

  /** Whether `name` exists. @param {string} name @returns {boolean} */
  exists(name) {
    try {
      this.descriptor.statAt({ symlinkFollow: false }, name);
      return true;
    } catch (e) {
      if (/** @type {any} */ (e)?.payload === "no-entry") return false;
      throw fileError("look at", `${this.path}/${name}`, e);
    }
  }

  /** Removes the file `name`; false when there was none. @param {string} name @returns {boolean} */
  remove(name) {
    try {
      this.descriptor.unlinkFileAt(name);
      return true;
    } catch (e) {
      if (/** @type {any} */ (e)?.payload === "no-entry") return false;
      throw fileError("remove", `${this.path}/${name}`, e);
    }
  }

  /** The names in the folder, sorted. @returns {string[]} */
  list() {
    const names = [];
    const stream = this.descriptor.readDirectory();
    for (let entry = stream.readDirectoryEntry(); entry; entry = stream.readDirectoryEntry()) {
      names.push(entry.name);
    }
    return names.sort();
  }
}

/**
 * The environment variables `[policy] env` grants in provider.toml (the host passes no other).
 */
export const env = {
  /**
   * One variable's value, or `null` when it is not set or not granted.
   * @param {string} name
   * @returns {string | null}
   */
  get(name) {
    const found = environmentApi.getEnvironment().find(([key]) => key === String(name));
    return found ? found[1] : null;
  },
};

export const files = {
  /**
   * The granted folder `path`. Throws an `fs_not_granted` error naming the grants there are.
   * @param {string} path
   * @returns {Dir}
   */
  dir(path) {
    const wanted = String(path).replace(/\/+$/, "") || ".";
    const granted = preopens.getDirectories();
    const found = granted.find(([, p]) => p === wanted || p.endsWith(`/${wanted}`) || (wanted === "." && p === "/"));
    if (!found) {
      const have = granted.map(([, p]) => p).join(", ") || "none";
      throw localError(`no folder ${wanted} is granted (granted: ${have})`, {
        code: "fs_not_granted",
        category: "auth",
        suggestion: `Grant it in provider.toml: fs = [{ path = "${wanted}", access = "read-write" }] under [policy].`,
      });
    }
    return new Dir(found[0], wanted);
  },
};

/**
 * An access token for `scope` from azd's sign-in (world import `azd:credentials`), granted by
 * `[policy.azd] credential_scopes`. Never log it.
 * @param {string} scope
 * @returns {{ token: string, expiresOn: bigint }}
 */
export function accessToken(scope) {
  try {
    return callImport(() => credentialsApi.getToken(String(scope)));
  } catch (e) {
    // A credential-error record ({ code, message }): as the error azd shows.
    const failure = /** @type {any} */ (e);
    if (typeof failure?.code === "string" && typeof failure?.message === "string") {
      throw localError(failure.message, { code: failure.code.replaceAll("-", "_"), category: "auth" });
    }
    throw e;
  }
}

/**
 * An HTTP answer that is not a success as the error azd shows: the status, the service's
 * own error code (`x-ms-error-code`, or `code` / `error.code` in a JSON body, or `<Code>` in
 * an XML one) and message.
 * @param {Response} response
 * @param {string} serviceName
 * @param {{ suggestion?: string }} [more]
 * @returns {Promise<ReturnType<typeof serviceError>>}
 */
export async function httpError(response, serviceName, { suggestion = "" } = {}) {
  const body = await response.text();
  let code = response.headers.get("x-ms-error-code") ?? "";
  let message = body.trim().slice(0, 500);
  try {
    const json = JSON.parse(body);
    code ||= json?.error?.code ?? json?.code ?? "";
    message = json?.error?.message ?? json?.message ?? message;
  } catch {
    // Not JSON: XML as Azure Storage writes errors, else the text as it came.
    const tag = (name) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(body)?.[1]?.trim();
    code ||= tag("Code") ?? "";
    message = tag("Message") ?? message;
  }
  return serviceError(`${serviceName}: ${response.status} ${code || response.statusText}${message ? `: ${message}` : ""}`, {
    errorCode: code || `http_${response.status}`,
    statusCode: response.status,
    serviceName,
    suggestion,
  });
}
