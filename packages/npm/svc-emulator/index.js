"use strict";
// The svc platform's REST API emulator for JavaScript test suites: the `svc` binary of the
// platform package npm chose (svc-emulator-<os>-<cpu>), started as `svc emulator`, and its
// emulator-only routes (resets, the request journal and its expectations). No dependency but
// the platform package; Node 18 or later (its global fetch).
//
// An emulator `start` starts ends with this process, however it ends: its stdin is a pipe only
// this process holds (`svc emulator --exit-with-stdin`), and it removes its start-line file
// itself when it stops (`--remove-on-exit`), SIGKILL of node included.

const { spawn } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");

/** The platform packages, by `${process.platform}-${process.arch}`. */
const PLATFORMS = {
  "darwin-arm64": "svc-emulator-darwin-arm64",
  "darwin-x64": "svc-emulator-darwin-x64",
  "linux-arm64": "svc-emulator-linux-arm64",
  "linux-x64": "svc-emulator-linux-x64",
  "win32-x64": "svc-emulator-win32-x64",
};

class EmulatorError extends Error {}

/** The path of the `svc` binary: SVC_BIN when set, else the platform package's, from this
 * package's own install (see `installedWith`). */
function binaryPath() {
  if (process.env.SVC_BIN) return process.env.SVC_BIN;
  const platform = `${process.platform}-${process.arch}`;
  const name = PLATFORMS[platform];
  if (!name) {
    throw new EmulatorError(
      `svc-emulator has no binary for ${platform} (it has ${Object.keys(PLATFORMS).join(", ")}): ` +
        "set SVC_BIN to the path of an svc binary",
    );
  }
  const file = process.platform === "win32" ? "svc.exe" : "svc";
  const found = installedWith(`${name}/bin/${file}`);
  if (found) return found;
  throw new EmulatorError(
    `the package ${name} is not installed: npm installs it with svc-emulator unless optional ` +
      "dependencies are left out (--omit=optional, --no-optional); install it, or set SVC_BIN",
  );
}

/** The file `request` (a package's name, then a path in it) of a dependency installed with this
 * package, or null: in its own node_modules folder, else beside it in the node_modules folder
 * it is installed in (hoisted, by npm, yarn or pnpm); never in a folder above, where
 * `require.resolve` would climb to any parent folder's node_modules and run whatever is there.
 * Under Yarn Plug'n'Play, whose resolution gives a package its own dependencies only, that. */
function installedWith(request) {
  if (process.versions.pnp) {
    try {
      return require.resolve(request);
    } catch {
      return null;
    }
  }
  // This file is at the package's root; node resolved the symlinks to it (pnpm's, npm link's).
  const own = __dirname;
  const folders = [path.join(own, "node_modules")];
  if (path.basename(path.dirname(own)) === "node_modules") folders.push(path.dirname(own));
  for (const folder of folders) {
    const candidate = path.join(folder, ...request.split("/"));
    if (fs.existsSync(candidate)) return candidate;
  }
  return null;
}

/** A running `svc emulator`, as its start line describes it. */
class Emulator {
  constructor(startup) {
    this.startup = startup;
    this.apiBaseUrl = String(startup.api_base_url).replace(/\/$/, "");
    this.appBaseUrl = String(startup.app_base_url).replace(/\/$/, "");
    this.project = startup.project;
    this.environment = startup.environment;
    this.apiKey = startup.api_key;
    this.resourceTokens = { ...(startup.resource_tokens || {}) };
    this.uiUrl = startup.ui_url || "";
    this.startupFile = null;
    this._child = null;
    this._file = null;
  }

  /** The variables `svc` and the platform's clients read, as `svc emulator exec` sets them. */
  env() {
    const env = {
      SVC_API_BASE_URL: this.apiBaseUrl,
      SVC_APP_BASE_URL: this.appBaseUrl,
      SVC_PROJECT: this.project,
      SVC_ENVIRONMENT: this.environment,
      SVC_API_KEY: this.apiKey,
      SVC_EMULATOR_STARTUP: JSON.stringify(this.startup),
    };
    if (this.resourceTokens.__svc_app__) env.SVC_TOOLS_TOKEN = this.resourceTokens.__svc_app__;
    return env;
  }

