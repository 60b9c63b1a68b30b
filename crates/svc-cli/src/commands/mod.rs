//! One module per command group.

pub mod demo;
pub mod emulator;
pub mod pages;
pub mod projects;
pub mod records;
