//! Stores: msgx's PostgreSQL (`pg`) and the shared MySQL mailbox (`mailbox`).

pub mod mailbox;
pub mod pg;
