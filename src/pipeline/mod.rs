//! Inbox to state (design §4, §5): the watermark rule, the InboxPoller.

pub mod inbox_poller;
pub mod watermark;
