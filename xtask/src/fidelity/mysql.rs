//! `--mysql`: the two databases both servers read, on one MariaDB (or MySQL) server (crate
//! `maria-server`: `SVC_TEST_MYSQL_URL`, the machine's own on 127.0.0.1:3306, or a throwaway
//! one), and the copy from the engine's into the emulator's.
//!
//! Both databases are filled by the same script (`dataset::mysql_sql`, the SQLite tables and
//! rows in MySQL's types, then `my_shapes::sql`, MySQL's own types and key shapes, kept as
//! `target/fidelity/run/dataset.mysql.sql`) with the `mariadb` client. Each has a name of its own (the process id in it), and is dropped when the run ends.
//!
//! The copy after a write that left the databases apart: on the emulator's database, with
//! foreign key checks off, every table emptied and filled again from the engine's
//! (`INSERT ... SELECT` across the two databases of the server), then each table's
//! `AUTO_INCREMENT` set to the engine's table's (read from `information_schema.TABLES`, which
//! MariaDB reads live): a create the database refused (a foreign key, a trigger) has used a
//! value up, so the next key is not always the largest one plus one. InnoDB raises a value below
//! the largest key plus one to it.

use maria_server::{Database, Server};

use super::dataset::{self, TABLES};
use super::engine;
use super::families;
use super::my_shapes;
use super::rounded_keys;

/// The server's two databases: the engine's (the reference copy) and the emulator's.
#[derive(Debug)]
pub struct Databases {
    engine: Database<'static>,
    emulator: Database<'static>,
}

impl Databases {
    /// Finds or starts the server and writes both databases for `seed` (the script is kept
    /// in `dir`).
    pub fn create(dir: &std::path::Path, seed: u64) -> Result<Databases, String> {
        eprintln!("fidelity: finding a MariaDB server");
        let server = Server::shared().map_err(|e| format!("MariaDB: {e}"))?;
        let script = dataset::mysql_sql(seed) + &my_shapes::sql(seed);
        let path = dir.join("dataset.mysql.sql");
        std::fs::write(&path, &script).map_err(|e| format!("writing {}: {e}", path.display()))?;
        let make = |prefix: &str| -> Result<Database<'static>, String> {
            let db = server
                .database(prefix)
                .map_err(|e| format!("creating a database: {e}"))?;
            db.sql(&script)
                .map_err(|e| format!("filling {}: {e}", db.name()))?;
            Ok(db)
        };
        Ok(Databases {
            engine: make("fidelity_engine")?,
            emulator: make("fidelity_emulator")?,
        })
    }

    /// The engine's database options ([`engine::mysql_args`]).
    pub fn engine_args(&self) -> Result<Vec<String>, String> {
        let server = Server::shared().map_err(|e| format!("MariaDB: {e}"))?;
        let (host, port) = server.address();
        let url = self.engine.url();
        let user = url
            .strip_prefix("mysql://")
            .and_then(|rest| rest.split_once('@'))
            .map(|(user, _)| user)
            .filter(|user| !user.contains(':'))
            .ok_or_else(|| "the harness passes no password to the engine".to_owned())?;
        Ok(engine::mysql_args(host, port, user, self.engine.name()))
    }

    /// The emulator's resource `database`: its database's URL.
    pub fn emulator_url(&self) -> String {
        self.emulator.url()
    }

    /// Copies every table from the engine's database into the emulator's, or `only` these
    /// (tables no foreign key refers to).
    pub fn copy_tables(&self, only: Option<&[&str]>) -> Result<(), String> {
        // Not strict: `SELECT *` gives the generated columns (`fam_parent.name_len`) values,
        // which strict mode refuses (ER 1906) and any other mode ignores, computing its own.
        let mut script = String::from(
            "SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION';\nSET FOREIGN_KEY_CHECKS = 0;\n",
        );
        if let Some(names) = only {
            for name in names {
                script.push_str(&format!(
                    "DELETE FROM `{name}`;\nINSERT INTO `{name}` SELECT * FROM `{engine}`.`{name}`;\n",
                    engine = self.engine.name(),
                ));
            }
            script.push_str("SET FOREIGN_KEY_CHECKS = 1;\n");
            return self
                .emulator
                .sql(&script)
                .map(drop)
                .map_err(|e| format!("copying the tables into the emulator's database: {e}"));
        }
        for table in TABLES.iter().rev() {
            script.push_str(&format!("DELETE FROM `{}`;\n", table.name));
        }
        // The families' tables too (writes change them), children first out, parents first in,
        // and the tables whose key stores a value as another (`rounded_keys`).
        let names: Vec<&str> = families::TABLE_NAMES
            .iter()
            .chain(rounded_keys::TABLE_NAMES)
            .copied()
            .collect();
        for name in names.iter().rev() {
            script.push_str(&format!("DELETE FROM `{name}`;\n"));
        }
        for name in &names {
            script.push_str(&format!(
                "INSERT INTO `{name}` SELECT * FROM `{engine}`.`{name}`;\n",
                engine = self.engine.name(),
            ));
        }
        for table in TABLES {
            script.push_str(&format!(
                "INSERT INTO `{name}` SELECT * FROM `{engine}`.`{name}`;\n\
                 SET @next = (SELECT COALESCE(MAX(AUTO_INCREMENT), 1) FROM information_schema.TABLES \
                 WHERE TABLE_SCHEMA = '{engine}' AND TABLE_NAME = '{name}');\n\
                 SET @alter = CONCAT('ALTER TABLE `{name}` AUTO_INCREMENT = ', @next);\n\
                 PREPARE copy_next FROM @alter;\nEXECUTE copy_next;\nDEALLOCATE PREPARE copy_next;\n",
                name = table.name,
                engine = self.engine.name(),
            ));
        }
        script.push_str("SET FOREIGN_KEY_CHECKS = 1;\n");
        self.emulator
            .sql(&script)
            .map(drop)
            .map_err(|e| format!("copying the tables into the emulator's database: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_gets_host_port_user_name_and_charset() {
        assert_eq!(
            engine::mysql_args("127.0.0.1", 3306, "root", "fidelity_engine_1_0"),
            [
                "--database_engine=mysql+pymysql",
                "--database_host=127.0.0.1",
                "--database_port=3306",
                "--database_user=root",
                "--database_name=fidelity_engine_1_0",
                "--database_extra=charset=utf8mb4",
            ]
        );
    }

    #[test]
    fn columns_are_declared_in_mysqls_types() {
        let decls: Vec<String> = TABLES
            .iter()
            .flat_map(|t| t.columns_in(dataset::Backend::Mysql))
            .map(|c| c.mysql())
            .collect();
        for expected in [
            "INT AUTO_INCREMENT PRIMARY KEY",
            "TEXT NOT NULL",
            "VARCHAR(80)",
            "DOUBLE",
            "DECIMAL(10, 2)",
            "TINYINT(1)",
            "DATETIME(6)",
            "TIMESTAMP(6) NULL",
            "INT REFERENCES people(id)",
            "VARCHAR(16) PRIMARY KEY",
            "FLOAT",
        ] {
            assert!(decls.iter().any(|d| d == expected), "{expected}: {decls:?}");
        }
        assert!(!decls.iter().any(|d| d.contains("jsonb")));
    }
}
