//! The clusters themselves, against real PostgreSQL binaries. Ignored by default, so that
//! `cargo test --workspace` needs no PostgreSQL; `cargo xtask ci` runs them with `--ignored`.

use std::path::Path;
use std::time::Instant;

use pg_cluster::Cluster;

/// The postmaster's pid, from the first line of `postmaster.pid`.
fn server_pid(dir: &Path) -> u32 {
    let text = std::fs::read_to_string(dir.join("data").join("postmaster.pid"))
        .expect("the running server's postmaster.pid");
    text.lines()
        .next()
        .and_then(|line| line.trim().parse().ok())
        .expect("a pid on the first line")
}

#[test]
#[ignore = "needs PostgreSQL binaries: run with --ignored (cargo xtask ci does)"]
fn a_cluster_starts_answers_and_is_gone_once_dropped() {
    let started = Instant::now();
    let cluster = Cluster::start().expect("start a cluster");
    eprintln!("a cluster started in {:?}", started.elapsed());

    assert_eq!(cluster.user(), "postgres");
    assert_ne!(cluster.port(), 0);
    assert_eq!(
        cluster.url("postgres"),
        format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port())
    );
    let settings = cluster
        .psql(
            "postgres",
            "SELECT current_user; SHOW server_encoding; SHOW listen_addresses; SHOW port; \
             SHOW fsync; SHOW unix_socket_directories",
        )
        .expect("psql");
    assert_eq!(
        settings,
        format!(
            "postgres\nUTF8\n127.0.0.1\n{}\noff\n\"{}\"\n",
            cluster.port(),
            cluster.dir().display()
        )
    );

    let dir = cluster.dir().to_path_buf();
    let pid = server_pid(&dir);
    let port = cluster.port();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    let stopping = Instant::now();
    drop(cluster);
    eprintln!("stopped and removed in {:?}", stopping.elapsed());
    assert!(!dir.exists(), "{} is removed", dir.display());
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the server ({pid}) is stopped"
    );
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
#[ignore = "needs PostgreSQL binaries: run with --ignored (cargo xtask ci does)"]
fn create_database_makes_an_empty_database_that_keeps_unicode_text() {
    let cluster = Cluster::shared().expect("the shared cluster");
    cluster
        .create_database("pg_cluster_unicode")
        .expect("create");
    assert_eq!(
        cluster
            .psql(
                "pg_cluster_unicode",
                "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"
            )
            .expect("count"),
        "0\n"
    );
    let text = "Grüße, 東京 — ½ € 🎉";
    let out = cluster
        .psql(
            "pg_cluster_unicode",
            &format!(
                "CREATE TABLE note (id int PRIMARY KEY, body text);\n\
                 INSERT INTO note VALUES (1, '{text}');\n\
                 SELECT body, length(body), octet_length(body) FROM note;"
            ),
        )
        .expect("round trip");
    assert_eq!(
        out,
        format!("{text}|{}|{}\n", text.chars().count(), text.len())
    );

    let again = cluster
        .create_database("pg_cluster_unicode")
        .expect_err("it exists");
    assert!(again.to_string().contains("already exists"), "{again}");

    // A name that needs quoting in SQL and encoding in the URL.
    let odd = "pg cluster \"odd\" é";
    cluster.create_database(odd).expect("create odd");
    assert_eq!(
        cluster
            .psql(odd, "SELECT current_database()")
            .expect("psql"),
        format!("{odd}\n")
    );
    assert!(
        cluster
            .url(odd)
            .ends_with("/pg%20cluster%20%22odd%22%20%C3%A9")
    );
}

#[test]
#[ignore = "needs PostgreSQL binaries: run with --ignored (cargo xtask ci does)"]
fn psql_stops_at_the_first_error_and_returns_its_message() {
    let cluster = Cluster::shared().expect("the shared cluster");
    cluster
        .create_database("pg_cluster_errors")
        .expect("create");
    let err = cluster
        .psql(
            "pg_cluster_errors",
            "CREATE TABLE seen (x int);\nSELECT * FROM missing;\nINSERT INTO seen VALUES (1);",
        )
        .expect_err("the script fails");
    let message = err.to_string();
    assert!(
        message.contains("relation \"missing\" does not exist"),
        "{message}"
    );
    assert!(message.contains("pg_cluster_errors"), "{message}");
    // ON_ERROR_STOP: the statement after the error never ran; the one before it did.
    assert_eq!(
        cluster
            .psql("pg_cluster_errors", "SELECT count(*) FROM seen")
            .expect("count"),
        "0\n"
    );

    let err = cluster
        .psql("pg_cluster_no_such_db", "SELECT 1")
        .expect_err("no such database");
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[test]
#[ignore = "needs PostgreSQL binaries: run with --ignored (cargo xtask ci does)"]
fn two_clusters_run_at_once_each_with_its_own_port_dir_and_data() {
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(Cluster::start);
        let b = s.spawn(Cluster::start);
        (
            a.join().expect("thread a").expect("start a"),
            b.join().expect("thread b").expect("start b"),
        )
    });
    assert_ne!(a.port(), b.port());
    assert_ne!(a.dir(), b.dir());
    a.psql("postgres", "CREATE TABLE only_in_a (x int)")
        .expect("create in a");
    let query = "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'";
    assert_eq!(a.psql("postgres", query).expect("a"), "1\n");
    assert_eq!(b.psql("postgres", query).expect("b"), "0\n");
    let port_of = |c: &Cluster| c.psql("postgres", "SHOW port").expect("port");
    assert_eq!(port_of(&a), format!("{}\n", a.port()));
    assert_eq!(port_of(&b), format!("{}\n", b.port()));
}

#[test]
#[ignore = "needs PostgreSQL binaries: run with --ignored (cargo xtask ci does)"]
fn shared_returns_the_same_cluster_to_every_caller() {
    let clusters: Vec<&'static Cluster> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(Cluster::shared)).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread").expect("shared"))
            .collect()
    });
    let first = Cluster::shared().expect("shared");
    for cluster in &clusters {
        assert!(std::ptr::eq(*cluster, first));
    }
    assert_eq!(
        first.psql("postgres", "SELECT 40 + 2").expect("psql"),
        "42\n"
    );
}
