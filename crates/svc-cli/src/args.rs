//! Command-line arguments.

use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::engine::ArgValueCompleter;

/// The svc REST API from a shell: page settings, projects, records, SQL, users and teams,
/// resources, actions and workflows, sessions; the local emulator; a demo.
///
/// Settings: a flag wins over the environment (`VITE_SVC_*` over `SVC_*` for the project,
/// environment, draft and base URLs), which wins over the profile chosen with `--profile NAME`
/// (`SVC_PROFILE`, else the config file's `default_profile`), which wins over the defaults. The
/// config file is `$SVC_CONFIG`, else `<config dir>/svc/config.json` (`$SVC_CONFIG_DIR`,
/// `$XDG_CONFIG_HOME` or `~/.config`). There is no default service: give the base URLs, the
/// project and a credential once, in a profile or the environment. `svc config` shows every
/// setting in use and where it comes from.
///
/// Credentials come from `--api-key`, `--token`, `--tools-token` (or `SVC_API_KEY`, `SVC_TOKEN`,
/// `SVC_TOOLS_TOKEN`, or the profile), or from the session saved by `svc login`.
///
/// Exit codes: 0 ok, 1 other failures, 2 usage errors (nothing was sent), 3 API errors (the
/// server answered with an error), 4 network errors (no answer), 5 not signed in (`svc whoami`),
/// 6 a workflow that ran and failed (`svc workflows run`).
#[derive(Debug, Parser)]
#[command(name = "svc", version, about, long_about, after_help = MAIN_EXAMPLES)]
pub struct Cli {
    #[command(flatten, next_help_heading = "Global options")]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every API command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// The profile of the config file to use [env: SVC_PROFILE] (see `svc config --help`).
    #[arg(long, global = true, value_name = "NAME")]
    pub profile: Option<String>,
    /// Project unique name [env: VITE_SVC_PROJECT, SVC_PROJECT].
    #[arg(long, global = true, value_name = "NAME")]
    pub project: Option<String>,
    /// Environment [env: VITE_SVC_ENVIRONMENT, SVC_ENVIRONMENT] [default: prod].
    #[arg(long, global = true, value_name = "NAME")]
    pub environment: Option<String>,
    /// Data host base URL [env: VITE_SVC_API_BASE_URL, SVC_API_BASE_URL].
    #[arg(long, global = true, value_name = "URL")]
    pub api_base_url: Option<String>,
    /// Application host base URL, ending in /api [env: VITE_SVC_APP_BASE_URL, SVC_APP_BASE_URL].
    #[arg(long, global = true, value_name = "URL")]
    pub app_base_url: Option<String>,
    /// Work on drafts (`draft=1`) [env: VITE_SVC_DRAFT, SVC_DRAFT: false, 0, no, off, null,
    /// undefined mean off, anything else on].
    #[arg(long, global = true)]
    pub draft: bool,
    /// API key, sent as `Bearer`; wins over a session [env: SVC_API_KEY].
    #[arg(long, global = true, value_name = "KEY")]
    pub api_key: Option<String>,
    /// A resource's static token (sent raw) for records, sql and resources reload
    /// [env: SVC_TOKEN].
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// The built-in tools token (resource `__svc_app__`) for users, teams and
    /// `resources reload --tools` [env: SVC_TOOLS_TOKEN].
    #[arg(long, global = true, value_name = "TOKEN")]
    pub tools_token: Option<String>,
    /// A PEM root certificate to trust, e.g. the emulator's with --tls (the file it prints as
    /// tls_ca_pem) [env: SVC_CA_CERT].
    #[arg(long, global = true, value_name = "FILE")]
    pub ca_cert: Option<std::path::PathBuf>,
    /// Allow plain http:// base URLs to hosts other than loopback (credentials then cross the
    /// network unencrypted) [env: SVC_ALLOW_INSECURE_HTTP: 1, true, yes, on / 0, false, no, off].
    #[arg(long, global = true)]
    pub allow_insecure_http: bool,
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(long, short, global = true, value_enum)]
    pub output: Option<Output>,
    /// Show each request on stderr: -v its answer (method, path, status, attempt, time) and
    /// retries, -vv also each attempt as it goes out. Never headers, bodies or credentials.
    #[arg(long, short, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// A readable table.
    Table,
    /// Pretty JSON.
    Json,
    /// One JSON value per line.
    Ndjson,
    /// Comma-separated values with a header row.
    Csv,
}

/// `svc emulator`: run one, or act on a running one.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, after_help = EMULATOR_EXAMPLES)]
pub struct EmulatorCommand {
    /// What to do to a running emulator (none: run one in the foreground).
    #[command(subcommand)]
    pub action: Option<EmulatorAction>,
    /// How to run one.
    #[command(flatten)]
    pub run: svc_emulator::cli::EmulatorArgs,
}

