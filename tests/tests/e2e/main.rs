//! End-to-end tests: the SDK against the emulator over real sockets on loopback.

mod account;
mod actions;
mod auth_walk;
mod bulk;
mod call_options;
mod connection;
mod custom_transport;
mod faults;
mod interop;
mod pages;
mod properties;
mod proxy;
mod records;
mod reload;
mod secrets;
mod security;
mod spans;
mod sql;
mod tools;
mod tower;
