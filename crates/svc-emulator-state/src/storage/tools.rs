//! The built-in tools resource `__svc_app__` (users and teams) of every project: its schema and
//! its seeded teams; its schema is SQLite's (`svc_emulator_sqlite::TOOLS_SEED_SQL`). The catalog
//! opens its database (`crate::catalog::open`).

/// The teams every project's built-in tools resource starts with: (uid, name), in name order.
pub const SEEDED_TEAMS: [(&str, &str); 3] = [
    ("00000000-0000-4000-8000-000000000001", "Admins"),
    ("00000000-0000-4000-8000-000000000002", "Editors"),
    ("00000000-0000-4000-8000-000000000003", "Viewers"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use svc_emulator_sqlite::{Resource, TOOLS_SEED_SQL};
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
