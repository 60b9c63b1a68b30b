//! Rules of the backend interface that hold on every database, each written once as a function
//! of a target and run on each (the conformance suite's way, `tests/conformance.rs`, for what
//! only the crate can reach: `Backend` is the crate's own).

mod save_restore;
