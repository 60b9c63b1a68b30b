"use strict";
// One emulator for a whole Vitest or Jest run (their `globalSetup`): started before the first
// test file, its start line in SVC_EMULATOR_STARTUP (and the variables `svc emulator exec`
// sets) for the test files, which take it with `connect()`; stopped when the run ends (Vitest:
// the teardown this returns; Jest: `globalTeardown: "svc-emulator/global-setup"` runs
// `teardown`). SVC_EMULATOR_CONFIG names a config file (default: the demo project).

const { start } = require("./index.js");

/** Starts the run's emulator; resolves to its teardown. */
async function setup() {
  if (globalThis.__svcEmulator) return teardown;
  const emulator = await start({ config: process.env.SVC_EMULATOR_CONFIG || undefined });
  globalThis.__svcEmulator = emulator;
  Object.assign(process.env, emulator.env());
  return teardown;
}

/** Stops the run's emulator (a second call does nothing). */
async function teardown() {
  const emulator = globalThis.__svcEmulator;
  globalThis.__svcEmulator = undefined;
  if (emulator) await emulator.stop();
}

// Jest runs the module a globalSetup or globalTeardown names as a function: the same module
// serves both, setting up once and tearing down once.
async function globalSetupOrTeardown() {
  return globalThis.__svcEmulator ? teardown() : setup();
}

module.exports = globalSetupOrTeardown;
module.exports.default = globalSetupOrTeardown;
module.exports.setup = setup;
module.exports.teardown = teardown;