/// What `svc emulator` does to a running emulator's project (`--project`, or the profile's),
/// reached at `--api-base-url` with the project's `--api-key`, as the other commands are.
#[derive(Debug, Subcommand)]
// Parsed once per process: a large variant (exec's emulator flags) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum EmulatorAction {
    /// Put the project back in its state at start: records of the resources the emulator owns,
    /// users, teams, page settings, accounts; every session ends.
    Reset,
    /// Keep the project's state under NAME (a snapshot of that name is replaced).
    Snapshot {
        /// 1 to 64 letters, digits, '.', '_' or '-'.
        name: String,
    },
    /// Put the project back in its state of snapshot NAME (`start`: as at start).
    Restore {
        /// A snapshot's name.
        name: String,
    },
    /// List the project's snapshots.
    Snapshots,
    /// Declare a stub: requests that match get its answer instead of the data's, in order of
    /// declaration, until removed or the project's reset. STUB is the JSON of a config file's
    /// stub, or @FILE to read it from a file.
    #[command(after_help = STUB_EXAMPLES)]
    Stub {
        /// `{"request": {...}, "response": {...}, "after": N, "times": N}`, or @FILE.
        stub: String,
    },
    /// List the project's stubs, with how many requests each matched and answered.
    Stubs,
    /// Remove stub ID, or every stub of the project with --all (a reset puts the config's back).
    Unstub {
        /// The stub's number, as `svc emulator stubs` lists it.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        id: Option<u64>,
        /// Remove every stub of the project.
        #[arg(long)]
        all: bool,
    },
    /// Write the project's state to DIR: every record of the resources a reset puts back (each
    /// model's a JSON file, the fixtures format), their next generated keys, its page settings
    /// and accounts; files 0600, folders 0700. `svc emulator --import DIR` starts from it. DIR
    /// is new, empty, or an earlier export (this project's folder is replaced).
    Export {
        /// The directory to write.
        dir: std::path::PathBuf,
    },
    /// Print the project's request journal: the requests the emulator answered, oldest first,
    /// filtered as its route filters them; with --follow, each new one as it comes (NDJSON).
    Requests(RequestsArgs),
    /// Start an emulator, run CMD with the environment `svc` reads (SVC_API_BASE_URL,
    /// SVC_APP_BASE_URL, SVC_PROJECT, SVC_ENVIRONMENT, SVC_API_KEY, SVC_TOOLS_TOKEN, SVC_CA_CERT
    /// with --tls) and SVC_EMULATOR_STARTUP (the start line, with every resource token), stop
    /// the emulator when CMD ends, and exit with CMD's code. Ctrl-C stops both.
    #[command(after_help = EXEC_EXAMPLES)]
    Exec(ExecArgs),
    /// Check the emulator against the real service (or the data engine) on your own schema and
    /// data: start an emulator from --config, draw requests from the resource's models, send
    /// each to the reference and to the emulator, and report what agrees, what is a documented
    /// decision, and what differs. Exit 0 when nothing differs, 1 when something does, 2 for
    /// bad input (nothing sent).
    #[command(after_help = VERIFY_EXAMPLES)]
    Verify(Box<VerifyArgs>),
}

/// `svc emulator verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The emulator's config file (JSON, as `svc emulator --config`): the project, its resource
    /// and the database the emulator reads, holding the same data as the reference.
    #[arg(long, value_name = "FILE")]
    pub config: std::path::PathBuf,
    /// The project (default: the config's first).
    #[arg(long)]
    pub project: Option<String>,
    /// The environment on the reference (default: the project's first in the config).
    #[arg(long)]
    pub environment: Option<String>,
    /// The resource to check.
    #[arg(long)]
    pub resource: String,
    /// The reference's base URL: the data host's (`--reference-kind service`), or the data
    /// engine's (`engine`, e.g. http://127.0.0.1:8888).
    #[arg(long, value_name = "URL")]
    pub reference: String,
    /// How the reference writes its paths and reads credentials: `service` (the data host's
    /// `/projects/{project}/{environment}/{resource}/...`) or `engine` (`/api/models/{model}/`).
    #[arg(long, value_enum, value_name = "KIND")]
    pub reference_kind: crate::verify::case::Kind,
    /// The reference's credential, sent as `Authorization: Bearer <T>` (an API key or the
    /// resource's token; the engine's bearer key). Never written to a report.
    #[arg(
        long,
        value_name = "T",
        env = "SVC_VERIFY_REFERENCE_TOKEN",
        hide_env_values = true
    )]
    pub reference_token: Option<String>,
    /// How many requests to draw.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub requests: usize,
    /// The seed the requests are drawn with: the same seed, schema and rows draw the same ones.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// At most this many requests a second to the reference (one at a time).
    #[arg(long, value_name = "R", default_value_t = 10.0)]
    pub rate: f64,
    /// Seconds to wait for each answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub timeout: u64,
    /// Write the JSON report here (every request, both answers where they are not the same).
    #[arg(long, value_name = "F")]
    pub json: Option<std::path::PathBuf>,
    /// Write a JUnit XML report here (a test case per request), for CI systems.
    #[arg(long, value_name = "F")]
    pub junit: Option<std::path::PathBuf>,
    /// Write a self-contained HTML page here (both answers side by side, filters).
    #[arg(long, value_name = "F")]
    pub html: Option<std::path::PathBuf>,
    /// Where the differences are saved as cases for --replay, when there are any.
    #[arg(long, value_name = "F", default_value = "svc-verify-cases.json")]
    pub cases: std::path::PathBuf,
    /// Send these cases again (a cases file, or a --json report's differences) instead of
    /// drawing requests.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<std::path::PathBuf>,
    /// Also send creates and updates. Only for a reference you say is scratch: its data
    /// changes. The emulator's copy is put back after the run.
    #[arg(long)]
    pub writes: bool,
    /// Run the emulator in lenient mode (answering like the engine where strict mode refuses).
    #[arg(long)]
    pub lenient: bool,
}

