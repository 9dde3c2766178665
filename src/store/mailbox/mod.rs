//! The shared MySQL mailbox (`CMINMSGS` in, `COUTMSGS` out; sis-format §1.6,
//! §5). msgx never creates or alters these tables; it reads CMINMSGS in ID
//! order, writes only the processing mark (backfill), and inserts requests
//! into COUTMSGS. Every call is bounded by `msgx.mailbox.timeout` on the
//! client, and every statement by `msgx.mailbox.statement-timeout` on the
//! server ([`session_setup`]), so a hung statement never keeps running on
//! the shared server after msgx gave up on it.

pub mod evidence;
pub mod grants;
pub mod schema;
pub mod tls;

use crate::config::Mailbox as MailboxConfig;
use chrono::NaiveDateTime;
use mysql_async::prelude::Queryable;
use schema::{ResolvedTable, SchemaError};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;

/// Mailbox failures. All are infrastructure failures: the caller retries and
/// never takes them as "no new messages" (design §4.1 step 1).
#[derive(Debug, thiserror::Error)]
pub enum MailboxError {
    #[error("mailbox URL is invalid: {0}")]
    Url(String),
    #[error("mailbox: {}", tls::explain(.0))]
    Db(#[from] mysql_async::Error),
    #[error("mailbox TLS: {0}")]
    Tls(#[from] crate::tls::FileError),
    #[error("mailbox call timed out after {0:?}")]
    Timeout(Duration),
    /// The server stopped a statement at `msgx.mailbox.statement-timeout`
    /// (MariaDB 1969, MySQL 3024, a lock wait 1205).
    #[error(
        "mailbox statement stopped by the server after {limit:?} \
         (msgx.mailbox.statement-timeout): {detail}"
    )]
    StatementTimeout { limit: Duration, detail: String },
    #[error("mailbox is in shadow mode (msgx.mailbox.shadow = true): msgx never writes to it")]
    Shadow,
    /// The configured table or its columns do not exist: a configuration or
    /// site problem that no retry fixes.
    #[error("{0}")]
    Schema(#[from] SchemaError),
}

/// Row counts for `status` (watermark lag = max ID − W).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct MailboxStats {
    pub rows: i64,
    pub max_id: Option<i64>,
}

/// Rows of the inbound table and, of them, the rows without a processing
/// mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkCounts {
    pub rows: i64,
    pub unmarked: i64,
}

/// What writing the processing mark found (design §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkOutcome {
    /// The mark was empty; 1 row written.
    Written,
    /// 0 rows written, the row exists: it already carries a mark (kept).
    AlreadyMarked,
    /// 0 rows written, the row does not exist (deleted after enqueue).
    Missing,
}

/// A handle on the mailbox database.
#[derive(Clone)]
pub struct Mailbox {
    pool: mysql_async::Pool,
    inbox: String,
    outbox: String,
    processed_column: String,
    shadow: bool,
    timeout: Duration,
    statement_timeout: Duration,
    /// The server's spelling of the inbound table, resolved on first use.
    inbox_table: Arc<OnceCell<ResolvedTable>>,
    /// The same for the outbound table.
    outbox_table: Arc<OnceCell<ResolvedTable>>,
}

impl MailboxError {
    /// True when the server refused for lack of a privilege (1227: "you
    /// need the PROCESS privilege", 1142/1143: table or column, 1044:
    /// database), not for a failure that a retry may fix.
    pub fn is_access_denied(&self) -> bool {
        matches!(self, MailboxError::Db(e) if denied(e))
    }
}

/// True when the server refused a statement for lack of a privilege (see
/// [`MailboxError::is_access_denied`]).
fn denied(e: &mysql_async::Error) -> bool {
    matches!(e, mysql_async::Error::Server(se) if [1227, 1142, 1143, 1044].contains(&se.code))
}

impl std::fmt::Debug for Mailbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailbox")
            .field("inbox", &self.inbox)
            .field("shadow", &self.shadow)
            .finish()
    }
}

