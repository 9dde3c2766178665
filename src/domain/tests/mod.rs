//! Domain tests (style §6): one module per area.

mod cascade;
mod flop_table;
mod schd;
mod support;