const VERIFY_EXAMPLES: &str = "\
Examples:
  svc emulator verify --config <emulator.json> --resource shop \\
      --reference https://data.example.com --reference-kind service --reference-token <key>
  svc emulator verify --config <emulator.json> --resource shop --reference http://127.0.0.1:8888 \\
      --reference-kind engine --requests 500 --junit verify.xml --html verify.html
  svc emulator verify --config <emulator.json> --resource shop --reference http://127.0.0.1:8888 \\
      --reference-kind engine --replay svc-verify-cases.json   # the differences, again";

/// `svc emulator requests`: the journal route's filters.
#[derive(Debug, clap::Args)]
pub struct RequestsArgs {
    /// Only requests whose path starts with this, e.g. /projects/demo/prod/shop/.
    #[arg(long, value_name = "PREFIX")]
    pub path_prefix: Option<String>,
    /// Only requests that arrived at or after this time (RFC 3339, e.g. 2026-01-02T03:04:05Z).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only requests of this method, e.g. POST.
    #[arg(long)]
    pub method: Option<String>,
    /// Only answers with this status (201) or class (4xx).
    #[arg(long)]
    pub status: Option<String>,
    /// With the requests' and answers' bodies (the emulator must keep them: --journal-bodies).
    #[arg(long)]
    pub bodies: bool,
    /// Keep printing new requests as they come, one JSON line each, until Ctrl-C.
    #[arg(long, short = 'f')]
    pub follow: bool,
}

/// `svc emulator exec`: an emulator around one command.
#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// Also write the emulator's start line (its URLs, project, key and every resource token,
    /// as `svc emulator` prints it) to this file.
    #[arg(long, value_name = "FILE")]
    pub startup_file: Option<std::path::PathBuf>,
    /// How to run the emulator: the flags of `svc emulator`.
    #[command(flatten)]
    pub run: svc_emulator::cli::EmulatorArgs,
    /// The command to run, after `--`, and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

const STUB_EXAMPLES: &str = r#"Examples:
  svc emulator stub '{"request": {"method": "GET", "model": "orders"}, "response": {"status": 503, "headers": {"Retry-After": "1"}}, "times": 1}'
  svc emulator stub '{"request": {"method": "POST"}, "response": {"connection": "reset"}}'
  svc emulator stub @<stub.json>           # the same JSON, from a file
  svc emulator stubs -o json
  svc emulator unstub 1
  svc emulator unstub --all"#;

const EXEC_EXAMPLES: &str = "\
Examples:
  svc emulator exec -- svc records list shop orders -o table
  svc emulator exec -- python3 docs/examples/test_with_emulator.py   # in a checkout of svc-rs
  svc emulator exec --fixtures <dir> --startup-file emulator.json -- npm test";

const EMULATOR_EXAMPLES: &str = "\
Examples:
  svc emulator --listen 127.0.0.1:8787 > emulator.json &   # run one; the line has its key
  svc emulator snapshot seeded --api-base-url http://127.0.0.1:8787 --api-key <key> --project demo
  svc emulator snapshot seeded    # with SVC_API_BASE_URL, SVC_API_KEY and SVC_PROJECT set
  svc emulator restore seeded
  svc emulator reset
  svc emulator requests --method POST --status 4xx   # what the code under test sent, refused
  svc emulator exec -- <test-command>                # an emulator around a test run";

