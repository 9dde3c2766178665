//! Inbox to state (design §4, §5): the InboxPoller (its watermark rule is
//! domain/watermark.rs), the Pump and processOne, and the transactional
//! processors.

pub mod group;
pub mod identity;
pub mod inbox_poller;
pub mod ladder;
pub mod pipeline_lock;
pub mod process_one;
pub mod processors;
pub mod pump;
pub mod unknown;