/// The statement every mailbox session runs when it opens and after each
/// reset by the pool: `statement_timeout` as the server's own bound.
///
/// - MariaDB (10.1.8+): `max_statement_time`, for every statement;
/// - MySQL (5.7.8+): `max_execution_time`, which covers only reads;
/// - both: `lock_wait_timeout` (metadata and table locks) and
///   `innodb_lock_wait_timeout` (row locks), in whole seconds (at least 1),
///   which bound what a write waits for.
///
/// One statement serves both servers through executable comments: MariaDB
/// runs `/*M!…*/` and ignores MySQL's `/*!50708…*/`; MySQL does the reverse.
pub fn session_setup(statement_timeout: Duration) -> String {
    let secs = statement_timeout.as_secs_f64();
    let whole = statement_timeout.as_secs_f64().ceil().max(1.0);
    let ms = statement_timeout.as_millis().max(1);
    format!(
        "SET SESSION lock_wait_timeout = {whole}, innodb_lock_wait_timeout = {whole} \
         /*M!100108 , max_statement_time = {secs:.3} */ /*!50708 , max_execution_time = {ms} */"
    )
}

/// The mailbox pool's options: the URL, TLS (`[msgx.mailbox.tls]`) and the
/// [`session_setup`] of `msgx.mailbox.statement-timeout`.
///
/// A connection returned to the pool is **not** reset:
/// mysql_async's default sends COM_RESET_CONNECTION on every return, which
/// drops the session's prepared statements and makes it run the setup SET
/// again, so each idle poll cost a reset, a SET, a PREPARE and an EXECUTE on
/// the shared server instead of one EXECUTE. Nothing is lost by keeping the
/// session: msgx's sessions hold no state but the SET of [`session_setup`]
/// (no user variables, temporary tables or locks; a transaction msgx opens
/// is committed or, when dropped, rolled back by the pool before reuse).
/// `reset_connection=true` in the URL turns the reset back on.
pub fn pool_opts(cfg: &MailboxConfig) -> Result<mysql_async::Opts, MailboxError> {
    let opts =
        mysql_async::Opts::from_url(&cfg.url).map_err(|e| MailboxError::Url(e.to_string()))?;
    let reset_asked = crate::config::url_params(&cfg.url).any(|k| k == "reset_connection");
    let pool = if reset_asked {
        opts.pool_opts().clone()
    } else {
        opts.pool_opts().clone().with_reset_connection(false)
    };
    let opts = tls::apply(opts, cfg)?;
    Ok(mysql_async::OptsBuilder::from_opts(opts)
        .setup(vec![session_setup(cfg.statement_timeout.std())])
        .pool_opts(pool)
        .into())
}

impl Mailbox {
    /// Builds the pool (connects lazily). Identifiers were validated at load.
    pub fn new(cfg: &MailboxConfig) -> Result<Mailbox, MailboxError> {
        Ok(Mailbox {
            pool: mysql_async::Pool::new(pool_opts(cfg)?),
            inbox: cfg.inbox_table.clone(),
            outbox: cfg.outbox_table.clone(),
            processed_column: cfg.processed_column.clone(),
            shadow: cfg.shadow,
            timeout: cfg.timeout.std(),
            statement_timeout: cfg.statement_timeout.std(),
            inbox_table: Arc::default(),
            outbox_table: Arc::default(),
        })
    }

    /// The inbound table as the server spells it, with its columns checked
    /// (`msgx.mailbox.inbox-table`; resolved once per handle, retried after
    /// a failure). A missing table or column is [`MailboxError::Schema`].
    pub async fn inbox(&self) -> Result<&ResolvedTable, MailboxError> {
        self.inbox_table
            .get_or_try_init(|| {
                let mut required: Vec<&str> = schema::INBOX_COLUMNS.to_vec();
                required.push(&self.processed_column);
                self.resolve_table(&self.inbox, "inbox-table", required)
            })
            .await
    }

    /// The outbound table (`msgx.mailbox.outbox-table`), like [`Mailbox::inbox`].
    pub async fn outbox(&self) -> Result<&ResolvedTable, MailboxError> {
        self.outbox_table
            .get_or_try_init(|| {
                self.resolve_table(
                    &self.outbox,
                    "outbox-table",
                    schema::OUTBOX_COLUMNS.to_vec(),
                )
            })
            .await
    }

