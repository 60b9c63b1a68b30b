//! Page settings rows and the draft rules (docs/contract.md 4.2).
//!
//! Each environment holds two sets of pages, published and draft. A write to the draft set
//! touches only the draft set. A write to the published set also writes the same page into the
//! draft set, so that a draft always starts from what is published. Each operation is one
//! transaction, so the two sets never disagree halfway.

use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::{Map, Value};

use super::{Store, StoreError};
use crate::util::timestamp::MonotonicClock;

/// Which of an environment's two sets of pages a request reads and writes (query `draft`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageSet {
    /// `draft=0`: the published pages.
    Published,
    /// `draft=1`: the draft pages.
    Draft,
}

impl PageSet {
    fn column(self) -> i64 {
        match self {
            Self::Published => 0,
            Self::Draft => 1,
        }
    }
}

/// The project and environment whose pages an operation works on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvScope {
    /// The project.
    pub project: String,
    /// The environment.
    pub environment: String,
}

/// One stored page.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPage {
    uid: String,
    date_add: String,
    /// Every field given by clients, without the ones the server owns.
    fields: Map<String, Value>,
    set: PageSet,
}

/// The outcome of a create.
#[derive(Debug)]
pub enum Created {
    /// The page as stored.
    Page(StoredPage),
    /// The set already has a page with this uid.
    UidTaken,
}

/// Fields the server sets on every page it returns; values given by clients are dropped.
pub(crate) const SERVER_FIELDS: [&str; 4] = ["uid", "date_add", "draft", "deleted"];

impl StoredPage {
    /// The page as answered on the wire: the stored fields plus `uid`, `date_add`, `draft` (true
    /// when read from the draft set) and `deleted` (always false: deleted pages are gone).
    pub fn into_json(self) -> Value {
        let mut map = self.fields;
        map.insert("uid".to_owned(), Value::String(self.uid));
        map.insert("date_add".to_owned(), Value::String(self.date_add));
        map.insert("draft".to_owned(), Value::Bool(self.set == PageSet::Draft));
        map.insert("deleted".to_owned(), Value::Bool(false));
        Value::Object(map)
    }
}

impl Store {
    /// Every page of a set, ordered by `date_add`, then `uid`.
    pub async fn list_pages(
        &self,
        scope: EnvScope,
        set: PageSet,
    ) -> Result<Vec<StoredPage>, StoreError> {
        self.run(move |conn, _| {
            let mut stmt = conn.prepare(
                "SELECT uid, date_add, fields FROM pages
                 WHERE project = ?1 AND environment = ?2 AND draft = ?3
                 ORDER BY date_add, uid",
            )?;
            let rows = stmt.query_map(
                params![scope.project, scope.environment, set.column()],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )?;
            rows.map(|row| {
                let (uid, date_add, fields): (String, String, String) = row?;
                page_from_row(uid, date_add, &fields, set)
            })
            .collect()
        })
        .await
    }

    /// One page of a set.
    pub async fn get_page(
        &self,
        scope: EnvScope,
        set: PageSet,
        uid: String,
    ) -> Result<Option<StoredPage>, StoreError> {
        self.run(move |conn, _| {
            let tx = conn.transaction()?;
            let page = read(&tx, &scope, set, &uid)?;
            tx.commit()?;
            Ok(page)
        })
        .await
    }

    /// Creates a page with the given uid (or a new UUID) and the current time as `date_add`. In
    /// the published set, the same page is also written to the draft set (replacing any draft of
    /// that uid).
    pub async fn create_page(
        &self,
        scope: EnvScope,
        set: PageSet,
        uid: Option<String>,
        mut fields: Map<String, Value>,
    ) -> Result<Created, StoreError> {
        for key in SERVER_FIELDS {
            fields.remove(key);
        }
        self.run(move |conn, clock: &MonotonicClock| {
            let tx = conn.transaction()?;
            let uid = uid.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            if read(&tx, &scope, set, &uid)?.is_some() {
                return Ok(Created::UidTaken);
            }
            let page = StoredPage {
                uid,
                date_add: clock.next(),
                fields,
                set,
            };
            write(&tx, &scope, &page, set)?;
            if set == PageSet::Published {
                write(&tx, &scope, &page, PageSet::Draft)?;
            }
            tx.commit()?;
            Ok(Created::Page(page))
        })
        .await
    }

    /// Replaces `params` of a page. `None` changes nothing (and writes nothing). In the published
    /// set, the draft copy becomes the same page (created if missing). `Ok(None)`: no such page.
    pub async fn update_page_params(
        &self,
        scope: EnvScope,
        set: PageSet,
        uid: String,
        params: Option<String>,
    ) -> Result<Option<StoredPage>, StoreError> {
        self.run(move |conn, _| {
            let tx = conn.transaction()?;
            let Some(mut page) = read(&tx, &scope, set, &uid)? else {
                return Ok(None);
            };
            if let Some(params) = params {
                page.fields
                    .insert("params".to_owned(), Value::String(params));
                write(&tx, &scope, &page, set)?;
                if set == PageSet::Published {
                    write(&tx, &scope, &page, PageSet::Draft)?;
                }
            }
            tx.commit()?;
            Ok(Some(page))
        })
        .await
    }