#[derive(Debug, Subcommand)]
// Parsed once per process: a large variant (the emulator's flags) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Start the embedded emulator and walk through every operation group.
    Demo(DemoArgs),
    /// Run the local emulator (prints one JSON line with its URLs and tokens when ready), or
    /// reset a running one and keep or restore snapshots of its state (`svc emulator reset`).
    Emulator(EmulatorCommand),
    /// Sign in with email and password; the session is saved for later commands.
    #[command(after_help = LOGIN_EXAMPLES)]
    Login(LoginArgs),
    /// Forget the saved session (tokens are not revoked on the server).
    Logout,
    /// Show the signed-in user (exit code 5 when not signed in).
    Whoami,
    /// Create an account (does not sign in; `svc login` next).
    Register(RegisterArgs),
    /// Projects.
    #[command(subcommand)]
    Projects(ProjectsCommand),
    /// Page settings.
    #[command(subcommand, after_help = PAGES_EXAMPLES)]
    Pages(PagesCommand),
    /// Records of a resource's model.
    #[command(subcommand)]
    Records(RecordsCommand),
    /// A read-only SQL query on a resource.
    #[command(after_help = SQL_EXAMPLES)]
    Sql(SqlArgs),
    /// The project's application users.
    #[command(subcommand)]
    Users(UsersCommand),
    /// The project's teams.
    #[command(subcommand)]
    Teams(TeamsCommand),
    /// Resource maintenance.
    #[command(subcommand)]
    Resources(ResourcesCommand),
    /// A resource's actions.
    #[command(subcommand)]
    Actions(ActionsCommand),
    /// The project's workflows.
    #[command(subcommand)]
    Workflows(WorkflowsCommand),
    /// Send a request to another service through the svc HTTP proxy (needs `svc login`).
    #[command(after_help = PROXY_EXAMPLES)]
    Proxy(ProxyArgs),
    /// Show the settings in use and where each comes from (flag, environment, profile,
    /// default); secrets are never shown.
    #[command(after_help = CONFIG_HELP)]
    Config {
        #[command(subcommand)]
        action: Option<ConfigAction>,
    },
    /// Print a shell completion script: `svc completions bash > ~/.local/share/bash-completion/completions/svc`.
    Completions {
        /// The shell: bash, zsh, fish, powershell or elvish.
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff): `svc man > ~/.local/share/man/man1/svc.1`, or one command's:
    /// `svc man records export > ~/.local/share/man/man1/svc-records-export.1`.
    Man {
        /// The command whose page to print, e.g. `records export` (default: svc itself).
        command: Vec<String>,
    },
}

const MAIN_EXAMPLES: &str = "Examples:
  svc emulator > emulator.json &      # a local service; prints its URLs, project and keys
  svc records list shop orders -f status=paid --order-by -total --per-page 10   # or --profile NAME
  svc sql shop \"select status, count(*) as n from orders group by status\" -o table
  svc config                          # which settings are in use, and where each comes from

`svc COMMAND --help` shows a command's own options and examples; the global options above apply
to every command.";

const CONFIG_HELP: &str =
    "The config file is $SVC_CONFIG, else <config dir>/svc/config.json, where the config dir is
$SVC_CONFIG_DIR, else $XDG_CONFIG_HOME, else ~/.config. It holds named profiles:

  {
    \"default_profile\": \"local\",
    \"profiles\": {
      \"local\": {
        \"api_base_url\": \"http://127.0.0.1:8787\",
        \"app_base_url\": \"http://127.0.0.1:8787/api\",
        \"project\": \"demo\",
        \"api_key\": \"svc_key_...\",
        \"resource_tokens\": {\"shop\": \"svc_tok_...\"}
      }
    }
  }

(That one is for `svc emulator --listen 127.0.0.1:8787 --data emu.sqlite`, whose keys and tokens
are kept in emu.sqlite across restarts.)

