//! Records of connected resources: SQLite databases whose tables are models.
