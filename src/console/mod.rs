//! The operator console (docs/console.md): server-rendered HTML
//! pages over the same read models and services the CLI uses, on the
//! hardened listener of [`crate::http::listener`]. Forms work without
//! JavaScript; every element a test or an operator's script needs has a
//! stable `id` (listed in docs/console.md).

pub mod access;
mod actions;
mod audit;
pub mod audit_filter;
pub mod chart;
pub mod filter;
mod history;
pub mod live;
mod live_stream;
pub mod oidc;
mod pages;
pub mod rights;
mod server;
pub mod session;
mod sso;
mod state;
mod views;

pub use server::{ConsoleError, ConsoleServer, bind, preflight};
pub use state::{ConsoleState, JobLauncher, Principal};