Keys of a profile: api_base_url, app_base_url, project, environment, draft (true/false), api_key,
token, tools_token, resource_tokens (resource name to token), ca_cert (a path, relative to the
file's directory), allow_insecure_http (true/false). Keep the file private (chmod 600): svc warns
when other users can read a file that holds secrets.

Precedence: flag > environment key > profile > default. The profile is --profile NAME, else
SVC_PROFILE, else the file's default_profile.

The file can be written with svc itself (it is made readable by you only).

Examples:
  svc --profile local config set api_base_url http://127.0.0.1:8787
  printf '%s\\n' \"$SVC_API_KEY\" | svc --profile local config set api_key -   # from stdin
  svc --profile local config set resource_tokens.shop <shop-token>
  svc config use local                # the default profile
  svc --profile local config unset draft";

const RECORDS_LIST_EXAMPLES: &str = "Examples:
  svc records list shop orders -f status=paid -f total__gte=100 --order-by -total --per-page 10
  svc records list shop customers --search smith -f exclude__city=Paris -o table
  svc records list shop orders --page 2 --per-page 50 | jq -r '.results[].id'";

const RECORDS_EXPORT_EXAMPLES: &str = "Examples:
  svc records export shop orders --format csv --out orders.csv
  svc records export shop orders --out orders.csv      # CSV: the format comes from the extension
  svc records export shop orders -f status=paid | jq -c 'select((.total | tonumber) > 900) | {id, total}'

The format is --format, else -o csv or -o ndjson, else --out's extension (.csv, .ndjson, .jsonl),
else NDJSON; formats that disagree are a usage error. Decimal (REAL, NUMERIC) values come as
strings, as the service sends them (\"total\": \"912.5\"): compare them as numbers with jq's
tonumber.";

const RECORDS_IMPORT_EXAMPLES: &str = "Examples:
  svc records export shop customers --out customers.csv && svc records import shop customers customers.csv --key email --skip-columns birth_date
  svc records import shop customers customers.csv --key email --columns email,city,vip --errors failed.ndjson
  svc records export shop products | svc records import shop products - --format ndjson --key sku --skip-existing

CSV cells are sent as text and read by the model's fields (\"12\" into an integer column,
\"true\" into a boolean); an empty cell is left out. Before any row is sent, the model's
columns are read (through the resource's SQL): a column of the file the model lacks, or one the
database refuses every value for (DATE, TIME and BLOB columns on SQLite), stops the import with
its name (exit 2); leave it out with --skip-columns, or pick columns with --columns. Prints the
counts (created, updated, skipped, failed); the exit code is 1 when any row failed, 4 when the
service stopped answering (with --key, run the same command again to finish).";

const PAGES_EXAMPLES: &str = "Examples:
  svc pages list -o table
  svc pages create --data '{\"unique_name\": \"orders\", \"name\": \"Orders\", \"params\": {\"elements\": []}}'
  svc pages get orders | jq '.params | fromjson' > structure.json   # the structure, parsed
  svc pages update orders --data @structure.json      # a page by uid or unique_name
  svc pages pull pages/ && $EDITOR pages/orders.json && svc pages diff pages/ && svc pages push pages/
  svc --draft pages push pages/ && svc pages publish orders

`params`, the page structure, is JSON text in a string on the wire: tables show it parsed, JSON
output keeps the string exactly as stored.";

const SQL_EXAMPLES: &str = "Examples:
  svc sql shop \"select count(*) as n from orders\"
  svc sql shop \"select * from orders where status = :status and total >= :min\" -p status=paid -p min=100 -o csv
  echo 'select status, count(*) as n from orders group by status' > report.sql
  svc sql shop @report.sql -o ndjson                  # `-` reads the query from stdin

Output: json is an array of row objects (keyed by column name), ndjson one row object per line,
csv and table keep every column in order.";

const ACTIONS_EXAMPLES: &str = "Examples:
  svc actions run shop refund --data '{\"id\": 7}'
  echo '{\"id\": 8}' > refund.json && svc actions run shop refund --data @refund.json -o table
  svc actions run shop ping                 # no inputs: --data defaults to {}

Prints the action's result (the answer's `data`): a list, such as the rows a statement returned,
as a list (one JSON value per line with -o ndjson, a table, CSV), anything else as one value.
An action is never sent twice: an answer lost on the way is not retried.";

const WORKFLOWS_EXAMPLES: &str = "Examples:
  svc workflows run wf-refund --data '{\"id\": 7, \"note\": \"damaged in transit\"}'
  echo '{\"id\": 9, \"note\": \"late\"}' | svc workflows run wf-refund --data -
  svc workflows run wf-reopen --data '{\"id\": 8, \"note\": \"n\", \"status\": null}'; echo $?   # 6: the run failed

Prints a successful run's result as `svc actions run` prints an action's. A run that failed
(`{\"success\": false, \"error\": ...}`) prints the server's reason on stderr and exits with 6,
apart from 3 (the server refused the request: an unknown workflow, a missing or unknown input)
and 4 (no answer).
A run is never sent twice: an answer lost on the way is not retried.";

const LOGIN_EXAMPLES: &str = "Examples:
  printf '%s\\n' \"$PASSWORD\" | svc register --email ana@example.com --password-stdin   # once
  svc login --email ana@example.com     # on a terminal: asks for the password, not shown
  printf '%s\\n' \"$PASSWORD\" | svc login --email ana@example.com --password-stdin
  SVC_PASSWORD=\"$PASSWORD\" svc login --email ana@example.com

The session is saved in $SVC_CONFIG_DIR/svc/session.json (else $XDG_CONFIG_HOME/svc/...,
else ~/.config/svc/...), readable by you only.";

const PROXY_EXAMPLES: &str = "Examples:
  svc proxy GET https://api.example.com/orders -q page=2 -H 'Accept: application/json'
  svc proxy POST https://api.example.com/orders --json '{\"total\": 12.5}'

The upstream's status goes to stderr and its body, unchanged, to stdout. The exit code is 3 when
the upstream answered 4xx or 5xx.";

/// Changes to the config file.
#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Set KEY of the profile (--profile, else SVC_PROFILE, else the file's default) to VALUE;
    /// `-` reads VALUE from stdin (for secrets, kept out of the shell's history). Keys: project,
    /// environment, api_base_url, app_base_url, draft, api_key, token, tools_token, ca_cert,
    /// allow_insecure_http, resource_tokens.RESOURCE.
    Set {
        /// The setting.
        key: String,
        /// Its value (`-`: read from stdin).
        value: String,
    },
    /// Remove KEY from the profile.
    Unset {
        /// The setting.
        key: String,
    },
    /// Make PROFILE the default profile.
    Use {
        /// A profile of the file.
        profile: String,
    },
}

#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// HTTP method: GET, POST, PUT, PATCH, DELETE, ...
    pub method: String,
    /// The target URL (http:// or https://).
    pub url: String,
    /// A query parameter, `name=value`. Repeat for more.
    #[arg(long = "query", short = 'q', value_name = "NAME=VALUE")]
    pub query: Vec<String>,
    /// A request header, `Name: value`. Repeat for more.
    #[arg(long = "header", short = 'H', value_name = "NAME:VALUE")]
    pub headers: Vec<String>,
    /// A JSON body: JSON, `@file.json`, or `-` for stdin.
    #[arg(long, conflicts_with = "raw", value_name = "DATA")]
    pub json: Option<String>,
    /// A text body sent as given: text, `@file`, or `-` for stdin (set its Content-Type with
    /// --header).
    #[arg(long, value_name = "TEXT")]
    pub raw: Option<String>,
    /// The name of a project secret the request uses. Repeat for more.
    #[arg(long = "secret-token", value_name = "NAME")]
    pub secret_tokens: Vec<String>,
}

