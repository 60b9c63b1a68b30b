//! MySQL's driver (`flow::driver`): mysql_async on pooled connections, which the pool resets
//! (`COM_RESET_CONNECTION`) before another request takes them.

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Row};

use crate::flow::driver::Driver;
use crate::mysql::MyResource;
use crate::mysql::filter::Params;
use crate::mysql::types::value_text;

impl Driver for MyResource {
    type Conn = Conn;
    type Row = Row;
    type Binds = Params;
    type Fault = mysql_async::Error;

    async fn batch(conn: &mut Conn, sql: &str) -> Result<(), mysql_async::Error> {
        conn.query_drop(sql).await
    }

    async fn rows(
        conn: &mut Conn,
        sql: &str,
        binds: &Params,
    ) -> Result<Vec<Row>, mysql_async::Error> {
        conn.exec(sql, binds.values()).await
    }

    fn text(row: &Row, i: usize) -> Option<String> {
        value_text(row.as_ref(i)?)
    }

    /// Dropped, a pooled connection would go back to the pool, where a `KILL QUERY` still on
    /// its way could stop another caller's statement: it is disconnected instead.
    fn close(conn: Conn) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = conn.disconnect().await;
            });
        }
    }

    /// Given back to the pool, which resets it before anyone else takes it: the transaction
    /// rolled back, the session's variables (a restore's `foreign_key_checks`) as the server
    /// sets them (the pool is made `with_reset_connection`).
    fn give_up(conn: Conn) {
        drop(conn);
    }
}
