//! Transaction evidence for holes (issue 20 item 5): which transactions are
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

use super::{Mailbox, MailboxError};
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
         MIN(IF(trx_mysql_thread_id = CONNECTION_ID(), NULL, UNIX_TIMESTAMP(trx_started))) \
         FROM information_schema.INNODB_TRX"
    )
}

impl Mailbox {
    /// Reads the server's open transactions once (three statements on one
    /// connection: START TRANSACTION WITH CONSISTENT SNAPSHOT, the read,
    /// COMMIT). A missing privilege is an error for which
    /// [`MailboxError::is_access_denied`] holds.
    pub async fn transaction_evidence(&self) -> Result<TrxSnapshot, MailboxError> {
        let nonce = format!("msgx-evidence-{}", NONCE.fetch_add(1, Ordering::Relaxed));
        let sql = statement(&nonce);
        let row: Option<(String, i64, Option<i64>)> = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                let mut opts = mysql_async::TxOpts::default();
                opts.with_consistent_snapshot(true);
                let mut tx = conn.start_transaction(opts).await?;
                // On an error the dropped transaction is rolled back by the
                // pool before the connection is used again.
                let row = tx.query_first(sql).await?;
                tx.commit().await?;
                Ok(row)
            })
            .await?;
        Ok(match row {
            Some((_, own, oldest)) => TrxSnapshot {
                fresh: own == 1,
                oldest_start_secs: oldest,
            },
            None => TrxSnapshot {
                fresh: false,
                oldest_start_secs: None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_statement_names_itself_and_leaves_its_own_session_out() {
        let sql = super::statement("msgx-evidence-7");
        assert_eq!(sql.matches("'msgx-evidence-7'").count(), 2);
        assert!(sql.contains("IF(trx_mysql_thread_id = CONNECTION_ID(), NULL"));
    }
}
