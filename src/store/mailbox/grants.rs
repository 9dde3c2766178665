//! What `msgx doctor` asks the mailbox server: which
//! privileges the mailbox user holds on the two tables (whether the session
//! is encrypted: `Mailbox::tls_in_use`). msgx needs SELECT on the inbox, UPDATE of the processing
//! mark column only, SELECT and INSERT on the outbox (docs/operations.md
//! gives the GRANTs).
//!
//! A privilege can be granted globally, per schema, per table or per column;
//! `information_schema.*_PRIVILEGES` list the current user's grants at each
//! level, so the check reads all four. Privileges that come only through a
//! role (MariaDB `SET ROLE`) are not seen: the doctor then reports them as
//! missing, the safe side.

use super::{Mailbox, MailboxError};
use mysql_async::prelude::Queryable;

/// The mailbox user's privileges that matter to msgx.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MailboxGrants {
    /// `user@host` as the server sees it.
    pub user: String,
    pub inbox_select: bool,
    /// UPDATE on the processing-mark column (at any level).
    pub mark_update: bool,
    /// UPDATE on the whole inbox (more than msgx needs: it writes only the
    /// mark; reported as a warning).
    pub inbox_update_all: bool,
    pub outbox_select: bool,
    pub outbox_insert: bool,
    /// INSERT on the inbox (only the compat entry and dev tools need it).
    pub inbox_insert: bool,
}

/// `SELECT 1` when the current user holds `priv` on `schema`.`table`
/// (and `column`, when not NULL) at any level. Parameters: grantee ×4,
/// privilege ×4, schema ×3, table ×2, column ×2.
const HOLDS: &str = "SELECT \
    EXISTS (SELECT 1 FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ? AND PRIVILEGE_TYPE = ?) \
 OR EXISTS (SELECT 1 FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ? AND PRIVILEGE_TYPE = ? \
            AND ? LIKE TABLE_SCHEMA) \
 OR EXISTS (SELECT 1 FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = ? AND PRIVILEGE_TYPE = ? \
            AND TABLE_SCHEMA = ? AND TABLE_NAME = ?) \
 OR (? IS NOT NULL AND EXISTS (SELECT 1 FROM information_schema.COLUMN_PRIVILEGES WHERE GRANTEE = ? \
            AND PRIVILEGE_TYPE = ? AND TABLE_SCHEMA = ? AND TABLE_NAME = ? AND UPPER(COLUMN_NAME) = UPPER(?)))";

impl Mailbox {
    /// The privileges of the mailbox user on the resolved tables.
    pub async fn grants(&self) -> Result<MailboxGrants, MailboxError> {
        let inbox = self.inbox().await?.clone();
        let outbox = self.outbox().await?.clone();
        let mark = self.processed_column.clone();
        self.bounded(async move {
            let mut conn = self.pool.get_conn().await?;
            let user: Option<String> = conn.query_first("SELECT CURRENT_USER()").await?;
            let user = user.unwrap_or_default();
            let (name, host) = user.rsplit_once('@').unwrap_or((user.as_str(), "%"));
            let grantee = format!("'{name}'@'{host}'");
            let mut holds =
                async |privilege: &str, table: &super::ResolvedTable, column: Option<&str>| {
                    let params: Vec<mysql_async::Value> = vec![
                        grantee.as_str().into(),
                        privilege.into(),
                        grantee.as_str().into(),
                        privilege.into(),
                        table.schema.as_str().into(),
                        grantee.as_str().into(),
                        privilege.into(),
                        table.schema.as_str().into(),
                        table.name.as_str().into(),
                        column.into(),
                        grantee.as_str().into(),
                        privilege.into(),
                        table.schema.as_str().into(),
                        table.name.as_str().into(),
                        column.into(),
                    ];
                    let held: Option<bool> = conn.exec_first(HOLDS, params).await?;
                    Ok::<bool, mysql_async::Error>(held.unwrap_or(false))
                };
            Ok(MailboxGrants {
                inbox_select: holds("SELECT", &inbox, None).await?,
                mark_update: holds("UPDATE", &inbox, Some(&mark)).await?,
                inbox_update_all: holds("UPDATE", &inbox, None).await?,
                outbox_select: holds("SELECT", &outbox, None).await?,
                outbox_insert: holds("INSERT", &outbox, None).await?,
                inbox_insert: holds("INSERT", &inbox, None).await?,
                user: user.clone(),
            })
        })
        .await
    }
}
