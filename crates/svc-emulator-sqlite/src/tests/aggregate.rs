//! The aggregate and group rules of the data engine, pinned case by case.
//!
//! Every expected answer below is the engine's own (PyPI `jet-bridge` 1.12.13 over SQLite
//! 3.40.1, asked over HTTP with the same query on a database holding [`FIXTURE`]): its body
//! when it answers 2xx, otherwise its status. Where the engine answers 5xx the emulator
//! refuses with a 400 (a stricter refusal); where it answers 400 so does the emulator.

use serde_json::Value as Json;

use super::Reply;
use crate::Resource;
use svc_engine::forms::RequestForm;
use svc_engine::request::query_pairs;
use svc_engine::request::selection;
use svc_engine::*;

const FIXTURE: &str = r#"
CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, n NUMERIC, d DECIMAL(10, 2), dd DECIMAL,
    f FLOAT, b BOOLEAN, dt DATE, ts DATETIME, tx TEXT, u, bl BLOB, vc VARCHAR(10));
INSERT INTO t VALUES (1, 5, 1.5, 10, 2.25, 3.5, 0.1, 1, '2024-03-05', '2024-03-05 10:11:12', 'abc', 7,
    x'6869', '12');
INSERT INTO t VALUES (2, 7, 2.25, 10.5, 1, 2, 0.2, 0, '2024-05-20', '2024-05-20 23:59:59.123456', '42',
    'x', NULL, '3.5');
