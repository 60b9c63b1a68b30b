import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["vitest-suite.test.mjs"],
    globalSetup: ["svc-emulator/global-setup"],
  },
});
