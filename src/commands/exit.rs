//! The exit codes of every `msgx` command (issue 2, item 5): 0 ok ·
//! 1 runtime failure · 2 invalid config or usage · 3 job not implemented
//! yet · 4 lock held elsewhere or lost · 5 a decoded message is malformed ·
//! 6 a decoded message has a codec error. Here, below `cli.rs`, so that the
//! command handlers use them without importing the CLI (issue 19, item 6).

pub const OK: i32 = 0;
pub const FAILURE: i32 = 1;
pub const CONFIG: i32 = 2;
pub const NOT_IMPLEMENTED: i32 = 3;
pub const LOCKED: i32 = 4;
/// `msgx decode`: a message is MALFORMED.
pub const MALFORMED: i32 = 5;
/// `msgx decode`: a message has a CODEC_ERROR (and none is MALFORMED).
pub const CODEC: i32 = 6;
