/** The emulator's start line (what `svc emulator` prints when it accepts connections). */
export interface Startup {
  api_base_url: string;
  app_base_url: string;
  project: string;
  environment: string;
  api_key: string;
  resource_tokens: Record<string, string>;
  ui_url: string;
  tls_ca_pem?: string | null;
}

/** A filter of the request journal (its route's query parameters), and for an expectation one
 * count: `at_least`, `at_most` or `exactly`. */
export type Matcher = Record<string, string | number | boolean>;

/** What `expect` answers. */
export interface Expectation {
  met: boolean;
  expected: string;
  matched: Array<Record<string, unknown>>;
  near_misses: Array<Record<string, unknown>>;
  report: string;
}

/** The emulator could not start, or refused a request of this package. */
export class EmulatorError extends Error {}

/** A running `svc emulator`. */
export class Emulator {
  constructor(startup: Startup);
  readonly startup: Startup;
  /** The data host's base URL. */
  readonly apiBaseUrl: string;
  /** The application host's base URL, ending in `/api`. */
  readonly appBaseUrl: string;
  readonly project: string;
  readonly environment: string;
  /** The project's API key (`Authorization: Bearer ...`). */
  readonly apiKey: string;
  /** Every resource's static token (`__svc_app__`: the built-in tools). */
  readonly resourceTokens: Record<string, string>;
  readonly uiUrl: string;
  /** A file readable by its owner only that holds the start line while the emulator runs;
   * null for an emulator another process started. */
  readonly startupFile: string | null;
  /** The variables `svc` and the platform's clients read, as `svc emulator exec` sets them. */
  env(): Record<string, string>;
  /** One request to the data host with the API key, or the Authorization value `auth`. */
  request(method: string, path: string, body?: unknown, auth?: string): Promise<{ status: number; body: any }>;
  /** The project back in its state at start. */
  reset(project?: string): Promise<Record<string, unknown>>;
  /** A reset, and the project's request journal emptied. */
  startOver(project?: string): Promise<void>;
  /** The project's requests in the journal, oldest first. */
  requests(filters?: Matcher): Promise<Array<Record<string, unknown>>>;
  /** An expectation over the journal. */
  expect(matcher?: Matcher): Promise<Expectation>;
  /** Throws the expectation's report unless it is met. */
  assertReceived(matcher?: Matcher): Promise<void>;
  /** Stops the emulator this object started and removes its start-line file. */
  stop(): Promise<void>;
}

/** The `svc` binary: SVC_BIN, else the platform package's, looked for in this package's own
 * install only (its node_modules, else the node_modules folder it is in), never a parent
 * folder's; throws an EmulatorError naming the missing package otherwise. */
export function binaryPath(): string;

/** Starts `svc emulator` (the demo project, or the projects of `config`) with more flags. The
 * emulator ends with this process however it ends (SIGKILL included), and removes its
 * start-line file then. */
export function start(options?: { config?: string; args?: string[]; env?: NodeJS.ProcessEnv }): Promise<Emulator>;

/** The emulator whose start line is in SVC_EMULATOR_STARTUP (`svc emulator exec`, the global
 * setup); null without one. */
export function connect(): Emulator | null;
