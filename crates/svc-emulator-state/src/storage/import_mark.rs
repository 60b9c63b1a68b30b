//! The mark of an import under way: written (and committed, to the disk) before an import's
//! first write into the emulator's databases and removed after its last, so that a `--data`
//! file that an import was killed in (part of the export written, part not) is known as such
//! by the next start, which then refuses to serve it as it is.

use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};

use super::{Store, StoreError};

/// The settings key of the mark.
const IMPORT_KEY: &str = "import_under_way";

/// An import that began writing and has not ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ImportMark {
    /// The export's directory, as it was given.
    pub(crate) dir: String,
    /// When its first write began (RFC 3339, UTC).
    pub(crate) began_at: String,
}

impl Store {
    /// The mark of an import that began writing into this data and has not ended, if any.
    pub(crate) fn import_mark(&self) -> Result<Option<ImportMark>, StoreError> {
        let text: Option<String> = self.run_blocking(|conn, _| {
            Ok(conn
                .query_row(
                    "SELECT value FROM settings WHERE key = ?1",
                    [IMPORT_KEY],
                    |row| row.get(0),
                )
                .optional()?)
        })?;
        text.map(|t| {
            serde_json::from_str(&t)
                .map_err(|e| StoreError::Corrupt(format!("the mark of an import: {e}")))
        })
        .transpose()
    }

    /// Makes `mark` the mark of an import under way (none: removes it), committed to the disk
    /// before this returns (`synchronous = FULL` for this one commit, where the store's
    /// writes are otherwise `NORMAL`): an import's writes into other databases come after it.
    pub(crate) fn set_import_mark(&self, mark: Option<&ImportMark>) -> Result<(), StoreError> {
        let text = mark
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| StoreError::Corrupt(format!("the mark of an import: {e}")))?;
        self.run_blocking(|conn, _| {
            conn.pragma_update(None, "synchronous", "FULL")?;
            let written = match &text {
                Some(text) => conn.execute(
                    "INSERT INTO settings (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [IMPORT_KEY, text.as_str()],
                ),
                None => conn.execute("DELETE FROM settings WHERE key = ?1", [IMPORT_KEY]),
            };
            let normal = conn.pragma_update(None, "synchronous", "NORMAL");
            written?;
            normal?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_of_an_import_is_kept_until_removed() {
        let dir =
            std::env::temp_dir().join(format!("svc-import-mark-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("data.sqlite");
        let mark = ImportMark {
            dir: "state/".to_owned(),
            began_at: "2026-01-01T00:00:00.000Z".to_owned(),
        };
        {
            let store = Store::open(Some(&data)).unwrap();
            assert_eq!(store.import_mark().unwrap(), None);
            store.set_import_mark(Some(&mark)).unwrap();
        }
        let store = Store::open(Some(&data)).unwrap();
        assert_eq!(store.import_mark().unwrap(), Some(mark));
        store.set_import_mark(None).unwrap();
        assert_eq!(store.import_mark().unwrap(), None);
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