    /// Deletes a page; in the published set, its draft copy too. `Ok(false)`: no such page.
    pub async fn delete_page(
        &self,
        scope: EnvScope,
        set: PageSet,
        uid: String,
    ) -> Result<bool, StoreError> {
        self.run(move |conn, _| {
            let tx = conn.transaction()?;
            let deleted = remove(&tx, &scope, set, &uid)?;
            if deleted && set == PageSet::Published {
                remove(&tx, &scope, PageSet::Draft, &uid)?;
            }
            tx.commit()?;
            Ok(deleted)
        })
        .await
    }
}

fn page_from_row(
    uid: String,
    date_add: String,
    fields: &str,
    set: PageSet,
) -> Result<StoredPage, StoreError> {
    let fields = match serde_json::from_str(fields) {
        Ok(Value::Object(map)) => map,
        Ok(_) => {
            return Err(StoreError::Corrupt(format!(
                "page {uid:?} is not an object"
            )));
        }
        Err(e) => return Err(StoreError::Corrupt(format!("page {uid:?}: {e}"))),
    };
    Ok(StoredPage {
        uid,
        date_add,
        fields,
        set,
    })
}

fn read(
    tx: &Transaction<'_>,
    scope: &EnvScope,
    set: PageSet,
    uid: &str,
) -> Result<Option<StoredPage>, StoreError> {
    let row: Option<(String, String)> = tx
        .query_row(
            "SELECT date_add, fields FROM pages
             WHERE project = ?1 AND environment = ?2 AND draft = ?3 AND uid = ?4",
            params![scope.project, scope.environment, set.column(), uid],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    row.map(|(date_add, fields): (String, String)| {
        page_from_row(uid.to_owned(), date_add, &fields, set)
    })
    .transpose()
}

/// Writes `page` into `set`, replacing a page of the same uid.
fn write(
    tx: &Transaction<'_>,
    scope: &EnvScope,
    page: &StoredPage,
    set: PageSet,
) -> Result<(), StoreError> {
    let fields = Value::Object(page.fields.clone()).to_string();
    tx.execute(
        "INSERT OR REPLACE INTO pages (project, environment, draft, uid, date_add, fields)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            scope.project,
            scope.environment,
            set.column(),
            page.uid,
            page.date_add,
            fields
        ],
    )?;
    Ok(())
}

fn remove(
    tx: &Transaction<'_>,
    scope: &EnvScope,
    set: PageSet,
    uid: &str,
) -> Result<bool, StoreError> {
    let n = tx.execute(
        "DELETE FROM pages WHERE project = ?1 AND environment = ?2 AND draft = ?3 AND uid = ?4",
        params![scope.project, scope.environment, set.column(), uid],
    )?;
    Ok(n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scope() -> EnvScope {
        EnvScope {
            project: "demo".into(),
            environment: "prod".into(),
        }
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[tokio::test]
    async fn published_writes_mirror_into_drafts() {
        let store = Store::open(None).unwrap();
        let Created::Page(page) = store
            .create_page(
                scope(),
                PageSet::Published,
                Some("a".into()),
                obj(json!({"x": 1, "draft": true})),
            )
            .await
            .unwrap()
        else {
            panic!("uid taken")
        };
        let json = page.into_json();
        assert_eq!(json["draft"], false);
        let draft = store
            .get_page(scope(), PageSet::Draft, "a".into())
            .await
            .unwrap()
            .unwrap()
            .into_json();
        assert_eq!(draft["draft"], true);
        assert_eq!(draft["x"], 1);
        assert_eq!(draft["date_add"], json["date_add"]);

        store
            .update_page_params(scope(), PageSet::Published, "a".into(), Some("{}".into()))
            .await
            .unwrap()
            .unwrap();
        let draft = store
            .get_page(scope(), PageSet::Draft, "a".into())
            .await
            .unwrap()
            .unwrap()
            .into_json();
        assert_eq!(draft["params"], "{}");

        assert!(
            store
                .delete_page(scope(), PageSet::Published, "a".into())
                .await
                .unwrap()
        );
        assert!(
            store
                .list_pages(scope(), PageSet::Draft)
                .await
                .unwrap()
                .is_empty()
        );
    }

    #[tokio::test]
    async fn uid_conflicts_are_per_set() {
        let store = Store::open(None).unwrap();
        let create = |set| store.create_page(scope(), set, Some("u".into()), Map::new());
        assert!(matches!(
            create(PageSet::Draft).await.unwrap(),
            Created::Page(_)
        ));
        assert!(matches!(
            create(PageSet::Draft).await.unwrap(),
            Created::UidTaken
        ));
        assert!(matches!(
            create(PageSet::Published).await.unwrap(),
            Created::Page(_)
        ));
        assert!(matches!(
            create(PageSet::Published).await.unwrap(),
            Created::UidTaken
        ));
    }
}