/// Where the password comes from: `--password-stdin`, else `SVC_PASSWORD`, else a prompt.
#[derive(Debug, Args)]
pub struct Password {
    /// Read the password from stdin (one line; typed without echo when stdin is a terminal).
    /// Without it, SVC_PASSWORD is used, else the password is asked for on a terminal.
    #[arg(long)]
    pub password_stdin: bool,
}

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The account's email address.
    #[arg(long, env = "SVC_EMAIL")]
    pub email: String,
    #[command(flatten)]
    pub password: Password,
}

#[derive(Debug, Args)]
pub struct RegisterArgs {
    /// The email address.
    #[arg(long, env = "SVC_EMAIL")]
    pub email: String,
    #[command(flatten)]
    pub password: Password,
    /// First name.
    #[arg(long)]
    pub first_name: Option<String>,
    /// Last name.
    #[arg(long)]
    pub last_name: Option<String>,
}

#[derive(Debug, Args)]
pub struct SqlArgs {
    /// Resource name.
    #[arg(add = ArgValueCompleter::new(crate::complete::resources))]
    pub resource: String,
    /// One read-only statement (SELECT or WITH ... SELECT); `@file.sql` reads a file, `-` stdin.
    /// Write parameters as `:name`.
    pub query: String,
    /// A parameter, `name=value`; the value is JSON if it parses (7, true, null, "7", `[1,2]`),
    /// else a string. Repeat for more.
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    pub params: Vec<String>,
}

/// An `--order-by` value. It may start with `-` (descending), so clap takes the next argument
/// whatever it looks like; an option name there (`--order-by --page 2`) is the value forgotten.
fn order_by(value: &str) -> Result<String, String> {
    if value.starts_with("--") {
        return Err(
            "give the fields to order by, e.g. --order-by -total or --order-by id,-date_add"
                .to_owned(),
        );
    }
    Ok(value.to_owned())
}

/// Paging and ordering of a list.
#[derive(Debug, Args)]
pub struct Paging {
    /// Ordering, e.g. `-date_add,email` (a leading `-` sorts descending).
    #[arg(long, allow_hyphen_values = true, value_parser = order_by)]
    pub order_by: Option<String>,
    /// Page number, from 1.
    #[arg(long)]
    pub page: Option<u32>,
    /// Items per page, 1 to 10000.
    #[arg(long)]
    pub per_page: Option<u32>,
}

#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// List one page of users.
    List {
        #[command(flatten)]
        filters: Filters,
        #[command(flatten)]
        paging: Paging,
    },
    /// Show one user.
    Get {
        /// User uid.
        uid: String,
    },
    /// Add a user to a team.
    Create {
        /// E-mail address.
        #[arg(long)]
        email: String,
        /// The team: its uid or its name.
        #[arg(long)]
        team: String,
        /// First name.
        #[arg(long)]
        first_name: Option<String>,
        /// Last name.
        #[arg(long)]
        last_name: Option<String>,
    },
    /// Move a user to another team (the only change the service allows).
    UpdateGroup {
        /// User uid.
        uid: String,
        /// The new team: its uid or its name.
        #[arg(long)]
        team: String,
    },
    /// Delete a user (asks first on a terminal; --yes skips the question).
    Delete {
        /// User uid.
        uid: String,
        #[command(flatten)]
        yes: Yes,
    },
}

