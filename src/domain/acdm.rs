//! The A-CDM time codes (EUROCONTROL Airport CDM): the vocabulary the flight
//! state records milestone provenance under and [`milestones`](super::milestones)
//! derives. Its own file so that both can use it without depending on each
//! other.

use serde::{Deserialize, Serialize};

/// The 21 A-CDM time codes msgx knows (EUROCONTROL Airport CDM
/// Implementation Manual, milestones M1–M16 and their time parameters).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum MilestoneCode {
    /// Scheduled in-block time.
    Sibt,
    /// Estimated landing time.
    Eldt,
    /// Target landing time.
    Tldt,
    /// Actual landing time.
    Aldt,
    /// Estimated in-block time.
    Eibt,
    /// Actual in-block time.
    Aibt,
    /// Actual commencement of ground handling.
    Acgt,
    /// Scheduled off-block time.
    Sobt,
    /// Estimated off-block time.
    Eobt,
    /// Target off-block time.
    Tobt,
    /// Actual start boarding time.
    Asbt,
    /// Actual ready time.
    Ardt,
    /// Actual end of ground handling.
    Aegt,
    /// Target start-up approval time.
    Tsat,
    /// Actual start-up request time.
    Asrt,
    /// Actual start-up approval time.
    Asat,
    /// Actual off-block time.
    Aobt,
    /// Estimated take-off time.
    Etot,
    /// Target take-off time.
    Ttot,
    /// Calculated take-off time (the network manager's slot).
    Ctot,
    /// Actual take-off time.
    Atot,
}

impl MilestoneCode {
    /// Every code, in the order of docs/events.md (arrival, then departure).
    pub const ALL: [MilestoneCode; 21] = [
        Self::Sibt,
        Self::Eldt,
        Self::Tldt,
        Self::Aldt,
        Self::Eibt,
        Self::Aibt,
        Self::Acgt,
        Self::Sobt,
        Self::Eobt,
        Self::Tobt,
        Self::Asbt,
        Self::Ardt,
        Self::Aegt,
        Self::Tsat,
        Self::Asrt,
        Self::Asat,
        Self::Aobt,
        Self::Etot,
        Self::Ttot,
        Self::Ctot,
        Self::Atot,
    ];

    /// The code as A-CDM writes it (`SOBT`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sibt => "SIBT",
            Self::Eldt => "ELDT",
            Self::Tldt => "TLDT",
            Self::Aldt => "ALDT",
            Self::Eibt => "EIBT",
            Self::Aibt => "AIBT",
            Self::Acgt => "ACGT",
            Self::Sobt => "SOBT",
            Self::Eobt => "EOBT",
            Self::Tobt => "TOBT",
            Self::Asbt => "ASBT",
            Self::Ardt => "ARDT",
            Self::Aegt => "AEGT",
            Self::Tsat => "TSAT",
            Self::Asrt => "ASRT",
            Self::Asat => "ASAT",
            Self::Aobt => "AOBT",
            Self::Etot => "ETOT",
            Self::Ttot => "TTOT",
            Self::Ctot => "CTOT",
            Self::Atot => "ATOT",
        }
    }

    /// The code of an A-CDM name (`"AOBT"`), exact upper case.
    pub fn from_name(name: &str) -> Option<MilestoneCode> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }
}