    /// Looks `wanted` up in the URL's schema through `information_schema`
    /// (case-insensitively) and checks `required` columns.
    async fn resolve_table(
        &self,
        wanted: &str,
        key: &'static str,
        required: Vec<&str>,
    ) -> Result<ResolvedTable, MailboxError> {
        let found = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                let schema: Option<String> = conn.query_first("SELECT DATABASE()").await?.flatten();
                let Some(schema) = schema else {
                    return Ok(Err(SchemaError::NoDatabase));
                };
                let tables: Vec<String> = conn
                    .exec(
                        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME",
                        (&schema,),
                    )
                    .await?;
                let name = match schema::pick_table(&schema, key, wanted, &tables) {
                    Ok(name) => name,
                    Err(e) => return Ok(Err(e)),
                };
                let columns: Vec<String> = conn
                    .exec(
                        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
                        (&schema, &name),
                    )
                    .await?;
                Ok(Ok(ResolvedTable {
                    schema,
                    name,
                    columns,
                }))
            })
            .await??;
        let missing = schema::missing_columns(&required, &found.columns);
        if !missing.is_empty() {
            return Err(SchemaError::MissingColumns {
                schema: found.schema,
                table: found.name,
                missing,
                found: found.columns,
            }
            .into());
        }
        Ok(found)
    }

    async fn bounded<T>(
        &self,
        fut: impl std::future::Future<Output = Result<T, mysql_async::Error>>,
    ) -> Result<T, MailboxError> {
        tokio::time::timeout(self.timeout, fut)
            .await
            .map_err(|_| MailboxError::Timeout(self.timeout))?
            .map_err(|e| self.db_error(e))
    }

    /// A server error, naming `msgx.mailbox.statement-timeout` when the
    /// server stopped the statement at it.
    fn db_error(&self, e: mysql_async::Error) -> MailboxError {
        match e {
            mysql_async::Error::Server(se) if [1969, 3024, 1205].contains(&se.code) => {
                MailboxError::StatementTimeout {
                    limit: self.statement_timeout,
                    detail: se.message,
                }
            }
            other => other.into(),
        }
    }

    /// Row count and highest ID of the inbound table.
    pub async fn stats(&self) -> Result<MailboxStats, MailboxError> {
        let sql = format!(
            "SELECT COUNT(*), MAX(CMINMSGS_ID) FROM {}",
            self.inbox().await?.sql()
        );
        let row: Option<(i64, Option<i64>)> = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                conn.query_first(sql).await
            })
            .await?;
        let (rows, max_id) = row.unwrap_or((0, None));
        Ok(MailboxStats { rows, max_id })
    }

    /// The rows of the inbound table with an ID up to `upto` (every row when
    /// `None`), and of them the rows without a processing mark (the
    /// harnesses' checks: `msgx dev caught-up`, `verify`).
    pub async fn mark_counts(&self, upto: Option<i64>) -> Result<MarkCounts, MailboxError> {
        let c = &self.processed_column;
        let sql = format!(
            "SELECT COUNT(*), COUNT(*) - COUNT({c}) FROM {} WHERE CMINMSGS_ID <= ?",
            self.inbox().await?.sql()
        );
        let row: Option<(i64, i64)> = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                conn.exec_first(sql, (upto.unwrap_or(i64::MAX),)).await
            })
            .await?;
        let (rows, unmarked) = row.unwrap_or((0, 0));
        Ok(MarkCounts { rows, unmarked })
    }

    /// Every ID of the inbound table, in order (`msgx dev verify`: nothing
    /// lost).
    pub async fn ids(&self) -> Result<Vec<i64>, MailboxError> {
        let sql = format!(
            "SELECT CMINMSGS_ID FROM {} ORDER BY CMINMSGS_ID",
            self.inbox().await?.sql()
        );
        self.bounded(async {
            let mut conn = self.pool.get_conn().await?;
            conn.query(sql).await
        })
        .await
    }

    /// Inserts one raw message as the AODB side would (development and tests:
    /// `msgx mailbox load`). Refused in shadow mode. Returns the new ID.
    pub async fn insert_raw(
        &self,
        xml: &str,
        received_at: Option<NaiveDateTime>,
    ) -> Result<i64, MailboxError> {
        if self.shadow {
            return Err(MailboxError::Shadow);
        }
        let sql = format!(
            "INSERT INTO {} (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_STATUS) VALUES (?, ?, 'VALID')",
            self.inbox().await?.sql()
        );
        self.bounded(async {
            let mut conn = self.pool.get_conn().await?;
            conn.exec_drop(sql, (xml, received_at)).await?;
            Ok(i64::try_from(conn.last_insert_id().unwrap_or(0)).unwrap_or(0))
        })
        .await
    }

    /// The configured processing-mark column.
    pub fn processed_column(&self) -> &str {
        &self.processed_column
    }

    /// True in shadow mode (`msgx.mailbox.shadow`): msgx never writes.
    pub fn is_shadow(&self) -> bool {
        self.shadow
    }

    /// Writes the processing marks of a round of rows (design §6.2) in one
    /// statement, never overwriting an existing mark (one UPDATE per row held
    /// the scan to ≈ 220 marks/s under a 1,000 msg/s burst):
    /// `UPDATE CMINMSGS SET <mark> = ? WHERE CMINMSGS_ID IN (…) AND <mark> IS NULL`,
    /// in a mailbox transaction. When it writes fewer rows than it names, one
    /// `SELECT` of the same IDs in that transaction, before the COMMIT, tells
    /// the rest apart: absent = [`MarkOutcome::Missing`]; present with
    /// exactly this mark = written now, else already marked. The UPDATE's row
    /// locks (InnoDB) hold the rows it wrote until the COMMIT, so the owner
    /// cannot purge them (C-8) before they are classified: a row this call
    /// wrote is never `Missing` (classified after an autocommit UPDATE, our
    /// own marks purged in between would read as missing).
    /// A row marked earlier with the same second by someone else counts as
    /// written: the outcome is the same, BACKFILL_AT; only the counter's
    /// label differs.
    ///
    /// A round is a constant 3–4 statements (START, UPDATE, the SELECT when
    /// needed, COMMIT). The answer has one entry per ID, in the order given.
    /// Any failure (timeout, refused connection, server error) is an `Err`
    /// for the whole round, rolling its marks back unless the COMMIT had run
    /// — never `Missing`, which is only the answer of a reachable mailbox.
    /// Refused in shadow mode.
    pub async fn mark_processed(
        &self,
        ids: &[i64],
        mark: NaiveDateTime,
    ) -> Result<Vec<(i64, MarkOutcome)>, MailboxError> {
        if self.shadow {
            return Err(MailboxError::Shadow);
        }
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let table = self.inbox().await?.sql();
        let c = &self.processed_column;
        let update =
            format!("UPDATE {table} SET {c} = ? WHERE CMINMSGS_ID IN ({list}) AND {c} IS NULL");
        // The comparison on the server: no conversion of the column's type here.
        let select =
            format!("SELECT CMINMSGS_ID, {c} <=> ? FROM {table} WHERE CMINMSGS_ID IN ({list})");
        self.bounded(async {
            let mut conn = self.pool.get_conn().await?;
            // Dropped on an error or the timeout: the pool rolls it back.
            let mut tx = conn
                .start_transaction(mysql_async::TxOpts::default())
                .await?;
            tx.exec_drop(update, (mark,)).await?;
            if tx.affected_rows() == ids.len() as u64 {
                tx.commit().await?;
                return Ok(ids.iter().map(|&id| (id, MarkOutcome::Written)).collect());
            }
            let found: Vec<(i64, i64)> = tx.exec(select, (mark,)).await?;
            tx.commit().await?;
            let found: std::collections::HashMap<i64, bool> = found
                .into_iter()
                .map(|(id, ours)| (id, ours == 1))
                .collect();
            Ok(ids
                .iter()
                .map(|id| {
                    let outcome = match found.get(id) {
                        None => MarkOutcome::Missing,
                        Some(true) => MarkOutcome::Written,
                        Some(false) => MarkOutcome::AlreadyMarked,
                    };
                    (*id, outcome)
                })
                .collect())
        })
        .await
    }

    /// Closes the pool.
    pub async fn close(self) {
        let _ = self.pool.disconnect().await;
    }
}

