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

/** A running `svc emulator`, as its start line describes it. The key, the tokens and the start
 * line itself are private fields behind getters, not own properties: no printer or diff
 * (util.inspect, node:assert, Vitest's, Jest's) that walks an object's keys shows them. */
class Emulator {
  #startup;
  #apiKey;
  #resourceTokens;
  #uiUrl;

  constructor(startup) {
    this.#startup = startup;
    this.#apiKey = startup.api_key;
    this.#resourceTokens = { ...(startup.resource_tokens || {}) };
    this.#uiUrl = startup.ui_url || "";
    this.apiBaseUrl = String(startup.api_base_url).replace(/\/$/, "");
    this.appBaseUrl = String(startup.app_base_url).replace(/\/$/, "");
    this.project = startup.project;
    this.environment = startup.environment;
    this.startupFile = null;
    // The process and the file this object started: not printed either.
    Object.defineProperty(this, "_child", { value: null, writable: true, enumerable: false });
    Object.defineProperty(this, "_file", { value: null, writable: true, enumerable: false });
  }

  /** The start line, as the emulator printed it. */
  get startup() {
    return this.#startup;
  }

  /** The project's API key. */
  get apiKey() {
    return this.#apiKey;
  }

  /** Every resource's static token, by resource name. */
  get resourceTokens() {
    return this.#resourceTokens;
  }

  /** The web page's sign-in link (it holds a token). */
  get uiUrl() {
    return this.#uiUrl;
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

  /** Stops the emulator this object started, and removes its start-line file (if it is still
   * the file made at start: one that took its place, someone else's, is left alone; a removal
   * never fails the stop). */
  async stop() {
    const child = this._child;
    this._child = null;
    started.delete(this);
    if (child && child.exitCode === null && child.signalCode === null) {
      child.ref();
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (child) child.stdin.destroy();
    if (this._file) {
      removeOwn(this._file);
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

/** The start-line files this package and the Python one make: `svc-emulator-<pid>-<random>.json`
 * in the temporary folder, `<pid>` the starter's. */
const STARTUP_FILE = /^svc-emulator-([1-9][0-9]*)-[0-9a-f]{24}\.json$/;

/** The emulators `start` started and has not stopped. */
const started = new Set();

/** A file this package made, by path: its device, inode, owner and change time once written
 * (an inode number freed is soon another file's; a change time is no one's to set). */
const madeFiles = new Map();

function identity(stat) {
  return `${stat.dev}:${stat.ino}:${stat.uid}:${stat.ctimeNs}`;
}

/** Removes `file` if it is still the file this package made there; never throws. */
function removeOwn(file) {
  const made = madeFiles.get(file);
  madeFiles.delete(file);
  try {
    const now = fs.lstatSync(file, { bigint: true });
    if (made && now.isFile() && identity(now) === made) fs.unlinkSync(file);
  } catch {
    // Gone already (the emulator removes it), or not ours to remove.
  }
}

/** Removes the start-line files (this user's own regular files, named exactly so) whose starter
 * no longer runs: those of an emulator killed with its starter (SIGKILL of a process group), which
 * could not remove its file. Never throws. Not on Windows. */
function removeStale() {
  if (process.platform === "win32" || typeof process.getuid !== "function") return;
  const dir = os.tmpdir();
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const match = STARTUP_FILE.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    if (!Number.isSafeInteger(pid) || running(pid)) continue;
    const file = path.join(dir, name);
    try {
      const stat = fs.lstatSync(file);
      if (stat.isFile() && stat.uid === process.getuid()) fs.unlinkSync(file);
    } catch {
      // Gone, or not ours.
    }
  }
}

/** Whether a process `pid` runs (one of another user's included). */
function running(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** This process's environment without its SVC_EMULATOR_* variables: the emulator's flags come
 * from `config` and `args`, never from a variable a user set for something else. */
function emulatorEnv() {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.toUpperCase().startsWith("SVC_EMULATOR_")) env[name] = value;
  }
  return env;
}

let parentWatch = null;

/** Stops the emulators `start` started once this process's parent is gone (a test runner killed
 * while its worker, this process, lives on): its parent process id changes, or its IPC channel
 * ends. Neither keeps this process running. */
function watchParent() {
  if (parentWatch) return;
  const parent = process.ppid;
  const stopAll = () => {
    for (const emulator of [...started]) emulator.stop().catch(() => {});
    unwatchParent();
  };
  const onDisconnect = () => stopAll();
  const timer = setInterval(() => {
    if (process.ppid !== parent) stopAll();
  }, 500);
  timer.unref();
  if (process.connected) process.once("disconnect", onDisconnect);
  parentWatch = { timer, onDisconnect };
}

function unwatchParent() {
  if (!parentWatch) return;
  clearInterval(parentWatch.timer);
  process.removeListener("disconnect", parentWatch.onDisconnect);
  parentWatch = null;
}

/** Starts `svc emulator` (the demo project, or the projects of the JSON `config` file) with its
 * other flags `args`, and resolves once it accepts connections. Its environment is `env`, else
 * this process's without its SVC_EMULATOR_* variables. */
function start({ config, args = [], env } = {}) {
  return new Promise((resolve, reject) => {
    const svc = binaryPath();
    removeStale();
    // The start line's file, made now (empty, readable by its owner only) so that the emulator
    // is told to remove it when it stops: it is gone even if this process is killed.
    const file = path.join(
      os.tmpdir(),
      `svc-emulator-${process.pid}-${crypto.randomBytes(12).toString("hex")}.json`,
    );
    let descriptor = fs.openSync(file, "wx", 0o600);
    madeFiles.set(file, identity(fs.fstatSync(descriptor, { bigint: true })));
    const abandon = () => {
      if (descriptor !== null) fs.closeSync(descriptor);
      descriptor = null;
      removeOwn(file);
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
      child = spawn(svc, command, { stdio: ["pipe", "pipe", "pipe"], env: env || emulatorEnv() });
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
        madeFiles.set(file, identity(fs.fstatSync(descriptor, { bigint: true })));
      } catch (error) {
        child.kill("SIGKILL");
        fail(error);
        return;
      }
      settled = true;
      stderr = "";
      fs.closeSync(descriptor);
      descriptor = null;
      emulator._child = child;
      emulator._file = file;
      emulator.startupFile = file;
      // The emulator does not keep this process running (an emulator never stopped, a Jest
      // run without its globalTeardown): when it ends, the emulator's stdin ends, and so does
      // the emulator.
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) {
        if (stream && typeof stream.unref === "function") stream.unref();
      }
      started.add(emulator);
      watchParent();
      child.once("exit", () => {
        started.delete(emulator);
        if (started.size === 0) unwatchParent();
      });
      // Stopped with this process, however it ends (its end, Ctrl-C, SIGTERM): no emulator
      // outlives its suite, no start-line file stays. (SIGKILL runs nothing here: the emulator
      // sees its stdin end, and stops and removes the file itself.)
      const cleanUp = () => {
        if (emulator._child) emulator._child.kill("SIGTERM");
        if (emulator._file) removeOwn(emulator._file);
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