#[derive(Debug, Subcommand)]
pub enum TeamsCommand {
    /// List one page of teams.
    List {
        #[command(flatten)]
        filters: Filters,
        #[command(flatten)]
        paging: Paging,
    },
    /// Show one team.
    Get {
        /// The team: its uid or its name.
        team: String,
    },
    /// Rename a team (the only change the service allows).
    Rename {
        /// The team: its uid or its name.
        team: String,
        /// The new name.
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ResourcesCommand {
    /// Re-read a resource's structure after its database changed (new tables, new columns).
    #[command(
        override_usage = "svc resources reload <RESOURCE>\n       svc resources reload --tools"
    )]
    Reload {
        /// Resource name.
        #[arg(required_unless_present = "tools", conflicts_with = "tools")]
        resource: Option<String>,
        /// Reload the built-in tools resource (users and teams) instead.
        #[arg(long)]
        tools: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ActionsCommand {
    /// Run an action of a resource with its inputs, and print its result.
    #[command(after_help = ACTIONS_EXAMPLES)]
    Run {
        /// Resource name.
        #[arg(add = ArgValueCompleter::new(crate::complete::resources))]
        resource: String,
        /// The action's name.
        name: String,
        /// The inputs: a JSON object of input names to values, `@file.json`, or `-` for stdin.
        #[arg(long, default_value = "{}")]
        data: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum WorkflowsCommand {
    /// Run a workflow of the project with its inputs, and print its result (exit code 6 when
    /// the run failed).
    #[command(after_help = WORKFLOWS_EXAMPLES)]
    Run {
        /// The workflow's uid.
        uid: String,
        /// The inputs: a JSON object of input names to values, `@file.json`, or `-` for stdin.
        #[arg(long, default_value = "{}")]
        data: String,
    },
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the emulator running after the tour, so the printed commands can be tried.
    #[arg(long)]
    pub keep_running: bool,
}

#[derive(Debug, Subcommand)]
pub enum ProjectsCommand {
    /// Show the project (default: --project).
    Get {
        /// Project unique name.
        name: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum PagesCommand {
    /// List page settings.
    List,
    /// Show one page's settings.
    Get {
        /// The page: its uid or its unique_name.
        page: String,
    },
    /// Create a page from JSON (`--data '{...}'`, `--data @file.json`, `--data -` for stdin).
    /// A unique_name that a page of the set has already is refused.
    Create {
        /// The page's fields (a JSON object). `params`, the page structure, may be given as JSON
        /// (an object or array; sent as the JSON text the API stores) or as that text in a
        /// string.
        #[arg(long)]
        data: String,
    },
    /// Replace a page's params with the JSON structure given in --data.
    Update {
        /// The page: its uid or its unique_name.
        page: String,
        /// The page structure (JSON), stored as the `params` string; a JSON string is taken as
        /// that text itself (so `jq .params` output can be given back).
        #[arg(long)]
        data: String,
    },
    /// Delete a page (asks first on a terminal; --yes skips the question).
    Delete {
        /// The page: its uid or its unique_name.
        page: String,
        #[command(flatten)]
        yes: Yes,
    },
    /// Write one file per page into DIR (`<unique_name>.json`, params as parsed JSON); with the
    /// global --draft, the draft set.
    Pull {
        /// The directory (made if missing).
        dir: std::path::PathBuf,
    },
    /// A unified diff from the pages on the server to the files in DIR; exit 0 when they are
    /// the same, 1 when they differ.
    Diff {
        /// The directory `pages pull` wrote.
        dir: std::path::PathBuf,
    },
    /// Create the pages that have a file in DIR and no page, update the structure of those
    /// whose file differs; --prune also deletes the pages that have no file.
    Push {
        /// The directory of page files.
        dir: std::path::PathBuf,
        /// Print what would change, and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Also delete the pages that have no file in DIR (asks first on a terminal).
        #[arg(long)]
        prune: bool,
        #[command(flatten)]
        yes: Yes,
    },
    /// Publish draft pages: each one's structure becomes the published page's (a page that
    /// exists only as a draft is created in the published set).
    #[command(override_usage = "svc pages publish <PAGE>\n       svc pages publish --all")]
    Publish {
        /// The draft page: its uid or its unique_name.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        page: Option<String>,
        /// Every page of the draft set.
        #[arg(long)]
        all: bool,
    },
}

/// The confirmation a delete needs.
#[derive(Debug, Args)]
pub struct Yes {
    /// Delete without asking. Off a terminal (scripts, CI) a delete without --yes deletes
    /// nothing and exits 2.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Which records.
#[derive(Debug, Args)]
pub struct Target {
    /// Resource name.
    #[arg(add = ArgValueCompleter::new(crate::complete::resources))]
    pub resource: String,
    /// Model name.
    #[arg(add = ArgValueCompleter::new(crate::complete::models))]
    pub model: String,
}

/// Filters and search, shared by list, export, aggregate and group.
#[derive(Debug, Args)]
pub struct Filters {
    /// Filters, `field=value` or `field__lookup=value`; `exclude__field...` negates. Repeat for AND.
    #[arg(long = "filter", short = 'f')]
    pub filters: Vec<String>,
    /// Search text.
    #[arg(long)]
    pub search: Option<String>,
}

/// Export file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One JSON object per line.
    Ndjson,
    /// Comma-separated values with a header row.
    Csv,
}

#[derive(Debug, Subcommand)]
pub enum RecordsCommand {
    /// List one page of records.
    #[command(after_help = RECORDS_LIST_EXAMPLES)]
    List {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        filters: Filters,
        /// Ordering, e.g. `-total,id` (a leading `-` sorts descending).
        #[arg(long, allow_hyphen_values = true, value_parser = order_by)]
        order_by: Option<String>,
        /// Page number, from 1.
        #[arg(long)]
        page: Option<u32>,
        /// Records per page, 1 to 10000.
        #[arg(long)]
        per_page: Option<u32>,
    },
    /// Stream every matching record, across pages, to NDJSON or CSV.
    #[command(after_help = RECORDS_EXPORT_EXAMPLES)]
    Export {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        filters: Filters,
        /// Ordering, e.g. `id` or `-total` (a leading `-` sorts descending).
        #[arg(long, allow_hyphen_values = true, value_parser = order_by)]
        order_by: Option<String>,
        /// File format [default: -o csv or -o ndjson, else --out's extension, else ndjson].
        #[arg(long, value_enum)]
        format: Option<ExportFormat>,
        /// Write to this file instead of stdout (`-o` is the output format, not this path). The export goes to a temporary file beside it,
        /// renamed over it only when complete: an interrupted or failed export leaves it
        /// untouched.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// Records per request, 1 to 10000.
        #[arg(long, default_value_t = 1000)]
        per_page: u32,
    },
    /// Create (or with --key, create and update) records from a CSV or NDJSON file.
    #[command(after_help = RECORDS_IMPORT_EXAMPLES)]
    Import {
        #[command(flatten)]
        target: Target,
        /// The file: CSV with a header row naming the fields, or NDJSON (one JSON object per
        /// line); `-` reads stdin.
        file: String,
        /// The file's format [default: from its extension: .csv, .ndjson or .jsonl].
        #[arg(long, value_enum)]
        format: Option<ExportFormat>,
        /// A field that identifies a record (e.g. `email`): a row whose key a record already
        /// has updates that record instead of creating another, so the import can be run again.
        #[arg(long, value_name = "FIELD")]
        key: Option<String>,
        /// With --key: leave existing records as they are instead of updating them.
        #[arg(long, requires = "key")]
        skip_existing: bool,
        /// With --key: the model's primary key field, which addresses the record to update.
        #[arg(long, value_name = "FIELD", default_value = "id", requires = "key")]
        pk: String,
        /// Requests in flight at once.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
        concurrency: u16,
        /// Write each failed row, its line number and its error to FILE (NDJSON).
        #[arg(long, value_name = "FILE")]
        errors: Option<std::path::PathBuf>,
        /// Import only these columns of the file (comma-separated names of its header, or of
        /// its NDJSON keys); the others are left out of every record.
        #[arg(
            long,
            value_name = "A,B,...",
            value_delimiter = ',',
            conflicts_with = "skip_columns"
        )]
        columns: Option<Vec<String>>,
        /// Leave these columns of the file out of every record (comma-separated), e.g. a
        /// `DATE` column of a SQLite resource, which takes no value.
        #[arg(long, value_name = "X,Y,...", value_delimiter = ',')]
        skip_columns: Vec<String>,
        /// Send the rows without first reading the model's columns (through the resource's
        /// SQL), for a credential that cannot run SQL: a column the database refuses then
        /// fails its rows one by one.
        #[arg(long)]
        no_check: bool,
    },
    /// Show one record.
    Get {
        #[command(flatten)]
        target: Target,
        /// Primary key.
        pk: String,
    },
    /// Create a record from JSON (--data).
    Create {
        #[command(flatten)]
        target: Target,
        /// The record: JSON, `@file.json`, or `-` for stdin.
        #[arg(long)]
        data: String,
    },
    /// Change fields of a record (--data holds the changed fields).
    Update {
        #[command(flatten)]
        target: Target,
        /// Primary key.
        pk: String,
        /// The changed fields: JSON, `@file.json`, or `-` for stdin.
        #[arg(long)]
        data: String,
    },
    /// Delete a record (asks first on a terminal; --yes skips the question).
    Delete {
        #[command(flatten)]
        target: Target,
        /// Primary key.
        pk: String,
        #[command(flatten)]
        yes: Yes,
    },
    /// count, sum, min, max or avg over the matching records.
    Aggregate {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        filters: Filters,
        /// count, sum, min, max, avg.
        #[arg(long)]
        func: String,
        /// Column (default: the primary key).
        #[arg(long)]
        column: Option<String>,
    },
    /// An aggregate per group of a column (or of a date unit of it).
    Group {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        filters: Filters,
        /// The column whose values form the groups.
        #[arg(long)]
        x_column: String,
        /// plain, auto, or date_{second,minute,hour,day,week,month,quarter,year}.
        #[arg(long)]
        x_lookup: Option<String>,
        /// count, sum, min, max, avg.
        #[arg(long)]
        func: String,
        /// Aggregated column (default: the primary key).
        #[arg(long)]
        y_column: Option<String>,
    },
}