/// One inbound row as the poller sees it: ID and receive time only (the raw
/// text is read by processOne when it is the head).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InboxRow {
    pub id: i64,
    /// CMINMSGS_DATE_RECEIVED, naive local time of the mailbox; may be NULL.
    pub received_at: Option<NaiveDateTime>,
    /// The row carries a processing mark (ingest: above W only after msgx's
    /// record was rolled back, `domain::watermark::purged_after_mark`).
    pub marked: bool,
}

/// One ingest read: the rows and the server's time of the statement.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InboxBatch {
    pub rows: Vec<InboxRow>,
    /// The statement's start on the mailbox server's clock (UNIX time, µs),
    /// when any row came back: the sighting time of a hole the rows show
    /// (compared with the server's `trx_started`, never
    /// with msgx's clock).
    pub server_micros: Option<i64>,
    /// `@@server_id` of the server that answered, when any row came back:
    /// evidence read on another server is not evidence for these rows
    /// (a read/write-splitting proxy may send the reads elsewhere).
    pub server_id: Option<i64>,
}

impl Mailbox {
    /// `ID > after` ascending, at most `limit` rows (design §4.1 step 2; no
    /// predicate on the processing mark or status, §4.2), in one prepared
    /// statement on the primary key. The server time costs a column, not a
    /// round trip: `UNIX_TIMESTAMP()` (whole seconds, no time zone) and the
    /// microseconds of `NOW(6)` are the same statement start. So is the
    /// answering server's `@@server_id`.
    pub async fn fetch_after(&self, after: i64, limit: u32) -> Result<InboxBatch, MailboxError> {
        let sql = format!(
            "SELECT CMINMSGS_ID, CMINMSGS_DATE_RECEIVED, \
             UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), @@server_id, \
             {} IS NOT NULL FROM {} \
             WHERE CMINMSGS_ID > ? ORDER BY CMINMSGS_ID LIMIT ?",
            self.processed_column,
            self.inbox().await?.sql()
        );
        let rows: Vec<(i64, Option<NaiveDateTime>, i64, i64, bool)> = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                conn.exec(sql, (after, limit)).await
            })
            .await?;
        Ok(InboxBatch {
            server_micros: rows.first().map(|r| r.2),
            server_id: rows.first().map(|r| r.3),
            rows: rows
                .into_iter()
                .map(|(id, received_at, _, _, marked)| InboxRow {
                    id,
                    received_at,
                    marked,
                })
                .collect(),
        })
    }

    /// Rows with `first <= ID <= last` (late-commit detection in released holes).
    pub async fn rows_between(&self, first: i64, last: i64) -> Result<Vec<InboxRow>, MailboxError> {
        let sql = format!(
            "SELECT CMINMSGS_ID, CMINMSGS_DATE_RECEIVED FROM {} WHERE CMINMSGS_ID BETWEEN ? AND ? ORDER BY CMINMSGS_ID LIMIT 1000",
            self.inbox().await?.sql()
        );
        let rows: Vec<(i64, Option<NaiveDateTime>)> = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                conn.exec(sql, (first, last)).await
            })
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, received_at)| InboxRow {
                id,
                received_at,
                marked: false,
            })
            .collect())
    }

    /// MIN and MAX ID (cutover seeding, §4.3).
    pub async fn id_range(&self) -> Result<(Option<i64>, Option<i64>), MailboxError> {
        let sql = format!(
            "SELECT MIN(CMINMSGS_ID), MAX(CMINMSGS_ID) FROM {}",
            self.inbox().await?.sql()
        );
        let row: Option<(Option<i64>, Option<i64>)> = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                conn.query_first(sql).await
            })
            .await?;
        Ok(row.unwrap_or((None, None)))
    }
}

