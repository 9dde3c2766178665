//! Stores: msgx's PostgreSQL (`pg`). The mailbox store arrives with ingest.

pub mod pg;
