//! The built-in tools resource `__svc_app__` (users and teams) of every project: its schema and
//! its seeded teams; its schema is SQLite's (`svc_emulator_sqlite::TOOLS_SEED_SQL`), which the
//! catalog opens through `crate::catalog::Databases::open_tools`.

/// The teams every project's built-in tools resource starts with: (uid, name), in name order.
pub const SEEDED_TEAMS: [(&str, &str); 3] = [
    ("00000000-0000-4000-8000-000000000001", "Admins"),
    ("00000000-0000-4000-8000-000000000002", "Editors"),
    ("00000000-0000-4000-8000-000000000003", "Viewers"),
];