impl Mailbox {
    /// The raw message text of one row; `None` when the row no longer exists
    /// (processOne turns that into DEAD(MALFORMED, raw-missing), §5.2).
    pub async fn read_raw(&self, id: i64) -> Result<Option<Vec<u8>>, MailboxError> {
        let sql = format!(
            "SELECT CMINMSGS_CLOB_MSG FROM {} WHERE CMINMSGS_ID = ?",
            self.inbox().await?.sql()
        );
        self.bounded(async {
            let mut conn = self.pool.get_conn().await?;
            conn.exec_first::<Vec<u8>, _, _>(sql, (id,)).await
        })
        .await
    }
}

/// Characters per piece when a raw text is read in pieces ([`RawReader`]):
/// about 1 MiB for the ASCII of SIS messages, at most 4 MiB in utf8mb4, well
/// below any server's `max_allowed_packet`.
pub const RAW_PIECE_CHARS: u64 = 1 << 20;

/// Why a raw text read in pieces could not be read to its end.
#[derive(Debug, thiserror::Error)]
pub enum RawReadError {
    #[error(transparent)]
    Mailbox(#[from] MailboxError),
    /// The row was deleted between two pieces (the owner purged it, C-7).
    #[error("mailbox row {0} was deleted while its text was read")]
    Vanished(i64),
}

/// One row's raw text read in pieces of [`RAW_PIECE_CHARS`] characters, one
/// short `SUBSTRING` statement each: a 16 MiB text never
/// crosses the network as one row (mysql_async assembles a row from max-size
/// packets and held about 4× a 16 MB text, docs/BENCHMARKS.md),
/// and no pooled connection is held between pieces, so a slow download
/// client holds one piece and no mailbox connection. Raw messages are
/// immutable (PRE-7): the pieces are one text, byte for byte what
/// [`Mailbox::read_raw`] returns.
pub struct RawReader {
    mailbox: Mailbox,
    id: i64,
    sql: String,
    /// 1-based character position of the next piece.
    next: u64,
    chars: u64,
    bytes: u64,
    first: Option<Vec<u8>>,
}

impl Mailbox {
    /// Opens the raw text of row `id` for reading in pieces, reading its
    /// length and the first piece; `None` when the row does not exist.
    pub async fn open_raw(&self, id: i64) -> Result<Option<RawReader>, MailboxError> {
        let table = self.inbox().await?.sql();
        let head = format!(
            "SELECT CHAR_LENGTH(CMINMSGS_CLOB_MSG), LENGTH(CMINMSGS_CLOB_MSG), \
             SUBSTRING(CMINMSGS_CLOB_MSG, 1, ?) FROM {table} WHERE CMINMSGS_ID = ?"
        );
        type Head = (Option<u64>, Option<u64>, Option<Vec<u8>>);
        let row: Option<Head> = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                conn.exec_first(head, (RAW_PIECE_CHARS, id)).await
            })
            .await?;
        // A NULL text reads as empty, as in `read_raw_range`.
        Ok(row.map(|(chars, bytes, first)| RawReader {
            mailbox: self.clone(),
            id,
            sql: format!(
                "SELECT SUBSTRING(CMINMSGS_CLOB_MSG, ?, ?) FROM {table} WHERE CMINMSGS_ID = ?"
            ),
            next: 1 + RAW_PIECE_CHARS,
            chars: chars.unwrap_or(0),
            bytes: bytes.unwrap_or(0),
            first: Some(first.unwrap_or_default()),
        }))
    }
}