  /** One request to the data host (`/api/...` for the application host) with the API key, or
   * the Authorization value `auth`: `{status, body}` (`body` null when empty). */
  async request(method, path_, body, auth) {
    const response = await fetch(this.apiBaseUrl + path_, {
      method,
      headers: {
        Authorization: auth || `Bearer ${this.apiKey}`,
        "Content-Type": "application/json",
      },
      body: body === undefined || body === null ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  async _fixture(method, tail, project) {
    const route = `/_emulator/projects/${encodeURIComponent(project || this.project)}/${tail}`;
    const { status, body } = await this.request(method, route);
    if (status >= 300) {
      throw new EmulatorError(`${method} ${route} answered ${status}: ${body && body.error}`);
    }
    return body;
  }

  /** Puts the project back in its state at start: what was put back. */
  reset(project) {
    return this._fixture("POST", "reset", project);
  }

  /** A reset, and the project's request journal emptied: what each test starts from. */
  async startOver(project) {
    await this.reset(project);
    await this._fixture("DELETE", "requests", project);
  }

  /** The project's requests in the journal, oldest first, filtered as its route filters them. */
  async requests(filters = {}) {
    const query = new URLSearchParams(filters).toString();
    const answer = await this._fixture("GET", `requests${query ? `?${query}` : ""}`);
    return answer.requests;
  }

  /** An expectation over the journal (the same filters, and at_least, at_most or exactly). */
  expect(matcher = {}) {
    const query = new URLSearchParams(matcher).toString();
    return this._fixture("GET", `requests/expect${query ? `?${query}` : ""}`);
  }

  /** Throws the expectation's report (its near misses) unless it is met. */
  async assertReceived(matcher = {}) {
    const answer = await this.expect(matcher);
    if (!answer.met) throw new Error(answer.report || answer.expected);
  }

  /** Stops the emulator this object started, and removes its start-line file. */
  async stop() {
    const child = this._child;
    this._child = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (child) child.stdin.destroy();
    if (this._file) {
      fs.rmSync(this._file, { force: true });
      this._file = null;
      this.startupFile = null;
    }
  }

  /** Never the key or the tokens: an object printed ends up in test reports. */
  toJSON() {
    return { apiBaseUrl: this.apiBaseUrl, project: this.project };
  }

  [Symbol.for("nodejs.util.inspect.custom")]() {
    return `Emulator { apiBaseUrl: '${this.apiBaseUrl}', project: '${this.project}' }`;
  }
}

/** Starts `svc emulator` (the demo project, or the projects of the JSON `config` file) with its
 * other flags `args`, and resolves once it accepts connections. */
function start({ config, args = [], env } = {}) {
  return new Promise((resolve, reject) => {
    const svc = binaryPath();
    // The start line's file, made now (empty, readable by its owner only) so that the emulator
    // is told to remove it when it stops: it is gone even if this process is killed.
    const file = path.join(
      os.tmpdir(),
      `svc-emulator-${process.pid}-${crypto.randomBytes(12).toString("hex")}.json`,
    );
    let descriptor = fs.openSync(file, "wx", 0o600);
    const abandon = () => {
      if (descriptor !== null) fs.closeSync(descriptor);
      descriptor = null;
      fs.rmSync(file, { force: true });
    };
    const command = [
      "emulator",
      // Stops when its stdin, a pipe only this process holds, ends: when this process ends.
      "--exit-with-stdin",
      "--remove-on-exit",
      file,
      ...(config ? ["--config", config] : []),
      ...args,
    ];
    let child;
    try {
      child = spawn(svc, command, { stdio: ["pipe", "pipe", "pipe"], env: env || process.env });
    } catch (error) {
      abandon();
      throw error;
    }
    // Never written to: nothing of it may throw.
    child.stdin.on("error", () => {});
    let settled = false;
    const fail = (error) => {
      if (settled) return;
      settled = true;
      abandon();
      reject(error);
    };
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      process.stderr.write(chunk);
    });
    const lines = readline.createInterface({ input: child.stdout });
    child.once("error", (e) => fail(new EmulatorError(`cannot run svc: ${e.message}`)));
    child.once("exit", (code) =>
      fail(new EmulatorError(`svc emulator did not start (exit ${code}): ${stderr.trim()}`)),
    );
    lines.once("line", (line) => {
      if (settled) return;
      let emulator;
      try {
        emulator = new Emulator(JSON.parse(line));
        fs.writeSync(descriptor, line);
      } catch (error) {
        child.kill("SIGKILL");
        fail(error);
        return;
      }
      settled = true;
      fs.closeSync(descriptor);
      descriptor = null;
      emulator._child = child;
      emulator._file = file;
      emulator.startupFile = file;
      // Stopped with this process, however it ends (its end, Ctrl-C, SIGTERM): no emulator
      // outlives its suite, no start-line file stays. (SIGKILL runs nothing here: the emulator
      // sees its stdin end, and stops and removes the file itself.)
      const cleanUp = () => {
        if (emulator._child) emulator._child.kill("SIGTERM");
        if (emulator._file) fs.rmSync(emulator._file, { force: true });
      };
      process.once("exit", cleanUp);
      for (const signal of ["SIGINT", "SIGTERM"]) {
        const onSignal = () => {
          cleanUp();
          // The signal's own end, unless someone else (a test runner) handles it.
          if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
        };
        process.once(signal, onSignal);
        child.once("exit", () => process.removeListener(signal, onSignal));
      }
      resolve(emulator);
    });
  });
}

/** The emulator another process started (`svc emulator exec`, a globalSetup): from its start
 * line in SVC_EMULATOR_STARTUP; null without one. */
function connect() {
  const line = process.env.SVC_EMULATOR_STARTUP;
  return line ? new Emulator(JSON.parse(line)) : null;
}

module.exports = { Emulator, EmulatorError, binaryPath, connect, start };
