//! Where transaction evidence for holes is valid, as a
//! pure decision over facts read from the mailbox server.
//!
//! Evidence (`watermark::no_live_writer`) reads the server's open
//! transactions: it proves that no writer can still commit into a hole only
//! on the server that allocates the IDs, where every writer's transaction
//! lives. A replica applies the primary's commits later and shows none of
//! the primary's open transactions; a Galera node does not see the
//! transactions open on the other nodes; a read-only server is not where
//! the writers write. There the evidence is not used and a hole ages by the
//! time rule (`max-commit-delay`, design §4.1). What cannot be told (the
//! replication status needs a privilege the user lacks) counts as not
//! valid: a wrong release loses a message, a missed one only waits.

/// Replication sources configured on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replication {
    /// None: the server replicates from nobody.
    None,
    /// It is a replica of these sources (`host:port`), running or stopped.
    Sources(Vec<String>),
    /// The replication status could not be read (no privilege).
    Unknown,
}

/// What the mailbox server says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRole {
    /// `@@server_id`: which server answered (a pooled connection or a proxy
    /// may reach another).
    pub server_id: i64,
    /// `@@read_only`.
    pub read_only: bool,
    /// `@@wsrep_on` (absent = off): a Galera cluster node.
    pub wsrep_on: bool,
    pub replication: Replication,
}

/// Whether transaction evidence releases holes, and if not, why. Exported
/// as the `state` label of `msgx_ingest_hole_evidence`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EvidenceState {
    /// Not determined yet (the poller reads it when a hole first needs it),
    /// or the last read failed.
    #[default]
    Unknown,
    Valid,
    /// `msgx.pipeline.hole-evidence = false`.
    Disabled,
    /// The mailbox user lacks the PROCESS privilege.
    NoPrivilege,
    ReadOnly,
    Replica,
    Galera,
    /// The replication status cannot be read (no SLAVE MONITOR / REPLICATION
    /// CLIENT): a replica cannot be ruled out.
    Unverified,
    /// The fetch and the evidence read were answered by different servers
    /// (a read/write-splitting proxy).
    Split,
}

impl EvidenceState {
    pub const ALL: [EvidenceState; 9] = [
        Self::Unknown,
        Self::Valid,
        Self::Disabled,
        Self::NoPrivilege,
        Self::ReadOnly,
        Self::Replica,
        Self::Galera,
        Self::Unverified,
        Self::Split,
    ];

    /// The label value and the status/JSON text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Valid => "valid",
            Self::Disabled => "disabled",
            Self::NoPrivilege => "no-privilege",
            Self::ReadOnly => "read-only",
            Self::Replica => "replica",
            Self::Galera => "galera",
            Self::Unverified => "unverified",
            Self::Split => "split",
        }
    }

    pub fn is_valid(self) -> bool {
        self == Self::Valid
    }

    /// Why, for doctor, status and the log.
    pub fn explain(self) -> &'static str {
        match self {
            Self::Unknown => "not determined yet",
            Self::Valid => {
                "holes are released on transaction evidence (the mailbox server allocates the IDs)"
            }
            Self::Disabled => {
                "msgx.pipeline.hole-evidence = false: holes wait msgx.pipeline.max-commit-delay"
            }
            Self::NoPrivilege => {
                "no PROCESS privilege: holes wait msgx.pipeline.max-commit-delay \
                 (docs/operations.md gives the GRANT)"
            }
            Self::ReadOnly => {
                "the mailbox server is read-only (@@read_only = 1), not where the IDs are \
                 allocated: holes wait msgx.pipeline.max-commit-delay"
            }
            Self::Replica => {
                "the mailbox server is a replica: the writers' transactions are open on its \
                 source, not here; holes wait msgx.pipeline.max-commit-delay"
            }
            Self::Galera => {
                "the mailbox server is a Galera node (wsrep_on): transactions open on other \
                 nodes are not seen; holes wait msgx.pipeline.max-commit-delay"
            }
            Self::Unverified => {
                "the replication status cannot be read (grant SLAVE MONITOR on MariaDB, \
                 REPLICATION CLIENT on MySQL): a replica cannot be ruled out, so holes wait \
                 msgx.pipeline.max-commit-delay"
            }
            Self::Split => {
                "the fetch and the evidence read were answered by different servers (a \
                 read/write-splitting proxy?): holes wait msgx.pipeline.max-commit-delay"
            }
        }
    }
}

impl ServerRole {
    /// The rule: evidence is valid only on a writable, non-Galera server
    /// that is known to replicate from nobody.
    pub fn state(&self) -> EvidenceState {
        match (&self.replication, self.wsrep_on, self.read_only) {
            (Replication::Sources(_), _, _) => EvidenceState::Replica,
            (_, true, _) => EvidenceState::Galera,
            (_, _, true) => EvidenceState::ReadOnly,
            (Replication::Unknown, _, _) => EvidenceState::Unverified,
            (Replication::None, false, false) => EvidenceState::Valid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(read_only: bool, wsrep_on: bool, replication: Replication) -> ServerRole {
        ServerRole {
            server_id: 1,
            read_only,
            wsrep_on,
            replication,
        }
    }

    #[test]
    fn only_a_writable_standalone_primary_is_valid() {
        let source = || Replication::Sources(vec!["db1:3306".into()]);
        for read_only in [false, true] {
            for wsrep in [false, true] {
                for replication in [Replication::None, Replication::Unknown, source()] {
                    let r = role(read_only, wsrep, replication.clone());
                    assert_eq!(
                        r.state().is_valid(),
                        !read_only && !wsrep && replication == Replication::None,
                        "{r:?}"
                    );
                }
            }
        }
        assert_eq!(role(true, true, source()).state(), EvidenceState::Replica);
        assert_eq!(
            role(true, true, Replication::None).state(),
            EvidenceState::Galera
        );
        assert_eq!(
            role(true, false, Replication::Unknown).state(),
            EvidenceState::ReadOnly
        );
        assert_eq!(
            role(false, false, Replication::Unknown).state(),
            EvidenceState::Unverified
        );
    }

    #[test]
    fn labels_are_distinct() {
        let labels: std::collections::BTreeSet<_> =
            EvidenceState::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(labels.len(), EvidenceState::ALL.len());
    }
}