impl RawReader {
    /// The text's length in bytes as the server stores it (`LENGTH()`):
    /// the size of the whole text for an ASCII or UTF-8 column.
    pub fn stored_bytes(&self) -> u64 {
        self.bytes
    }

    /// The next piece; `None` after the last.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, RawReadError> {
        if let Some(first) = self.first.take() {
            return Ok(Some(first));
        }
        if self.next > self.chars {
            return Ok(None);
        }
        let (sql, at) = (self.sql.as_str(), self.next);
        let piece: Option<Option<Vec<u8>>> = self
            .mailbox
            .bounded(async {
                let mut conn = self.mailbox.pool.get_conn().await?;
                conn.exec_first(sql, (at, RAW_PIECE_CHARS, self.id)).await
            })
            .await?;
        let Some(piece) = piece else {
            return Err(RawReadError::Vanished(self.id));
        };
        self.next += RAW_PIECE_CHARS;
        Ok(Some(piece.unwrap_or_default()))
    }

    /// The whole text, in one buffer sized once.
    pub async fn read_all(mut self) -> Result<Vec<u8>, RawReadError> {
        let mut text = Vec::with_capacity(usize::try_from(self.bytes).unwrap_or(0));
        while let Some(piece) = self.next().await? {
            text.extend_from_slice(&piece);
        }
        Ok(text)
    }
}

/// How a confirmed insert ended ([`Mailbox::insert_message_confirmed`]).
#[derive(Debug)]
pub enum ConfirmedInsert<E> {
    /// The row `id` is committed.
    Committed(i64),
    /// `confirm` refused the row `id`: it was rolled back, nothing is stored.
    Refused(i64, E),
}

impl Mailbox {
    /// Inserts a message received through the compat entry (§4.4), copying
    /// META into the SUBSYSTEM columns when it fits them (sis-format §1.6).
    pub async fn insert_message(
        &self,
        xml: &str,
        received_at: NaiveDateTime,
        meta: Option<&crate::codec::Meta>,
    ) -> Result<i64, MailboxError> {
        let (sql, params) = self.insert_statement(xml, received_at, meta).await?;
        self.bounded(async {
            let mut conn = self.pool.get_conn().await?;
            conn.exec_drop(sql, params).await?;
            Ok(i64::try_from(conn.last_insert_id().unwrap_or(0)).unwrap_or(0))
        })
        .await
    }

    /// [`Self::insert_message`] in a mailbox transaction that commits only
    /// once `confirm(id)` succeeded: the compat entry
    /// records the new row's ID in PostgreSQL first, so no reader of the
    /// mailbox ever sees a compat-written row that msgx cannot tell as one.
    /// A refused row is rolled back (its ID stays a hole). An error of the
    /// COMMIT itself leaves it unknown whether the row is stored; the caller
    /// has recorded the ID either way.
    pub async fn insert_message_confirmed<E, F, Fut>(
        &self,
        xml: &str,
        received_at: NaiveDateTime,
        meta: Option<&crate::codec::Meta>,
        confirm: F,
    ) -> Result<ConfirmedInsert<E>, MailboxError>
    where
        F: FnOnce(i64) -> Fut,
        Fut: std::future::Future<Output = Result<(), E>>,
    {
        let (sql, params) = self.insert_statement(xml, received_at, meta).await?;
        let mut conn = self.bounded(self.pool.get_conn()).await?;
        let mut tx = self
            .bounded(conn.start_transaction(mysql_async::TxOpts::default()))
            .await?;
        self.bounded(tx.exec_drop(sql, params)).await?;
        let id = i64::try_from(tx.last_insert_id().unwrap_or(0)).unwrap_or(0);
        // `confirm` has its own bound (the PostgreSQL pool's); the open
        // mailbox transaction holds only the new row's lock meanwhile.
        match confirm(id).await {
            Ok(()) => {
                self.bounded(tx.commit()).await?;
                Ok(ConfirmedInsert::Committed(id))
            }
            Err(e) => {
                self.bounded(tx.rollback()).await?;
                Ok(ConfirmedInsert::Refused(id, e))
            }
        }
    }

