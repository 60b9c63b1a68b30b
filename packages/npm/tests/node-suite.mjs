// The svc-emulator npm packages, installed from their tarballs into a fresh project with no
// Rust toolchain: run with `node --test node-suite.mjs` by `cargo xtask ci` (xtask/src/dist.rs).
import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { inspect } from "node:util";
import { binaryPath, start, EmulatorError } from "svc-emulator";

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

test("a config that does not load is an error that says why", async () => {
  await assert.rejects(start({ config: "no-such-config.json" }), (error) => {
    assert.ok(error instanceof EmulatorError);
    assert.match(error.message, /no-such-config\.json/);
    return true;
  });
});

test("Ctrl-C stops the emulator and removes its start-line file", async () => {
  const { spawn } = await import("node:child_process");
  const { once } = await import("node:events");
  const script = 'import { start } from "svc-emulator"; const e = await start(); ' +
    'console.log(e.startupFile, e._child.pid); setInterval(() => {}, 1000);';
  const suite = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = await once(suite.stdout, "data");
  const [file, pid] = String(line).trim().split(" ");
  assert.ok(existsSync(file));
  suite.kill("SIGINT");
  await once(suite, "exit");
  assert.ok(!existsSync(file));
  // The emulator ends with the suite (a bounded wait for the process table, not a timing).
  let alive = true;
  for (let i = 0; i < 300 && alive; i++) {
    try {
      process.kill(Number(pid), 0);
      // A process that ended but was not reaped yet (a zombie) ran its end.
      const { readFileSync } = await import("node:fs");
      if (readFileSync(`/proc/${pid}/stat`, "utf8").split(" ")[2] === "Z") alive = false;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    } catch {
      alive = false;
    }
  }
  assert.ok(!alive, `the emulator ${pid} still runs`);
});
