// The svc-emulator npm packages, installed from their tarballs into a fresh project with no
// Rust toolchain: run with `node --test node-suite.mjs` by `cargo xtask ci` (xtask/src/dist.rs).
import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { inspect } from "node:util";
import { binaryPath, start, Emulator, EmulatorError } from "svc-emulator";

const PRODUCTS = "/projects/demo/prod/shop/models/products";
let emulator;
let count;

before(async () => {
  emulator = await start();
  count = (await emulator.request("GET", PRODUCTS)).body.count;
});
beforeEach(() => emulator.startOver());
after(() => emulator.stop());

test("no Rust toolchain is needed", { skip: !process.env.SVC_DIST_CHECK }, () => {
  for (const tool of ["cargo", "rustc"]) {
    assert.throws(() => execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" }));
  }
});

test("the platform package brings svc, and the launcher runs it", () => {
  assert.match(binaryPath(), /svc-emulator-linux-x64/);
  assert.match(execFileSync("npx", ["--no-install", "svc", "--version"], { encoding: "utf8" }), /^svc /);
});

test("the demo, its URLs and key, never printed", () => {
  assert.equal(emulator.project, "demo");
  assert.equal(emulator.appBaseUrl, `${emulator.apiBaseUrl}/api`);
  assert.equal(emulator.env().SVC_API_KEY, emulator.apiKey);
  assert.ok(!inspect(emulator).includes(emulator.apiKey));
  assert.ok(!JSON.stringify(emulator).includes(emulator.apiKey));
  assert.equal(statSync(emulator.startupFile).mode & 0o777, 0o600);
});

test("a create is in the journal, and expectations say what they missed", async () => {
  const { status } = await emulator.request("POST", PRODUCTS, { sku: "LAMP-1", name: "Lamp", price: 9.5 });
  assert.equal(status, 201);
  const posted = await emulator.requests({ method: "POST", model: "products" });
  assert.equal(posted.length, 1);
  await emulator.assertReceived({ method: "POST", model: "products", exactly: 1 });
  await assert.rejects(emulator.assertReceived({ method: "DELETE", model: "products" }));
});

test("each test starts from the state at start", async () => {
  assert.deepEqual(await emulator.requests(), []);
  assert.equal((await emulator.request("GET", PRODUCTS)).body.count, count);
});

test("an emulator of its own removes its start-line file when stopped", async () => {
  const own = await start();
  const file = own.startupFile;
  assert.ok(existsSync(file));
  await own.stop();
  assert.ok(!existsSync(file));
  await own.stop();
});

/** The key, the tokens and the sign-in link's token of `emulator`: never to be printed. */
function secretsOf(emulator) {
  const token = /[?&]token=([^&#]+)/.exec(emulator.uiUrl);
  return [emulator.apiKey, ...Object.values(emulator.resourceTokens), ...(token ? [token[1]] : [])]
    .filter(Boolean);
}

test("node:assert's diffs and util.inspect's plain output hold no key or token", () => {
  const secrets = secretsOf(emulator);
  assert.ok(secrets.length >= 3, JSON.stringify(secrets.length));
  const connected = new Emulator(emulator.startup);
  const printed = [
    inspect(emulator, { customInspect: false, depth: Infinity }),
    inspect(connected, { customInspect: false, depth: Infinity }),
    inspect(connected, { customInspect: false, depth: Infinity, showHidden: true }),
  ];
  for (const [actual, expected] of [[emulator, null], [connected, null], [connected, {}]]) {
    try {
      assert.deepStrictEqual(actual, expected);
      assert.fail("equal");
    } catch (error) {
      printed.push(String(error.message));
    }
    try {
      assert.deepEqual(actual, expected);
      assert.fail("equal");
    } catch (error) {
      printed.push(String(error.message));
    }
  }
  for (const text of printed) {
    assert.ok(text.includes(emulator.apiBaseUrl), text);
    for (const secret of secrets) assert.ok(!text.includes(secret), "a key or token printed");
  }
  // The public API is the same.
  assert.equal(connected.apiKey, emulator.apiKey);
  assert.deepEqual(connected.resourceTokens, emulator.resourceTokens);
  assert.equal(connected.uiUrl, emulator.uiUrl);
  assert.equal(connected.startup.api_key, emulator.apiKey);
  assert.equal(JSON.parse(connected.env().SVC_EMULATOR_STARTUP).api_key, emulator.apiKey);
});

test("SVC_EMULATOR_* variables of this process are not the emulator's; an explicit env is", async () => {
  const missing = join(tmpdir(), `no-such-config-${randomBytes(6).toString("hex")}.json`);
  const saved = { ...process.env };
  process.env.SVC_EMULATOR_CONFIG = missing;
  process.env.SVC_EMULATOR_JOURNAL_CAPACITY = "0";
  try {
    const own = await start();
    try {
      assert.equal(own.project, "demo");
      await own.request("GET", PRODUCTS);
      assert.equal((await own.requests()).length, 1);
    } finally {
      await own.stop();
    }
    await assert.rejects(start({ env: { ...process.env } }), (error) => {
      assert.ok(error instanceof EmulatorError);
      assert.ok(error.message.includes(missing), error.message);
      return true;
    });
  } finally {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  }
});

test("stop leaves alone a file that replaced the start-line file, and does not fail", async () => {
  for (const replace of [(file) => writeFileSync(file, "someone else's"), (file) => mkdirSync(file)]) {
    const own = await start();
    const file = own.startupFile;
    try {
      // The emulator ends (and removes its file), then someone else's file takes the path.
      process.kill(own._child.pid, "SIGTERM");
      assert.ok(await ended(own._child.pid));
      assert.ok(await within(() => !existsSync(file)), file);
      // The file's inode number, free again, is the next file's: not the replacement's.
      writeFileSync(`${file}.spacer`, "");
      replace(file);
      await own.stop();
      assert.ok(existsSync(file), "the other file was removed");
    } finally {
      rmSync(file, { recursive: true, force: true });
      rmSync(`${file}.spacer`, { force: true });
    }
  }
});

test("a start removes the start-line files of starters no longer running, and only those", async () => {
  const dead = spawnSync(process.execPath, ["-e", ""]).pid;
  assert.ok(gone(dead));
  const name = (pid) => join(tmpdir(), `svc-emulator-${pid}-${randomBytes(12).toString("hex")}.json`);
  const stale = name(dead);
  const live = name(process.pid);
  const other = `${name(dead)}.kept`;
  const files = [stale, live, other];
  for (const file of files) writeFileSync(file, "{}", { mode: 0o600 });
  try {
    const own = await start();
    await own.stop();
    assert.ok(!existsSync(stale), `${stale} is left`);
    assert.ok(existsSync(live) && existsSync(other));
  } finally {
    for (const file of files) rmSync(file, { force: true });
  }
});

test("an emulator never stopped does not keep node running, and ends with it", async () => {
  const script = 'require("svc-emulator").start().then((e) => console.log(e.startupFile, e._child.pid));';
  const node = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const [line] = await once(createInterface({ input: node.stdout }), "line");
    const [file, pid] = String(line).trim().split(" ");
    assert.ok(await within(() => node.exitCode !== null || node.signalCode !== null), "node runs on");
    assert.equal(node.exitCode, 0);
    assert.ok(await ended(Number(pid)), `the emulator ${pid} outlived node`);
    assert.ok(await within(() => !existsSync(file)), `${file} outlived node`);
  } finally {
    node.kill("SIGKILL");
  }
});

// A test runner's worker lives on when the runner is killed: its emulators stop then all the same.
for (const ipc of [false, true]) {
  test(`SIGKILL of the runner stops its worker's emulator (${ipc ? "an IPC channel" : "no IPC"})`, async () => {
    const worker = 'import { start } from "svc-emulator"; const e = await start(); ' +
      "console.log(e.startupFile, e._child.pid, process.pid); setInterval(() => {}, 1000);";
    const stdio = JSON.stringify(["ignore", "inherit", "inherit", ...(ipc ? ["ipc"] : [])]);
    const runner = 'import { spawn } from "node:child_process"; ' +
      `spawn(process.execPath, ["--input-type=module", "-e", ${JSON.stringify(worker)}], { stdio: ${stdio} }); ` +
      "setInterval(() => {}, 1000);";
    const { suite, file, pid, rest } = await nodeHolding(runner);
    const workerPid = Number(rest[0]);
    try {
      suite.kill("SIGKILL");
      await once(suite, "exit");
      assert.ok(await ended(pid), `the emulator ${pid} outlived the runner`);
      assert.ok(await within(() => !existsSync(file)), `${file} outlived the runner`);
      assert.ok(!gone(workerPid), "the worker ended: the test proves nothing");
    } finally {
      try { process.kill(workerPid, "SIGKILL"); } catch { /* gone */ }
    }
  });
}

test("a config that does not load is an error that says why", async () => {
  await assert.rejects(start({ config: "no-such-config.json" }), (error) => {
    assert.ok(error instanceof EmulatorError);
    assert.match(error.message, /no-such-config\.json/);
    return true;
  });
});

test("Ctrl-C stops the emulator and removes its start-line file", async () => {
  const script = 'import { start } from "svc-emulator"; const e = await start(); ' +
    'console.log(e.startupFile, e._child.pid); setInterval(() => {}, 1000);';
  const { suite, file, pid } = await nodeHolding(script);
  assert.ok(existsSync(file));
  suite.kill("SIGINT");
  await once(suite, "exit");
  assert.ok(!existsSync(file));
  assert.ok(await ended(pid), `the emulator ${pid} still runs`);
});

// SIGKILL of node runs none of its code: the emulator, whose stdin (a pipe only node held) ends,
// stops itself and removes the start-line file it was told about.
for (const [how, script] of [
  ["start()", 'import { start } from "svc-emulator"; const e = await start(); ' +
    "console.log(e.startupFile, e._child.pid); setInterval(() => {}, 1000);"],
  ["the Vitest and Jest global setup", 'import setup from "svc-emulator/global-setup"; ' +
    "await setup(); const e = globalThis.__svcEmulator; " +
    "console.log(e.startupFile, e._child.pid); setInterval(() => {}, 1000);"],
]) {
  test(`SIGKILL of node ends the emulator of ${how} and its start-line file`, async () => {
    const { suite, file, pid } = await nodeHolding(script);
    assert.ok(existsSync(file));
    suite.kill("SIGKILL");
    await once(suite, "exit");
    assert.ok(await ended(pid), `the emulator ${pid} outlived node`);
    assert.ok(await within(() => !existsSync(file)), `${file} outlived node`);
  });
}

test("a program node runs does not keep the emulator running", async () => {
  const script = 'import { start } from "svc-emulator"; import { spawn } from "node:child_process"; ' +
    "const e = await start(); " +
    'const ran = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" }); ' +
    "console.log(e.startupFile, e._child.pid, ran.pid); setInterval(() => {}, 1000);";
  const { suite, file, pid, rest } = await nodeHolding(script);
  const ran = Number(rest[0]);
  try {
    suite.kill("SIGKILL");
    await once(suite, "exit");
    assert.ok(await ended(pid), `the emulator ${pid} outlived node`);
    assert.ok(await within(() => !existsSync(file)), `${file} outlived node`);
    assert.ok(!gone(ran), "the program node ran lives on");
  } finally {
    try { process.kill(ran, "SIGKILL"); } catch { /* gone */ }
  }
});

test("without its platform package, an svc in a parent folder's node_modules is never run", () => {
  // root/node_modules/<platform package>: a planted svc that leaves a mark when run;
  // root/project/node_modules/svc-emulator: the helper, installed without its platform package.
  const name = `svc-emulator-${process.platform}-${process.arch}`;
  const root = mkdtempSync(join(tmpdir(), "svc-emulator-parent-"));
  try {
    const mark = join(root, "the planted svc ran");
    const plant = (dir) => {
      mkdirSync(join(dir, "bin"), { recursive: true });
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "0.0.0" }));
      writeFileSync(join(dir, "bin", "svc"), `#!/bin/sh\ntouch '${mark}'\nexit 3\n`, { mode: 0o755 });
    };
    plant(join(root, "node_modules", name));
    const project = join(root, "project");
    const helper = join(project, "node_modules", "svc-emulator");
    const installed = dirname(createRequire(import.meta.url).resolve("svc-emulator/package.json"));
    cpSync(installed, helper, { recursive: true });
    const env = { ...process.env };
    delete env.SVC_BIN;
    const run = (code) => execFileSync(process.execPath, ["-e", code], { cwd: project, env, encoding: "utf8" });
    const answer = JSON.parse(run(
      'const { start, EmulatorError } = require("svc-emulator"); ' +
      "Promise.resolve().then(() => start()).then(" +
      "(e) => { e.stop(); console.log(JSON.stringify({ started: true })); }, " +
      "(e) => console.log(JSON.stringify({ error: e instanceof EmulatorError, message: e.message })));",
    ));
    assert.ok(!existsSync(mark), "the parent folder's svc was run");
    assert.equal(answer.error, true, JSON.stringify(answer));
    assert.match(answer.message, new RegExp(`the package ${name} is not installed`));
    assert.match(answer.message, /SVC_BIN/);
    // Its own install is where it looks: hoisted beside it, and nested in it.
    const whereFound = () => run('console.log(require("svc-emulator").binaryPath())').trim();
    plant(join(project, "node_modules", name));
    assert.equal(whereFound(), join(project, "node_modules", name, "bin", "svc"));
    plant(join(helper, "node_modules", name));
    assert.equal(whereFound(), join(helper, "node_modules", name, "bin", "svc"));
    assert.ok(!existsSync(mark));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/** A node process running `script`, which prints the start-line file and the emulator's pid
 * (and more words: `rest`) once its emulator runs. */
async function nodeHolding(script) {
  const suite = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: suite.stdout });
  const line = await Promise.race([
    once(lines, "line").then(([first]) => first),
    once(suite, "exit").then(([code]) => {
      throw new Error(`node ended (${code}) before its emulator ran`);
    }),
  ]);
  const [file, pid, ...rest] = String(line).trim().split(" ");
  assert.ok(file && existsSync(file), `a start-line file: ${line}`);
  return { suite, file, pid: Number(pid), rest };
}

/** Whether the process `pid` ends within a generous deadline (a bounded wait for the process
 * table, not a timing). */
function ended(pid) {
  return within(() => gone(pid));
}

/** Gone, or a zombie: a process that ran its end, waiting to be reaped. */
function gone(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] === "Z";
  } catch {
    return true;
  }
}

/** Whether `condition()` holds within a minute, asked every 50 ms. */
async function within(condition, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}