INSERT INTO t VALUES (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO t VALUES (4, 5, 0.7, 30945, 0, 0, 0.3, 1, '2023-12-31', '2023-12-31 00:00:00', '7.5', 2.5,
    x'00', 'zz');
CREATE TABLE nopk (a INTEGER, "Weird Name" TEXT, "select" TEXT);
INSERT INTO nopk VALUES (1, 'x', 'y');
CREATE TABLE owner (id INTEGER PRIMARY KEY, name TEXT, owner_name TEXT, "2x" TEXT, "Mixed" TEXT,
    "a$b" TEXT);
INSERT INTO owner VALUES (1, 'n', 'o', 'z', 'm', 'q');
CREATE TABLE "Order" (id INTEGER PRIMARY KEY, "group" TEXT, y_func INTEGER);
INSERT INTO "Order" VALUES (1, 'g1', 5), (2, 'g1', 7), (3, 'g2', 1);
CREATE TABLE big (id INTEGER PRIMARY KEY, i INTEGER, tx TEXT, bl BLOB);
INSERT INTO big VALUES (1, 9223372036854775807, ' 12 ', x'3132'), (2, 1, '1e3', x'2d'),
    (3, NULL, '-', NULL), (4, NULL, '99999999999999999999', NULL), (5, NULL, '0x10', NULL),
    (6, NULL, '1.5e', NULL);
CREATE TABLE sums (id INTEGER PRIMARY KEY, g INTEGER, r REAL, f FLOAT);
INSERT INTO sums VALUES (1, 2, 1e16, 1e16), (2, 1, 0.1, 0.1), (3, 2, 1.0, 1.0), (4, 1, 0.2, 0.2),
    (5, 2, -1e16, -1e16), (6, 1, 0.3, 0.3), (7, 3, 1.0, 1.0), (8, 3, 1e16, 1e16),
    (9, 3, -1e16, -1e16), (10, 2, 2.5, 2.5);
"#;

/// What the engine answered.
enum Engine {
    /// A 2xx with this body.
    Answer(&'static str),
    /// A refusal with this status.
    Refused(u16),
}
use Engine::*;

/// Answers `model/aggregate?query` or `model/group?query` as the http layer does: the GET form,
/// then the selection of the same query.
fn get(r: &Resource, target: &str, lenient: bool) -> Result<Json, EngineError> {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let (model, action) = path.split_once('/').unwrap();
    let pairs = query_pairs(Some(query));
    let sel = selection(&pairs, lenient);
    match action {
        "aggregate" => r.aggregate(model, &AggregateRequest::from_query(&pairs)?, &sel),
        "group" => r.group(model, &GroupRequest::from_query(&pairs)?, &sel),
        other => panic!("no action {other}"),
    }
}

fn check(cases: &[(&str, Engine)]) {
    let r = Resource::in_memory(FIXTURE).unwrap();
    for (target, engine) in cases {
        match (get(&r, target, false), engine) {
            (Ok(got), Answer(body)) => {
                let want: Json = serde_json::from_str(body).unwrap();
                // `Json` equality tells 1 from 1.0, and "1" from 1.
                assert_eq!(got, want, "{target}");
                assert_eq!(get(&r, target, true).ok(), Some(want), "lenient {target}");
            }
            (Err(e @ EngineError::Invalid { .. }), Refused(status)) => {
                assert!(matches!(status, 400 | 500), "{target}: {e}");
                // Lenient mode fails where the engine fails, and refuses where it refuses.
                let lenient = get(&r, target, true).unwrap_err();
                let want = if *status == 500 {
                    "engine_failure"
                } else {
                    "invalid"
                };
                assert_eq!(
                    lenient.body().error_code,
                    want,
                    "lenient {target}: {lenient}"
                );
            }
            (got, Answer(body)) => panic!("{target}: the engine answers {body}, we {got:?}"),
            (got, Refused(status)) => panic!("{target}: the engine refuses ({status}), we {got:?}"),
        }
    }
}

#[test]
fn aggregate_values_follow_the_y_serializer() {
    check(&[
        (
            r#"t/aggregate?_y_func=count&_y_column=id"#,
            Answer(r#"{"y_func": 4}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=id"#,
            Answer(r#"{"y_func": 10}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=id"#,
            Answer(r#"{"y_func": 2.5}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=id"#,
            Answer(r#"{"y_func": 1}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=id"#,
            Answer(r#"{"y_func": 4}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=i"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=i"#,
            Answer(r#"{"y_func": 17}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=i"#,
            Answer(r#"{"y_func": 5.666666666666667}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=i"#,
            Answer(r#"{"y_func": 5}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=i"#,
            Answer(r#"{"y_func": 7}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=r"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=r"#,
            Answer(r#"{"y_func": "4.45"}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=r"#,
            Answer(r#"{"y_func": "1.4833333333333334"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=r"#,
            Answer(r#"{"y_func": "0.7"}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=r"#,
            Answer(r#"{"y_func": "2.25"}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=n"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=n"#,
            Answer(r#"{"y_func": "30965.5000000000"}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=n"#,
            Answer(r#"{"y_func": "10321.833333333334"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=n"#,
            Answer(r#"{"y_func": "10.0000000000"}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=n"#,
            Answer(r#"{"y_func": "30945.0000000000"}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=d"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=d"#,
            Answer(r#"{"y_func": "3.25"}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=d"#,
            Answer(r#"{"y_func": "1.0833333333333333"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=d"#,
            Answer(r#"{"y_func": "0.00"}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=d"#,
            Answer(r#"{"y_func": "2.25"}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=dd"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=dd"#,
            Answer(r#"{"y_func": 5.5}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=dd"#,
            Answer(r#"{"y_func": 1.8333333333333333}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=dd"#,
            Answer(r#"{"y_func": 0.0}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=dd"#,
            Answer(r#"{"y_func": 3.5}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=f"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=f"#,
            Answer(r#"{"y_func": 0.6000000000000001}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=f"#,
            Answer(r#"{"y_func": 0.20000000000000004}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=f"#,
            Answer(r#"{"y_func": 0.1}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=f"#,
            Answer(r#"{"y_func": 0.3}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=b"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=b"#,
            Answer(r#"{"y_func": true}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=b"#,
            Answer(r#"{"y_func": 0.6666666666666666}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=b"#,
            Answer(r#"{"y_func": false}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=b"#,
            Answer(r#"{"y_func": true}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=dt"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (r#"t/aggregate?_y_func=sum&_y_column=dt"#, Refused(500)),
        (
            r#"t/aggregate?_y_func=avg&_y_column=dt"#,
            Answer(r#"{"y_func": "2023.6666666666667"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=dt"#,
            Answer(r#"{"y_func": "2023-12-31"}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=dt"#,
            Answer(r#"{"y_func": "2024-05-20"}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=ts"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (r#"t/aggregate?_y_func=sum&_y_column=ts"#, Refused(500)),
        (r#"t/aggregate?_y_func=avg&_y_column=ts"#, Refused(500)),
        (
            r#"t/aggregate?_y_func=min&_y_column=ts"#,
            Answer(r#"{"y_func": "2023-12-31T00:00:00"}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=ts"#,
            Answer(r#"{"y_func": "2024-05-20T23:59:59.123456"}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=tx"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=tx"#,
            Answer(r#"{"y_func": "49.5"}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=tx"#,
            Answer(r#"{"y_func": "16.5"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=tx"#,
            Answer(r#"{"y_func": "42"}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=tx"#,
            Answer(r#"{"y_func": "abc"}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=u"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=u"#,
            Answer(r#"{"y_func": "9.5"}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=u"#,
            Answer(r#"{"y_func": "3.1666666666666665"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=u"#,
            Answer(r#"{"y_func": "2.5"}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=u"#,
            Answer(r#"{"y_func": "x"}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=bl"#,
            Answer(r#"{"y_func": 2}"#),
        ),
        (r#"t/aggregate?_y_func=sum&_y_column=bl"#, Refused(500)),
        (
            r#"t/aggregate?_y_func=avg&_y_column=bl"#,
            Answer(r#"{"y_func": "0.0"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=bl"#,
            Answer(r#"{"y_func": "b'\\x00'"}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=bl"#,
            Answer(r#"{"y_func": "b'hi'"}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=vc"#,
            Answer(r#"{"y_func": 3}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=vc"#,
            Answer(r#"{"y_func": "15.5"}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=vc"#,
            Answer(r#"{"y_func": "5.166666666666667"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=vc"#,
            Answer(r#"{"y_func": "12"}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=vc"#,
            Answer(r#"{"y_func": "zz"}"#),
        ),
        (r#"t/aggregate?_y_func=count"#, Answer(r#"{"y_func": 4}"#)),
        (r#"t/aggregate?_y_func=max"#, Answer(r#"{"y_func": 4}"#)),
    ]);
}

#[test]
fn aggregate_over_no_rows() {
    check(&[
        (
            r#"t/aggregate?_y_func=count&_y_column=i&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=i&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=i&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=i&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=i&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=r&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=r&id=99"#,
            Answer(r#"{"y_func": "0"}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=r&id=99"#,
            Answer(r#"{"y_func": "0"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=r&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=r&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=n&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=n&id=99"#,
            Answer(r#"{"y_func": "0"}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=n&id=99"#,
            Answer(r#"{"y_func": "0"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=n&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=n&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=b&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=b&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=b&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=b&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=b&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=dt&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=dt&id=99"#,
            Answer(r#"{"y_func": "0"}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=dt&id=99"#,
            Answer(r#"{"y_func": "0"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=dt&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=dt&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=ts&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=ts&id=99"#,
            Refused(500),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=ts&id=99"#,
            Refused(500),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=ts&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=ts&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_y_column=tx&id=99"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=tx&id=99"#,
            Answer(r#"{"y_func": "0"}"#),
        ),
        (
            r#"t/aggregate?_y_func=avg&_y_column=tx&id=99"#,
            Answer(r#"{"y_func": "0"}"#),
        ),
        (
            r#"t/aggregate?_y_func=min&_y_column=tx&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
        (
            r#"t/aggregate?_y_func=max&_y_column=tx&id=99"#,
            Answer(r#"{"y_func": null}"#),
        ),
    ]);
}

#[test]
fn unknown_functions() {
    check(&[
        (
            r#"t/aggregate?_y_func=median&_y_column=id"#,
            Answer(r#"{"y_func": {}}"#),
        ),
        (
            r#"t/aggregate?_y_func=median&_y_column=i"#,
            Answer(r#"{"y_func": {}}"#),
        ),
        (
            r#"t/aggregate?_y_func=median&_y_column=r"#,
            Answer(
                r#"{"y_func": "SELECT t.id AS t_id, t.i AS t_i, t.r AS t_r, t.n AS t_n, t.d AS t_d, t.dd AS t_dd, t.f AS t_f, t.b AS t_b, t.dt AS t_dt, t.ts AS t_ts, t.tx AS t_tx, t.u AS t_u, t.bl AS t_bl, t.vc AS t_vc \nFROM t \nWHERE 0 = 1"}"#,
            ),
        ),
        (
            r#"t/aggregate?_y_func=median&_y_column=dd"#,
            Answer(r#"{"y_func": {}}"#),
        ),
        (
            r#"t/aggregate?_y_func=median&_y_column=f"#,
            Answer(r#"{"y_func": {}}"#),
        ),
        (
            r#"t/aggregate?_y_func=median&_y_column=b"#,
            Answer(r#"{"y_func": {}}"#),
        ),
        (r#"t/aggregate?_y_func=median&_y_column=ts"#, Refused(500)),
        (
            r#"t/aggregate?_y_func=median&_y_column=tx"#,
            Answer(
                r#"{"y_func": "SELECT t.id AS t_id, t.i AS t_i, t.r AS t_r, t.n AS t_n, t.d AS t_d, t.dd AS t_dd, t.f AS t_f, t.b AS t_b, t.dt AS t_dt, t.ts AS t_ts, t.tx AS t_tx, t.u AS t_u, t.bl AS t_bl, t.vc AS t_vc \nFROM t \nWHERE 0 = 1"}"#,
            ),
        ),
        (
            r#"t/aggregate?_y_func=median&_y_column=bl"#,
            Answer(
                r#"{"y_func": "SELECT t.id AS t_id, t.i AS t_i, t.r AS t_r, t.n AS t_n, t.d AS t_d, t.dd AS t_dd, t.f AS t_f, t.b AS t_b, t.dt AS t_dt, t.ts AS t_ts, t.tx AS t_tx, t.u AS t_u, t.bl AS t_bl, t.vc AS t_vc \nFROM t \nWHERE 0 = 1"}"#,
            ),
        ),
        (r#"t/aggregate?_y_func=median"#, Answer(r#"{"y_func": {}}"#)),
        (
            r#"t/aggregate?_y_func=&_y_column=i"#,
            Answer(r#"{"y_func": {}}"#),
        ),
        (
            r#"t/aggregate?_y_func=&_y_column=r"#,
            Answer(
                r#"{"y_func": "SELECT t.id AS t_id, t.i AS t_i, t.r AS t_r, t.n AS t_n, t.d AS t_d, t.dd AS t_dd, t.f AS t_f, t.b AS t_b, t.dt AS t_dt, t.ts AS t_ts, t.tx AS t_tx, t.u AS t_u, t.bl AS t_bl, t.vc AS t_vc \nFROM t \nWHERE 0 = 1"}"#,
            ),
        ),
        (
            r#"t/aggregate?_y_func=median&_y_column=nosuch"#,
            Refused(400),
        ),
        (
            r#"t/aggregate?_y_func=median&_y_column=tx&_order_by=-id,i"#,
            Answer(
                r#"{"y_func": "SELECT t.id AS t_id, t.i AS t_i, t.r AS t_r, t.n AS t_n, t.d AS t_d, t.dd AS t_dd, t.f AS t_f, t.b AS t_b, t.dt AS t_dt, t.ts AS t_ts, t.tx AS t_tx, t.u AS t_u, t.bl AS t_bl, t.vc AS t_vc \nFROM t \nWHERE 0 = 1 ORDER BY t.id DESC, t.i"}"#,
            ),
        ),
        (
            r#"t/aggregate?_y_func=median&_y_column=tx&_order_by=i"#,
            Answer(
                r#"{"y_func": "SELECT t.id AS t_id, t.i AS t_i, t.r AS t_r, t.n AS t_n, t.d AS t_d, t.dd AS t_dd, t.f AS t_f, t.b AS t_b, t.dt AS t_dt, t.ts AS t_ts, t.tx AS t_tx, t.u AS t_u, t.bl AS t_bl, t.vc AS t_vc \nFROM t \nWHERE 0 = 1"}"#,
            ),
        ),
        (
            r#"t/aggregate?_y_func=median&_y_column=tx&i__gt=1"#,
            Answer(
                r#"{"y_func": "SELECT t.id AS t_id, t.i AS t_i, t.r AS t_r, t.n AS t_n, t.d AS t_d, t.dd AS t_dd, t.f AS t_f, t.b AS t_b, t.dt AS t_dt, t.ts AS t_ts, t.tx AS t_tx, t.u AS t_u, t.bl AS t_bl, t.vc AS t_vc \nFROM t \nWHERE 0 = 1"}"#,
            ),
        ),
        (
            r#"nopk/aggregate?_y_func=median&_y_column=select"#,
            Answer(
                r#"{"y_func": "SELECT nopk.a AS nopk_a, nopk.\"Weird Name\" AS \"nopk_Weird Name\", nopk.\"select\" AS nopk_select \nFROM nopk \nWHERE 0 = 1"}"#,
            ),
        ),
        (
            r#"owner/aggregate?_y_func=median&_y_column=name"#,
            Answer(
                r#"{"y_func": "SELECT owner.id AS owner_id, owner.name AS owner_name_1, owner.owner_name AS owner_owner_name, owner.\"2x\" AS owner_2x, owner.\"Mixed\" AS \"owner_Mixed\", owner.a$b AS owner_a$b \nFROM owner \nWHERE 0 = 1"}"#,
            ),
        ),
        (
            r#"Order/aggregate?_y_func=median&_y_column=group"#,
            Answer(
                r#"{"y_func": "SELECT \"Order\".id AS \"Order_id\", \"Order\".\"group\" AS \"Order_group\", \"Order\".y_func AS \"Order_y_func\" \nFROM \"Order\" \nWHERE 0 = 1"}"#,
            ),
        ),
        (r#"t/group?_x_column=i&_y_func=median"#, Answer(r#"[]"#)),
        (r#"t/group?_x_column=i&_y_func="#, Answer(r#"[]"#)),
        (
            r#"t/group?_x_column=tx&_x_lookup=date_day&_y_func=median"#,
            Answer(r#"[]"#),
        ),
        (r#"t/group?_x_column=nosuch&_y_func=median"#, Refused(500)),
        (
            r#"t/group?_x_column=i&_y_func=median&_y_column=nosuch"#,
            Refused(500),
        ),
    ]);
}

#[test]
fn function_and_column_arguments() {
    check(&[
        (
            r#"t/aggregate?_y_func=SUM&_y_column=i"#,
            Answer(r#"{"y_func": 17}"#),
        ),
        (
            r#"t/aggregate?_y_func=%20Avg%20&_y_column=%20i%20"#,
            Answer(r#"{"y_func": 5.666666666666667}"#),
        ),
        (r#"t/aggregate?_y_column=i"#, Refused(400)),
        (r#"t/group?_x_column=i"#, Refused(400)),
        (r#"t/aggregate?_y_func=sum&_y_column="#, Refused(400)),
        (r#"t/aggregate?_y_func=count&_y_column="#, Refused(500)),
        (
            r#"t/aggregate?_y_func=count&_y_column=nosuch"#,
            Refused(500),
        ),
        (r#"t/aggregate?_y_func=sum&_y_column=nosuch"#, Refused(400)),
        (
            r#"t/group?_x_column=i&_y_func=Max&_y_column=r"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 1.5}, {"group": 7, "y_func": 2.25}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column="#,
            Refused(500),
        ),
        (r#"t/group?_x_column=%20i&_y_func=count"#, Refused(500)),
        (r#"t/group?_x_column=&_y_func=count"#, Refused(500)),
        (r#"t/group?_x_column=nosuch&_y_func=count"#, Refused(500)),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=nosuch"#,
            Refused(500),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=i&_y_func=max"#,
            Answer(r#"{"y_func": 7}"#),
        ),
    ]);
}

#[test]
fn sums_follow_sqlite_3_40() {
    check(&[
        (
            r#"sums/aggregate?_y_func=sum&_y_column=r"#,
            Answer(r#"{"y_func": "4.5"}"#),
        ),
        (
            r#"sums/aggregate?_y_func=sum&_y_column=f"#,
            Answer(r#"{"y_func": 4.5}"#),
        ),
        (
            r#"sums/aggregate?_y_func=avg&_y_column=f"#,
            Answer(r#"{"y_func": 0.45}"#),
        ),
        (
            r#"sums/aggregate?_y_func=avg&_y_column=r"#,
            Answer(r#"{"y_func": "0.45"}"#),
        ),
        (
            r#"sums/group?_x_column=g&_y_func=sum&_y_column=f"#,
            Answer(
                r#"[{"group": 1, "y_func": 0.6000000000000001}, {"group": 2, "y_func": 2.5}, {"group": 3, "y_func": 0.0}]"#,
            ),
        ),
        (
            r#"sums/group?_x_column=g&_y_func=avg&_y_column=r"#,
            Answer(
                r#"[{"group": 1, "y_func": 0.20000000000000004}, {"group": 2, "y_func": 0.625}, {"group": 3, "y_func": 0.0}]"#,
            ),
        ),
        (
            r#"sums/group?_x_column=g&_y_func=sum&_y_column=r"#,
            Answer(
                r#"[{"group": 1, "y_func": 0.6000000000000001}, {"group": 2, "y_func": 2.5}, {"group": 3, "y_func": 0.0}]"#,
            ),
        ),
        (
            r#"sums/group?_y_func=sum&_y_column=r"#,
            Answer(r#"[{"y_func": 4.5}]"#),
        ),
        (
            r#"sums/aggregate?_y_func=sum&_y_column=f&g=1"#,
            Answer(r#"{"y_func": 0.6000000000000001}"#),
        ),
        (
            r#"sums/aggregate?_y_func=sum&_y_column=f&id__gte=3"#,
            Answer(r#"{"y_func": -9999999999999994.0}"#),
        ),
        (
            r#"sums/group?_x_column=g&_y_func=sum&_y_column=f&id__gte=2"#,
            Answer(
                r#"[{"group": 1, "y_func": 0.6000000000000001}, {"group": 2, "y_func": -9999999999999998.0}, {"group": 3, "y_func": 0.0}]"#,
            ),
        ),
        (r#"big/aggregate?_y_func=sum&_y_column=i"#, Refused(500)),
        (
            r#"big/group?_y_func=sum&_y_column=i&_x_column=i"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 1, "y_func": 1}, {"group": 9223372036854775807, "y_func": 9223372036854775807}]"#,
            ),
        ),
        (
            r#"big/aggregate?_y_func=avg&_y_column=i"#,
            Answer(r#"{"y_func": 4.611686018427388e+18}"#),
        ),
        (
            r#"big/group?_y_func=avg&_y_column=i&_x_column=i"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 1, "y_func": 1.0}, {"group": 9223372036854775807, "y_func": 9.223372036854776e+18}]"#,
            ),
        ),
        (
            r#"big/aggregate?_y_func=sum&_y_column=tx"#,
            Answer(r#"{"y_func": "1e+20"}"#),
        ),
        (
            r#"big/group?_y_func=sum&_y_column=tx&_x_column=tx"#,
            Answer(
                r#"[{"group": " 12 ", "y_func": 12}, {"group": "-", "y_func": 0.0}, {"group": "0x10", "y_func": 0.0}, {"group": "1.5e", "y_func": 1.5}, {"group": "1e3", "y_func": 1000.0}, {"group": "99999999999999999999", "y_func": 1e+20}]"#,
            ),
        ),
        (
            r#"big/aggregate?_y_func=avg&_y_column=tx"#,
            Answer(r#"{"y_func": "1.6666666666666666e+19"}"#),
        ),
        (
            r#"big/group?_y_func=avg&_y_column=tx&_x_column=tx"#,
            Answer(
                r#"[{"group": " 12 ", "y_func": 12.0}, {"group": "-", "y_func": 0.0}, {"group": "0x10", "y_func": 0.0}, {"group": "1.5e", "y_func": 1.5}, {"group": "1e3", "y_func": 1000.0}, {"group": "99999999999999999999", "y_func": 1e+20}]"#,
            ),
        ),
        (r#"big/aggregate?_y_func=sum&_y_column=bl"#, Refused(500)),
        (
            r#"big/group?_y_func=sum&_y_column=bl&_x_column=bl"#,
            Refused(500),
        ),
        (
            r#"big/aggregate?_y_func=avg&_y_column=bl"#,
            Answer(r#"{"y_func": "6.0"}"#),
        ),
        (
            r#"big/group?_y_func=avg&_y_column=bl&_x_column=bl"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": "-", "y_func": 0.0}, {"group": "12", "y_func": 12.0}]"#,
            ),
        ),
    ]);
}

#[test]
fn group_values_are_encoded_python_values() {
    check(&[
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=i"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=i"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 10}, {"group": 7, "y_func": 7}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=i"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 5.0}, {"group": 7, "y_func": 7.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=i"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 5}, {"group": 7, "y_func": 7}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=i"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 5}, {"group": 7, "y_func": 7}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=r"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=r"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2.2}, {"group": 7, "y_func": 2.25}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=r"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 1.1}, {"group": 7, "y_func": 2.25}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=r"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 0.7}, {"group": 7, "y_func": 2.25}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=r"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 1.5}, {"group": 7, "y_func": 2.25}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=n"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=n"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 30955.0}, {"group": 7, "y_func": 10.5}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=n"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 15477.5}, {"group": 7, "y_func": 10.5}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=n"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 10.0}, {"group": 7, "y_func": 10.5}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=n"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 30945.0}, {"group": 7, "y_func": 10.5}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=d"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=d"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2.25}, {"group": 7, "y_func": 1.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=d"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 1.125}, {"group": 7, "y_func": 1.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=d"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 0.0}, {"group": 7, "y_func": 1.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=d"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 2.25}, {"group": 7, "y_func": 1.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=dd"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=dd"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 3.5}, {"group": 7, "y_func": 2.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=dd"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 1.75}, {"group": 7, "y_func": 2.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=dd"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 0.0}, {"group": 7, "y_func": 2.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=dd"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 3.5}, {"group": 7, "y_func": 2.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=f"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=f"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 0.4}, {"group": 7, "y_func": 0.2}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=f"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 0.2}, {"group": 7, "y_func": 0.2}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=f"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 0.1}, {"group": 7, "y_func": 0.2}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=f"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 0.3}, {"group": 7, "y_func": 0.2}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=b"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=b"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": true}, {"group": 7, "y_func": false}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=b"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 1.0}, {"group": 7, "y_func": 0.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=b"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": true}, {"group": 7, "y_func": false}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=b"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": true}, {"group": 7, "y_func": false}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=dt"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=dt"#,
            Refused(500),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=dt"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2023.5}, {"group": 7, "y_func": 2024.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=dt"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": "2023-12-31"}, {"group": 7, "y_func": "2024-05-20"}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=dt"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": "2024-03-05"}, {"group": 7, "y_func": "2024-05-20"}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=ts"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=ts"#,
            Refused(500),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=ts"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2023.5}, {"group": 7, "y_func": 2024.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=ts"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": "2023-12-31T00:00:00"}, {"group": 7, "y_func": "2024-05-20T23:59:59.123456"}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=ts"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": "2024-03-05T10:11:12"}, {"group": 7, "y_func": "2024-05-20T23:59:59.123456"}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=tx"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=tx"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 7.5}, {"group": 7, "y_func": 42}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=tx"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 3.75}, {"group": 7, "y_func": 42.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=tx"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": "7.5"}, {"group": 7, "y_func": "42"}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=tx"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": "abc"}, {"group": 7, "y_func": "42"}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=u"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=u"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 9.5}, {"group": 7, "y_func": 0.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=u"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 4.75}, {"group": 7, "y_func": 0.0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=u"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 2.5}, {"group": 7, "y_func": "x"}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=u"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": 7}, {"group": 7, "y_func": "x"}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=bl"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=bl"#,
            Refused(500),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=bl"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 0.0}, {"group": 7, "y_func": 0}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=bl"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": "\u0000"}, {"group": 7, "y_func": null}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=bl"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": "hi"}, {"group": 7, "y_func": null}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_y_column=vc"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=sum&_y_column=vc"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 12.0}, {"group": 7, "y_func": 3.5}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=avg&_y_column=vc"#,
            Answer(
                r#"[{"group": null, "y_func": 0}, {"group": 5, "y_func": 6.0}, {"group": 7, "y_func": 3.5}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=min&_y_column=vc"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": "12"}, {"group": 7, "y_func": "3.5"}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=max&_y_column=vc"#,
            Answer(
                r#"[{"group": null, "y_func": null}, {"group": 5, "y_func": "zz"}, {"group": 7, "y_func": "3.5"}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=id&_y_func=count"#,
            Answer(
                r#"[{"group": 1, "y_func": 1}, {"group": 2, "y_func": 1}, {"group": 3, "y_func": 1}, {"group": 4, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=r&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": 0.7, "y_func": 1}, {"group": 1.5, "y_func": 1}, {"group": 2.25, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=n&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": 10.0, "y_func": 1}, {"group": 10.5, "y_func": 1}, {"group": 30945.0, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=d&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": 0.0, "y_func": 1}, {"group": 1.0, "y_func": 1}, {"group": 2.25, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dd&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": 0.0, "y_func": 1}, {"group": 2.0, "y_func": 1}, {"group": 3.5, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=f&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": 0.1, "y_func": 1}, {"group": 0.2, "y_func": 1}, {"group": 0.3, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=b&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": false, "y_func": 1}, {"group": true, "y_func": 2}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31T00:00:00", "y_func": 1}, {"group": "2024-03-05T10:11:12", "y_func": 1}, {"group": "2024-05-20T23:59:59.123456", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=tx&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "42", "y_func": 1}, {"group": "7.5", "y_func": 1}, {"group": "abc", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=u&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": 2.5, "y_func": 1}, {"group": 7, "y_func": 1}, {"group": "x", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=bl&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 2}, {"group": "\u0000", "y_func": 1}, {"group": "hi", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=vc&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "12", "y_func": 1}, {"group": "3.5", "y_func": 1}, {"group": "zz", "y_func": 1}]"#,
            ),
        ),
    ]);
}

#[test]
fn group_lookups_as_on_sqlite() {
    check(&[
        (
            r#"t/group?_x_column=dt&_x_lookup=plain&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=auto&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_day&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_week&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_month&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-01", "y_func": 1}, {"group": "2024-03-01", "y_func": 1}, {"group": "2024-05-01", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_quarter&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_year&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-01-01", "y_func": 1}, {"group": "2024-01-01", "y_func": 2}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_hour&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31 00:00:00", "y_func": 1}, {"group": "2024-03-05 00:00:00", "y_func": 1}, {"group": "2024-05-20 00:00:00", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_minute&_y_func=count"#,
            Answer(r#"[{"group": null, "y_func": 4}]"#),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_second&_y_func=count"#,
            Answer(r#"[{"group": null, "y_func": 4}]"#),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_microseconds&_y_func=count"#,
            Answer(r#"[{"group": null, "y_func": 4}]"#),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_fortnight&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=foo&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_day_x&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=DATE_DAY&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=plain&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31T00:00:00", "y_func": 1}, {"group": "2024-03-05T10:11:12", "y_func": 1}, {"group": "2024-05-20T23:59:59.123456", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=auto&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_day&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_week&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31T00:00:00", "y_func": 1}, {"group": "2024-03-05T10:11:12", "y_func": 1}, {"group": "2024-05-20T23:59:59.123456", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_month&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-01", "y_func": 1}, {"group": "2024-03-01", "y_func": 1}, {"group": "2024-05-01", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_quarter&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31T00:00:00", "y_func": 1}, {"group": "2024-03-05T10:11:12", "y_func": 1}, {"group": "2024-05-20T23:59:59.123456", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_year&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-01-01", "y_func": 1}, {"group": "2024-01-01", "y_func": 2}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_hour&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31 00:00:00", "y_func": 1}, {"group": "2024-03-05 10:00:00", "y_func": 1}, {"group": "2024-05-20 23:00:00", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_minute&_y_func=count"#,
            Answer(r#"[{"group": null, "y_func": 4}]"#),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_second&_y_func=count"#,
            Answer(r#"[{"group": null, "y_func": 4}]"#),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_microseconds&_y_func=count"#,
            Answer(r#"[{"group": null, "y_func": 4}]"#),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_fortnight&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31T00:00:00", "y_func": 1}, {"group": "2024-03-05T10:11:12", "y_func": 1}, {"group": "2024-05-20T23:59:59.123456", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=foo&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31T00:00:00", "y_func": 1}, {"group": "2024-03-05T10:11:12", "y_func": 1}, {"group": "2024-05-20T23:59:59.123456", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=date_day_x&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31", "y_func": 1}, {"group": "2024-03-05", "y_func": 1}, {"group": "2024-05-20", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=DATE_DAY&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31T00:00:00", "y_func": 1}, {"group": "2024-03-05T10:11:12", "y_func": 1}, {"group": "2024-05-20T23:59:59.123456", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=ts&_x_lookup=&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "2023-12-31T00:00:00", "y_func": 1}, {"group": "2024-03-05T10:11:12", "y_func": 1}, {"group": "2024-05-20T23:59:59.123456", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_x_lookup=auto&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_x_lookup=date_day&_y_func=count"#,
            Refused(400),
        ),
        (
            r#"t/group?_x_column=tx&_x_lookup=date_week&_y_func=count"#,
            Refused(400),
        ),
        (
            r#"t/group?_x_column=tx&_x_lookup=date&_y_func=count"#,
            Refused(400),
        ),
        (
            r#"t/group?_x_column=tx&_x_lookup=datex&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": "42", "y_func": 1}, {"group": "7.5", "y_func": 1}, {"group": "abc", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=b&_x_lookup=dateday&_y_func=count"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": false, "y_func": 1}, {"group": true, "y_func": 2}]"#,
            ),
        ),
    ]);
}

#[test]
fn group_columns_limits_and_names() {
    check(&[
        (
            r#"t/group?_x_column=i&_x_column=b&_y_func=count"#,
            Answer(
                r#"[{"group": null, "group_2": null, "y_func": 1}, {"group": 5, "group_2": true, "y_func": 2}, {"group": 7, "group_2": false, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=plain&_x_column=ts&_x_lookup=date_month&_y_func=count"#,
            Answer(
                r#"[{"group": null, "group_2": null, "y_func": 1}, {"group": "2023-12-31", "group_2": "2023-12-01", "y_func": 1}, {"group": "2024-03-05", "group_2": "2024-03-01", "y_func": 1}, {"group": "2024-05-20", "group_2": "2024-05-01", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_lookup=date_year&_x_column=ts&_y_func=count"#,
            Answer(
                r#"[{"group": null, "group_2": null, "y_func": 1}, {"group": "2023-01-01", "group_2": "2023-12-31T00:00:00", "y_func": 1}, {"group": "2024-01-01", "group_2": "2024-03-05T10:11:12", "y_func": 1}, {"group": "2024-01-01", "group_2": "2024-05-20T23:59:59.123456", "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=dt&_x_column=dt&_x_column=i&_y_func=count"#,
            Answer(
                r#"[{"group": null, "group_2": null, "group_3": null, "y_func": 1}, {"group": "2023-12-31", "group_2": "2023-12-31", "group_3": 5, "y_func": 1}, {"group": "2024-03-05", "group_2": "2024-03-05", "group_3": 5, "y_func": 1}, {"group": "2024-05-20", "group_2": "2024-05-20", "group_3": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_lookup=date_year&_y_func=sum&_y_column=i"#,
            Answer(r#"[{"y_func": 17}]"#),
        ),
        (
            r#"t/group?_x_column=id&_y_func=count&_per_page=0"#,
            Answer(r#"[{"group": 1, "y_func": 1}]"#),
        ),
        (
            r#"t/group?_x_column=id&_y_func=count&_per_page=-1"#,
            Answer(r#"[{"group": 1, "y_func": 1}]"#),
        ),
        (
            r#"t/group?_x_column=id&_y_func=count&_per_page=2"#,
            Answer(r#"[{"group": 1, "y_func": 1}, {"group": 2, "y_func": 1}]"#),
        ),
        (
            r#"t/group?_x_column=id&_y_func=count&_per_page=abc"#,
            Answer(
                r#"[{"group": 1, "y_func": 1}, {"group": 2, "y_func": 1}, {"group": 3, "y_func": 1}, {"group": 4, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=id&_y_func=count&_per_page=2.0"#,
            Answer(
                r#"[{"group": 1, "y_func": 1}, {"group": 2, "y_func": 1}, {"group": 3, "y_func": 1}, {"group": 4, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=id&_y_func=count&_per_page=%202%20"#,
            Answer(r#"[{"group": 1, "y_func": 1}, {"group": 2, "y_func": 1}]"#),
        ),
        (
            r#"t/group?_x_column=id&_y_func=count&_per_page=1&_per_page=3"#,
            Answer(
                r#"[{"group": 1, "y_func": 1}, {"group": 2, "y_func": 1}, {"group": 3, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=id&_y_func=count&_per_page="#,
            Answer(
                r#"[{"group": 1, "y_func": 1}, {"group": 2, "y_func": 1}, {"group": 3, "y_func": 1}, {"group": 4, "y_func": 1}]"#,
            ),
        ),
        (
            r#"Order/group?_x_column=group&_y_func=sum&_y_column=y_func"#,
            Answer(r#"[{"group": "g1", "y_func": 12}, {"group": "g2", "y_func": 1}]"#),
        ),
        (
            r#"Order/group?_x_column=y_func&_y_func=count&_y_column=group"#,
            Answer(r#"[{"group": 1, "y_func": 1}, {"group": 5, "y_func": 2}]"#),
        ),
        (
            r#"Order/group?_x_column=id&_x_column=group&_y_func=max&_y_column=y_func"#,
            Answer(
                r#"[{"group": 2, "group_2": "g1", "y_func": 7}, {"group": 3, "group_2": "g2", "y_func": 1}]"#,
            ),
        ),
    ]);
}

#[test]
fn order_by_is_a_filter_too() {
    check(&[
        (
            r#"t/aggregate?_y_func=count&_order_by=i"#,
            Answer(r#"{"y_func": 0}"#),
        ),
        (
            r#"t/aggregate?_y_func=count&_order_by=nosuch"#,
            Refused(500),
        ),
        (
            r#"t/aggregate?_y_func=count&_order_by=id&_order_by=i"#,
            Refused(500),
        ),
        (r#"t/aggregate?_y_func=count&_order_by=-i,"#, Refused(500)),
        (
            r#"t/aggregate?_y_func=sum&_y_column=i&_order_by=-id"#,
            Answer(r#"{"y_func": 17}"#),
        ),
        (
            r#"t/aggregate?_y_func=sum&_y_column=i&_order_by="#,
            Answer(r#"{"y_func": 17}"#),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_order_by=i"#,
            Answer(r#"[]"#),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_order_by=-id,i"#,
            Answer(
                r#"[{"group": null, "y_func": 1}, {"group": 5, "y_func": 2}, {"group": 7, "y_func": 1}]"#,
            ),
        ),
        (
            r#"t/group?_x_column=i&_y_func=count&_order_by=-"#,
            Answer(r#"[]"#),
        ),
    ]);
}

/// An infinite float is `null` to the engine's encoder (its `clean_obj`), as a group key or a
/// value; an infinite `Decimal` (a `NUMERIC` column) is written `Infinity`, which is not JSON,
/// and refused by design.
#[test]
fn a_floats_infinities_are_null_a_decimals_are_refused() {
    let r = Resource::in_memory(
        "CREATE TABLE inf (id INTEGER PRIMARY KEY, f FLOAT, n NUMERIC);
         INSERT INTO inf VALUES (1, 9e999, 9e999), (2, -9e999, 1), (3, 1.5, 2);",
    )
    .unwrap();
    let want: Json = serde_json::from_str(
        r#"[{"group": null, "y_func": 1}, {"group": 1.5, "y_func": 1}, {"group": null, "y_func": 1}]"#,
    )
    .unwrap();
    for lenient in [false, true] {
        let keys = get(&r, "inf/group?_x_column=f&_y_func=count", lenient).unwrap();
        assert_eq!(keys, want, "lenient {lenient}");
    }
    let refused = get(&r, "inf/group?_x_column=n&_y_func=count", false).unwrap_err();
    assert!(
        matches!(refused, EngineError::Invalid { stricter: true, .. }),
        "{refused}"
    );
}
