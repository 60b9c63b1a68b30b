//! The built-in tools resource `__svc_app__` (users and teams) of every project: its schema and
//! its seeded teams. The backend registry opens its database (`crate::catalog::open`).

/// The teams every project's built-in tools resource starts with: (uid, name), in name order.
pub const SEEDED_TEAMS: [(&str, &str); 3] = [
    ("00000000-0000-4000-8000-000000000001", "Admins"),
    ("00000000-0000-4000-8000-000000000002", "Editors"),
    ("00000000-0000-4000-8000-000000000003", "Viewers"),
];

/// The schema and teams of a new built-in tools database.
pub(crate) const TOOLS_SEED_SQL: &str = r#"
CREATE TABLE groups (
    uid TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL
);
CREATE TABLE users (
    uid TEXT PRIMARY KEY NOT NULL,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    "group" TEXT NOT NULL REFERENCES groups(uid),
    date_add DATETIME NOT NULL,
    first_name TEXT,
    last_name TEXT
);
CREATE INDEX users_group ON users("group");
INSERT INTO groups (uid, name) VALUES
    ('00000000-0000-4000-8000-000000000001', 'Admins'),
    ('00000000-0000-4000-8000-000000000002', 'Editors'),
    ('00000000-0000-4000-8000-000000000003', 'Viewers');
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqlite::Resource;
    use serde_json::Value;
    use svc_model::users::TEAMS_MODEL;

    #[test]
    fn seed_matches_the_seeded_teams() {
        let db = Resource::in_memory(TOOLS_SEED_SQL).unwrap();
        for (uid, name) in SEEDED_TEAMS {
            let team: Value =
                serde_json::from_slice(&db.retrieve(TEAMS_MODEL, uid).unwrap()).unwrap();
            assert_eq!(team["name"], name);
        }
    }
}
