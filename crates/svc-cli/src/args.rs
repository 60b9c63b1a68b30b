//! Command-line arguments.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The svc REST API from a shell: page settings, projects, records; the local emulator; a demo.
///
/// Connection settings come from flags, else from the environment (`SVC_PROJECT`,
/// `SVC_ENVIRONMENT`, `SVC_API_BASE_URL`, `SVC_APP_BASE_URL`, `SVC_DRAFT`, `SVC_API_KEY`,
/// `SVC_TOKEN`), else from defaults.
#[derive(Debug, Parser)]
#[command(name = "svc", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every API command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// Project unique name.
    #[arg(long, global = true, env = "SVC_PROJECT")]
    pub project: Option<String>,
    /// Environment (default `prod`).
    #[arg(long, global = true, env = "SVC_ENVIRONMENT")]
    pub environment: Option<String>,
    /// Data host base URL.
    #[arg(long, global = true, env = "SVC_API_BASE_URL")]
    pub api_base_url: Option<String>,
    /// Application host base URL (ends in /api).
    #[arg(long, global = true, env = "SVC_APP_BASE_URL")]
    pub app_base_url: Option<String>,
    /// Work on drafts (`draft=1`). Env SVC_DRAFT: false, 0, no, off, null, undefined mean off.
    #[arg(long, global = true)]
    pub draft: bool,
    /// API key (sent as `Bearer`).
    #[arg(long, global = true, env = "SVC_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// A resource's static token (sent raw) for records commands.
    #[arg(long, global = true, env = "SVC_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A PEM root certificate to trust (e.g. the emulator's, printed as tls_ca_pem).
    #[arg(long, global = true, env = "SVC_CA_CERT")]
    pub ca_cert: Option<std::path::PathBuf>,
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(long, short, global = true, value_enum)]
    pub output: Option<Output>,
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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the embedded emulator and walk through every operation group.
    Demo(DemoArgs),
    /// Run the local emulator (prints one JSON line with its URLs and tokens when ready).
    Emulator(svc_emulator::cli::EmulatorArgs),
    /// Projects.
    #[command(subcommand)]
    Projects(ProjectsCommand),
    /// Page settings.
    #[command(subcommand)]
    Pages(PagesCommand),
    /// Records of a resource's model.
    #[command(subcommand)]
    Records(RecordsCommand),
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
        /// Page uid.
        uid: String,
    },
    /// Create a page from JSON (`--data '{...}'`, `--data @file.json`, `--data -` for stdin).
    Create {
        #[arg(long)]
        data: String,
    },
    /// Replace a page's params with the JSON structure given in --data.
    Update {
        /// Page uid.
        uid: String,
        /// The page structure (JSON), stored as the `params` string.
        #[arg(long)]
        data: String,
    },
    /// Delete a page.
    Delete {
        /// Page uid.
        uid: String,
    },
}

/// Which records.
#[derive(Debug, Args)]
pub struct Target {
    /// Resource name.
    pub resource: String,
    /// Model name.
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
    List {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        filters: Filters,
        /// Ordering, e.g. `-total,id`.
        #[arg(long)]
        order_by: Option<String>,
        /// Page number, from 1.
        #[arg(long)]
        page: Option<u32>,
        /// Records per page, 1 to 10000.
        #[arg(long)]
        per_page: Option<u32>,
    },
    /// Stream every matching record, across pages, to NDJSON or CSV.
    Export {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        filters: Filters,
        /// Ordering, e.g. `id`.
        #[arg(long)]
        order_by: Option<String>,
        /// File format.
        #[arg(long, value_enum, default_value_t = ExportFormat::Ndjson)]
        format: ExportFormat,
        /// Write to this file instead of stdout.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// Records per request, 1 to 10000.
        #[arg(long, default_value_t = 1000)]
        per_page: u32,
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
    /// Delete a record.
    Delete {
        #[command(flatten)]
        target: Target,
        /// Primary key.
        pk: String,
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
