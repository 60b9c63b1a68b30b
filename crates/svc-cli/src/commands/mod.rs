//! One module per command group.

pub mod actions;
pub mod config;
pub mod demo;
pub mod emulator;
pub mod exec;
pub mod pages;
pub mod projects;
pub mod proxy;
pub mod records;
pub mod resources;
pub mod session;
pub mod sql;
pub mod teams;
pub mod users;
pub mod workflows;
