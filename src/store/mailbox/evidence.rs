//! Transaction evidence for holes: which transactions are
//! open on the mailbox server, from `information_schema.INNODB_TRX` (MariaDB
//! and MySQL; the mailbox user needs the global PROCESS privilege, without
//! it the server refuses with 1227 — it never returns a silently empty
//! list). The rule that uses it is `domain::watermark::no_live_writer`.
//!
//! Two server facts shape the read:
//! - InnoDB serves INNODB_TRX from a cache that it refills only when nobody
//!   read it for 100 ms (`trx0i_s.cc`, `CACHE_MIN_IDLE_TIME`): under
//!   frequent readers a read may show an old list that lacks a transaction
//!   open now. So the read runs inside a transaction of its own (START
//!   TRANSACTION WITH CONSISTENT SNAPSHOT makes it an open InnoDB
//!   transaction) and names itself with a nonce; the list is *fresh* only
//!   when it shows this session running this very statement.
//! - `trx_started` is a DATETIME the server renders in its *system* time
//!   zone, whatever the session's; MariaDB converts it back under
//!   `time_zone = 'SYSTEM'` for this one statement (`SET STATEMENT`). MySQL
//!   ignores that executable comment and uses the session zone, which is
//!   SYSTEM unless the site changed it (docs/operations.md).
//!
//! The evidence is valid only on the server that allocates the IDs
//! (`domain::evidence`): the read also returns which server
//! answered (`@@server_id`) and whether it is read-only, and, when the
//! caller does not know that server's role yet, its role — Galera
//! (`wsrep_on`) and replication sources (`SHOW ALL SLAVES STATUS` on
//! MariaDB, `SHOW REPLICA STATUS` on MySQL; they need SLAVE MONITOR or
//! REPLICATION CLIENT, without which the role is `Replication::Unknown`) —
//! inside the same transaction, so that a proxy routes them together.

use super::{Mailbox, MailboxError, denied};
use crate::domain::evidence::{Replication, ServerRole};
use crate::domain::watermark::TrxSnapshot;
use mysql_async::prelude::Queryable;
use std::sync::atomic::{AtomicU64, Ordering};

/// Makes each evidence statement's text unique on its connection.
static NONCE: AtomicU64 = AtomicU64::new(0);

/// The evidence statement, named by `nonce` (which must not contain `'`).
fn statement(nonce: &str) -> String {
    format!(
        "/*M! SET STATEMENT time_zone = 'SYSTEM' FOR */ SELECT '{nonce}', \
         COALESCE(MAX(trx_mysql_thread_id = CONNECTION_ID() AND LOCATE('{nonce}', trx_query) > 0), 0), \
         MIN(IF(trx_mysql_thread_id = CONNECTION_ID(), NULL, UNIX_TIMESTAMP(trx_started))), \
         @@server_id, IF(@@read_only IN ('0', 'OFF'), 0, 1) \
         FROM information_schema.INNODB_TRX"
    )
}

/// One evidence read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceRead {
    pub snapshot: TrxSnapshot,
    /// `@@server_id` of the server that answered.
    pub server_id: i64,
    /// `@@read_only` there, read every time (a demotion usually sets it first).
    pub read_only: bool,
    /// That server's role, read when the caller did not know it.
    pub role: Option<ServerRole>,
}

