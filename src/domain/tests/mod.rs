//! Domain tests (style §6): one module per area.

mod flop_table;
mod support;