    /// The INSERT of one inbound message and its parameters.
    async fn insert_statement(
        &self,
        xml: &str,
        received_at: NaiveDateTime,
        meta: Option<&crate::codec::Meta>,
    ) -> Result<(String, mysql_async::Params), MailboxError> {
        if self.shadow {
            return Err(MailboxError::Shadow);
        }
        let fit4 = |s: &str| (s.chars().count() <= 4).then(|| s.to_string());
        let name = meta.and_then(|m| fit4(&m.sndr));
        let seq = meta
            .and_then(|m| m.seqn.parse::<i32>().ok())
            .filter(|n| (0..=8_388_607).contains(n));
        let sent = meta.and_then(|m| m.dttm);
        let typ = meta.and_then(|m| fit4(&m.msg_type));
        let sub = meta.and_then(|m| fit4(&m.styp));
        let sql = format!(
            "INSERT INTO {} (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_SUBSYSTEM_NAME, \
             CMINMSGS_SUBSYSTEM_SEQUENCE, CMINMSGS_SUBSYSTEM_DATE_SENT, CMINMSGS_SUBSYSTEM_TYPE, \
             CMINMSGS_SUBSYSTEM_SUBTYPE, CMINMSGS_STATUS) VALUES (?, ?, ?, ?, ?, ?, ?, 'VALID')",
            self.inbox().await?.sql()
        );
        Ok((sql, (xml, received_at, name, seq, sent, typ, sub).into()))
    }
}

impl Mailbox {
    /// Inserts many raw messages in one multi-row statement (generators and
    /// harnesses only). Returns the rows inserted.
    pub async fn insert_many(&self, xmls: &[String]) -> Result<u64, MailboxError> {
        if self.shadow {
            return Err(MailboxError::Shadow);
        }
        if xmls.is_empty() {
            return Ok(0);
        }
        let values = vec!["(?, NOW(), 'VALID')"; xmls.len()].join(", ");
        let sql = format!(
            "INSERT INTO {} (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_STATUS) VALUES {values}",
            self.inbox().await?.sql()
        );
        let params: Vec<mysql_async::Value> = xmls
            .iter()
            .map(|x| mysql_async::Value::from(x.as_str()))
            .collect();
        self.bounded(async {
            let mut conn = self.pool.get_conn().await?;
            conn.exec_drop(sql, mysql_async::Params::Positional(params))
                .await?;
            Ok(conn.affected_rows())
        })
        .await
    }

    /// An insert that is rolled back: consumes an ID and leaves a permanent
    /// hole (harnesses only, design §4.1).
    pub async fn insert_rolled_back(&self, xml: &str) -> Result<(), MailboxError> {
        if self.shadow {
            return Err(MailboxError::Shadow);
        }
        let sql = format!(
            "INSERT INTO {} (CMINMSGS_CLOB_MSG, CMINMSGS_STATUS) VALUES (?, 'VALID')",
            self.inbox().await?.sql()
        );
        self.bounded(async {
            let mut conn = self.pool.get_conn().await?;
            let mut tx = conn
                .start_transaction(mysql_async::TxOpts::default())
                .await?;
            tx.exec_drop(sql, (xml,)).await?;
            tx.rollback().await
        })
        .await
    }
}