impl Mailbox {
    /// Reads the server's open transactions once, on one connection in one
    /// transaction: START TRANSACTION WITH CONSISTENT SNAPSHOT, the read,
    /// then — unless `known_role_of` names the server that answered — two
    /// statements for its role ([`server_role`]), COMMIT. A missing PROCESS
    /// privilege is an error for which [`MailboxError::is_access_denied`]
    /// holds; a missing privilege for the replication status is
    /// [`Replication::Unknown`].
    pub async fn transaction_evidence(
        &self,
        known_role_of: Option<i64>,
    ) -> Result<EvidenceRead, MailboxError> {
        let nonce = format!("msgx-evidence-{}", NONCE.fetch_add(1, Ordering::Relaxed));
        let sql = statement(&nonce);
        let (row, role) = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                let mut opts = mysql_async::TxOpts::default();
                opts.with_consistent_snapshot(true);
                let mut tx = conn.start_transaction(opts).await?;
                // On an error the dropped transaction is rolled back by the
                // pool before the connection is used again.
                let row: Option<(String, i64, Option<i64>, i64, i64)> = tx.query_first(sql).await?;
                let role = match row {
                    Some((_, _, _, server_id, read_only)) if known_role_of != Some(server_id) => {
                        Some(server_role(&mut tx, server_id, read_only != 0).await?)
                    }
                    _ => None,
                };
                tx.commit().await?;
                Ok((row, role))
            })
            .await?;
        Ok(match row {
            Some((_, own, oldest, server_id, read_only)) => EvidenceRead {
                snapshot: TrxSnapshot {
                    fresh: own == 1,
                    oldest_start_secs: oldest,
                },
                server_id,
                read_only: read_only != 0,
                role,
            },
            // An aggregate always returns a row; nothing here is evidence.
            None => EvidenceRead {
                snapshot: TrxSnapshot {
                    fresh: false,
                    oldest_start_secs: None,
                },
                server_id: 0,
                read_only: true,
                role: None,
            },
        })
    }
}

/// The role of the server behind `q`: Galera from `wsrep_on` (absent on a
/// server without it: off), replication sources from the replica status of
/// the server's flavour (`@@version` names MariaDB). Two statements.
async fn server_role<Q: Queryable + Send>(
    q: &mut Q,
    server_id: i64,
    read_only: bool,
) -> Result<ServerRole, mysql_async::Error> {
    let vars: Vec<(String, String)> = q
        .query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('version', 'wsrep_on')")
        .await?;
    let var = |name: &str| {
        vars.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let wsrep_on = var("wsrep_on").is_some_and(|v| v.eq_ignore_ascii_case("ON"));
    let mariadb = var("version").is_some_and(|v| v.contains("MariaDB"));
    let replication = match replica_sources(q, mariadb).await {
        Ok(sources) if sources.is_empty() => Replication::None,
        Ok(sources) => Replication::Sources(sources),
        Err(e) if denied(&e) => Replication::Unknown,
        Err(e) => return Err(e),
    };
    Ok(ServerRole {
        server_id,
        read_only,
        wsrep_on,
        replication,
    })
}

/// The configured replication sources (`host:port`), running or stopped:
/// MariaDB `SHOW ALL SLAVES STATUS` (every named connection), MySQL
/// `SHOW REPLICA STATUS` (8.0.22+, every channel), else `SHOW SLAVE STATUS`.
async fn replica_sources<Q: Queryable + Send>(
    q: &mut Q,
    mariadb: bool,
) -> Result<Vec<String>, mysql_async::Error> {
    let rows: Vec<mysql_async::Row> = if mariadb {
        q.query("SHOW ALL SLAVES STATUS").await?
    } else {
        match q.query("SHOW REPLICA STATUS").await {
            Err(mysql_async::Error::Server(e)) if e.code == 1064 => {
                q.query("SHOW SLAVE STATUS").await?
            }
            other => other?,
        }
    };
    let text = |row: &mysql_async::Row, names: [&str; 2]| {
        names
            .iter()
            .find_map(|n| row.get_opt::<Option<String>, &str>(*n).and_then(Result::ok))
            .flatten()
            .unwrap_or_default()
    };
    Ok(rows
        .iter()
        .map(|r| {
            format!(
                "{}:{}",
                text(r, ["Master_Host", "Source_Host"]),
                text(r, ["Master_Port", "Source_Port"])
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_statement_names_itself_and_leaves_its_own_session_out() {
        let sql = super::statement("msgx-evidence-7");
        assert_eq!(sql.matches("'msgx-evidence-7'").count(), 2);
        assert!(sql.contains("IF(trx_mysql_thread_id = CONNECTION_ID(), NULL"));
        assert!(sql.contains("@@server_id, IF(@@read_only IN ('0', 'OFF'), 0, 1)"));
    }
}
