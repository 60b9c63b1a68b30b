//! End-to-end tests: the SDK against the emulator over real sockets on loopback.

mod account;
mod custom_transport;
mod pages;
mod records;
mod reload;
mod sql;
mod tools;