impl Mailbox {
    /// The raw text's length in bytes of each row with `first <= ID <= last`
    /// (`LENGTH()` is bytes in MySQL), in ID order: the pump sizes its
    /// read-ahead and refuses an oversized message before any text crosses
    /// the network. IDs with no row are absent; a NULL
    /// text has length 0.
    pub async fn raw_lengths(
        &self,
        first: i64,
        last: i64,
    ) -> Result<Vec<(i64, u64)>, MailboxError> {
        let sql = format!(
            "SELECT CMINMSGS_ID, COALESCE(LENGTH(CMINMSGS_CLOB_MSG), 0) FROM {} \
             WHERE CMINMSGS_ID BETWEEN ? AND ? ORDER BY CMINMSGS_ID",
            self.inbox().await?.sql()
        );
        self.bounded(async {
            let mut conn = self.pool.get_conn().await?;
            conn.exec::<(i64, u64), _, _>(sql, (first, last)).await
        })
        .await
    }

    /// Raw texts of the rows with `first <= ID <= last` whose text is at most
    /// `max_bytes` long (the pump's read-ahead: raw messages are immutable,
    /// PRE-7; the longer ones it knows from [`Mailbox::raw_lengths`] and
    /// never reads). IDs in the range with no row are simply absent.
    pub async fn read_raw_range(
        &self,
        first: i64,
        last: i64,
        max_bytes: u64,
    ) -> Result<Vec<(i64, Vec<u8>)>, MailboxError> {
        let sql = format!(
            "SELECT CMINMSGS_ID, CMINMSGS_CLOB_MSG FROM {} WHERE CMINMSGS_ID BETWEEN ? AND ? \
             AND COALESCE(LENGTH(CMINMSGS_CLOB_MSG), 0) <= ? ORDER BY CMINMSGS_ID",
            self.inbox().await?.sql()
        );
        // A NULL text reads as empty (it decodes as MALFORMED), never as a
        // conversion panic.
        let rows: Vec<(i64, Option<Vec<u8>>)> = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                conn.exec(sql, (first, last, max_bytes)).await
            })
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, text)| (id, text.unwrap_or_default()))
            .collect())
    }
}

impl Mailbox {
    /// Inserts one outbound request into COUTMSGS exactly as the predecessor
    /// did (sis-format §5): the XML, the insert time, the ROUTINGID; the
    /// TRUEFALS_GROUP, FINAL_GROUP_IND, ACK_REQD, ACK_RESEND_TIMES, ENCRYPT
    /// and ERROR flags 0; DATE_SENT, NO_MESSAGES, GROUP_ORDER, GROUP_ID and
    /// ACK_DATE_RECV NULL. Refused in shadow mode. Returns COUTMSGS_ID.
    pub async fn insert_request(
        &self,
        xml: &str,
        inserted_at: NaiveDateTime,
        routing_id: &str,
    ) -> Result<i64, MailboxError> {
        if self.shadow {
            return Err(MailboxError::Shadow);
        }
        let sql = format!(
            "INSERT INTO {} (COUTMSGS_CLOB_MSG, COUTMSGS_DATE_INSERTED, ROUTINGID, \
             COUTMSGS_TRUEFALS_GROUP, COUTMSGS_FINAL_GROUP_IND, COUTMSGS_ACK_REQD, \
             COUTMSGS_ACK_RESEND_TIMES, COUTMSGS_ENCRYPT, COUTMSGS_ERROR) \
             VALUES (?, ?, ?, 0, 0, 0, 0, 0, 0)",
            self.outbox().await?.sql()
        );
        self.bounded(async {
            let mut conn = self.pool.get_conn().await?;
            conn.exec_drop(sql, (xml, inserted_at, routing_id)).await?;
            Ok(i64::try_from(conn.last_insert_id().unwrap_or(0)).unwrap_or(0))
        })
        .await
    }

    /// The COUTMSGS rows with this ROUTINGID whose XML carries
    /// `<SEQN>seqn6</SEQN>`, newest first, as `(COUTMSGS_ID, XML)`: request
    /// compensation (§7.2) looks a request up here before sending it again.
    /// SEQN cycles, so the caller compares the whole XML. A read: allowed in
    /// shadow mode.
    pub async fn find_requests(
        &self,
        seqn6: &str,
        routing_id: &str,
    ) -> Result<Vec<(i64, String)>, MailboxError> {
        let sql = format!(
            "SELECT COUTMSGS_ID, COUTMSGS_CLOB_MSG FROM {} WHERE ROUTINGID = ? \
             AND COUTMSGS_CLOB_MSG LIKE ? ORDER BY COUTMSGS_ID DESC LIMIT 20",
            self.outbox().await?.sql()
        );
        let pattern = format!("%<SEQN>{seqn6}</SEQN>%");
        let rows: Vec<(i64, Option<String>)> = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                conn.exec(sql, (routing_id, pattern)).await
            })
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, xml)| (id, xml.unwrap_or_default()))
            .collect())
    }
}
