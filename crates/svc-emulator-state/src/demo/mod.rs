//! The demo resource `shop`: products, customers and orders, generated deterministically by
//! its seed, SQLite SQL kept beside this file (`shop.sql`). The settings name it (the demo
//! project's config), so it sits below them.

/// The API name of the demo resource.
pub(crate) const DEMO_RESOURCE: &str = "shop";

/// The seed, SQLite's SQL (`printf`, `json_extract`, recursive common table expressions).
const SEED: &str = include_str!("shop.sql");

/// The SQL that creates and fills the demo database: `products` (50 rows), `customers` (1000)
/// and `orders` (12000, each referencing a customer and most a product), with NULLs, empty
/// strings, non-ASCII text, booleans, dates over two years (2024 and 2025) and date-times.
/// Deterministic; runs in a few milliseconds.
pub fn demo_seed_sql() -> &'static str {
    SEED
}
