//! Domain tests (style §6): one module per area.

mod cascade;
mod changes;
mod contract;
mod events;
mod fixtures;
mod flop_case;
mod flop_table;
mod flop_table_collections;
mod merge;
mod milestones;
mod props;
mod schd;
mod slices;
mod support;
