//! What an import does with rows already there: a setting (`EmulatorConfig::import_on_rows`,
//! `--import-on-rows`) that the snapshot's files read.

use serde::{Deserialize, Serialize};

/// What an import does when a model or a project's store it writes to already holds rows
/// (rows of `seed_sql` or fixtures, or a database kept from an earlier start). From the
/// command line, `--import-on-rows`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ImportOnRows {
    /// The start stops, naming what holds rows: an import never mixes or drops rows silently.
    #[default]
    Stop,
    /// That resource (or the project's page settings and accounts) is not imported; its rows
    /// stay as they are.
    Skip,
    /// The records are written beside the rows there are (a record whose key is taken fails
    /// the start); the next generated keys stay the database's.
    Add,
    /// The models (and the project's page settings and accounts) are emptied first: the
    /// state is the export's, the next generated keys too.
    Replace,
}

impl ImportOnRows {
    /// Every choice, by its name on the command line.
    pub const ALL: [(&'static str, ImportOnRows); 4] = [
        ("stop", Self::Stop),
        ("skip", Self::Skip),
        ("add", Self::Add),
        ("replace", Self::Replace),
    ];
}
