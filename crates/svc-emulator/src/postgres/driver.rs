//! PostgreSQL's driver (`flow::driver`): tokio-postgres on pooled connections, each keeping the
//! statements it ran prepared.

use deadpool_postgres::{ClientWrapper, Object};
use tokio_postgres::Row;
use tokio_postgres::types::Type;

use crate::flow::driver::Driver;
use crate::postgres::PgResource;
use crate::postgres::filter::Params;

/// Statements a pooled connection keeps prepared; past this it starts afresh. Each list shape
/// (filters, order, paging) is a statement of its own.
const STATEMENTS_PER_CONNECTION: usize = 256;

impl Driver for PgResource {
    type Conn = Object;
    type Row = Row;
    type Binds = Params;
    type Fault = tokio_postgres::Error;

    /// The simple protocol: nothing is prepared, no statement cache fills.
    async fn batch(conn: &mut Object, sql: &str) -> Result<(), tokio_postgres::Error> {
        conn.batch_execute(sql).await
    }

    async fn rows(
        conn: &mut Object,
        sql: &str,
        binds: &Params,
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        prepared_rows(conn, sql, binds).await
    }

    /// An integer of any width as its digits, text (and `name`) as it is.
    fn text(row: &Row, i: usize) -> Option<String> {
        let column = row.columns().get(i)?;
        match *column.type_() {
            Type::INT2 => row
                .try_get::<_, Option<i16>>(i)
                .ok()?
                .map(|n| n.to_string()),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(i)
                .ok()?
                .map(|n| n.to_string()),
            Type::INT8 => row
                .try_get::<_, Option<i64>>(i)
                .ok()?
                .map(|n| n.to_string()),
            _ => row.try_get::<_, Option<String>>(i).ok()?,
        }
    }

    /// Out of the pool, and closed.
    fn close(conn: Object) {
        drop(Object::take(conn));
    }

    fn give_up(conn: Object) {
        roll_back(conn);
    }
}

/// The rows of `sql`, a statement prepared once per connection (up to
/// [`STATEMENTS_PER_CONNECTION`] of them).
pub(crate) async fn prepared_rows(
    client: &ClientWrapper,
    sql: &str,
    binds: &Params,
) -> Result<Vec<Row>, tokio_postgres::Error> {
    if client.statement_cache.size() >= STATEMENTS_PER_CONNECTION {
        client.statement_cache.clear();
    }
    let statement = client.prepare_cached(sql).await?;
    client.query(&statement, &binds.refs()).await
}

/// Gives back a pooled connection left inside a transaction: the rollback runs before the pool
/// hands the connection out again; where it cannot run, the connection is closed instead (the
/// server rolls back).
pub(crate) fn roll_back(client: Object) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async move {
                if client.batch_execute("ROLLBACK").await.is_err() {
                    drop(Object::take(client));
                }
            });
        }
        Err(_) => drop(Object::take(client)),
    }
}
