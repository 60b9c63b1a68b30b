#!/usr/bin/env node
"use strict";
// `svc` from the platform package, with this process's arguments, stdio and exit code; Ctrl-C
// and SIGTERM are passed on, so that `svc emulator` stops (and exports on exit) as it would
// when run directly.

const { spawn } = require("node:child_process");
const { binaryPath } = require("../index.js");

let child;
try {
  child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });
} catch (error) {
  console.error(`svc-emulator: ${error.message}`);
  process.exit(2);
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  console.error(`svc-emulator: cannot run svc: ${error.message}`);
  process.exit(2);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
