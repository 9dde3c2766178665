//! The merge rules, one file per message family (design §12).

pub mod adft;
pub mod apply;
pub mod convert;
pub mod fdel;
pub mod flop;
pub mod flop_collections;
pub mod flop_scalars;
pub mod schd;
