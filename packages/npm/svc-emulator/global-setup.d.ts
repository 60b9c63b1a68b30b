/** Starts the run's emulator (Vitest's and Jest's `globalSetup`), or stops it when it runs (Jest's
 * `globalTeardown`): resolves to the teardown when it starts one. */
declare function globalSetupOrTeardown(): Promise<(() => Promise<void>) | void>;
declare namespace globalSetupOrTeardown {
  /** Starts the run's emulator; resolves to its teardown. */
  function setup(): Promise<() => Promise<void>>;
  /** Stops the run's emulator. */
  function teardown(): Promise<void>;
}
export = globalSetupOrTeardown;
