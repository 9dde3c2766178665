//! Inbox to state (design §4, §5): the watermark rule and the InboxPoller,
//! the Pump and processOne, and the transactional processors.

pub mod failure;
pub mod group;
pub mod identity;
pub mod inbox_poller;
pub mod ladder;
pub mod process_one;
pub mod processors;
pub mod pump;
pub mod unknown;
pub mod watermark;
