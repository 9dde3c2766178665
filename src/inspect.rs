//! The read model behind `msgx msg show`, `msgx flight show` and `msgx
//! holes`, and the console's pages of the same things: each
//! reads its stores once and returns data; the CLI renders it as text or
//! JSON, the console as HTML. One implementation, two views.

use crate::codec::{self, DecodeError, DecodedWindow};
use crate::config::Config;
use crate::domain::{mafl, schd_projection};
use crate::jobs::domain_config;
use crate::store::mailbox::{Mailbox, RawReadError};
use crate::store::pg::flight::FlightStore;
use crate::store::pg::inbox::{self, LateRow, ReleasedHoleRow};
use crate::store::pg::msg_event::{self, FlightChange};
use crate::store::pg::proc_state::{self, MessageRecord};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use std::ops::Range;

/// The raw text a bounded view shows: its first 256 KiB.
/// A 16.5 MB SCHD was once escaped whole into a 246 MB page.
pub const RAW_PREVIEW_BYTES: usize = 256 << 10;

/// Records (FLTRs, reference records) a bounded view decodes and shows.
pub const RECORDS_PER_PAGE: usize = 200;

/// Views of messages read and decoded at the same time at most: a burst of
/// detail pages (or a page's `<img>` tags pointing at them) holds at most
/// this many texts (16 MiB each at most) and decodes; the rest wait.
static VIEWS_AT_ONCE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// How much of a message a view shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds {
    /// Bytes of raw text shown at most; `None`: all of it.
    pub raw_bytes: Option<usize>,
    /// The records decoded (indexes from 0); the others are not.
    pub records: Range<usize>,
}

impl Bounds {
    /// Page `page` (from 1) of [`RECORDS_PER_PAGE`] records beside the first
    /// [`RAW_PREVIEW_BYTES`] of the raw text; `None` for page 0 or a page so
    /// far that its first index overflows.
    pub fn page(page: usize) -> Option<Bounds> {
        let first = page.checked_sub(1)?.checked_mul(RECORDS_PER_PAGE)?;
        Some(Bounds {
            raw_bytes: Some(RAW_PREVIEW_BYTES),
            records: first..first.saturating_add(RECORDS_PER_PAGE),
        })
    }

    /// Everything (`msgx msg show --full`).
    pub fn full() -> Bounds {
        Bounds {
            raw_bytes: None,
            records: 0..usize::MAX,
        }
    }
}

/// What the mailbox holds for one message.
#[derive(Debug, Clone)]
pub enum Raw {
    Present(RawText),
    /// The mailbox row no longer exists (the owner purged it, C-7).
    Purged,
    /// The mailbox could not be read (the error text).
    Unreadable(String),
}

/// The raw text as a view shows it.
#[derive(Debug, Clone)]
pub struct RawText {
    /// The text, or its start when `cut` (on a character boundary); bytes
    /// that are not UTF-8 shown as U+FFFD.
    pub text: String,
    /// The whole text's length in bytes.
    pub total_bytes: usize,
    pub cut: bool,
}

/// One message: its PROC_STATE record, the flights it wrote, and its raw
/// text decoded, within the [`Bounds`] asked for.
#[derive(Debug)]
pub struct MessageView {
    /// `None`: not enqueued yet (beyond W) or a late row.
    pub record: Option<MessageRecord>,
    /// (FLID, state version) of each KAFKA:msg event it produced, in write order.
    pub flights: Vec<(String, i64)>,
    pub raw: Raw,
    /// The decoding of the raw text when present: the records of
    /// [`Bounds::records`] only.
    pub decoded: Option<Result<DecodedWindow, DecodeError>>,
}

/// Reads one message within `bounds`; `None` when it is neither in
/// PROC_STATE nor in the mailbox. The text is read in pieces
/// ([`crate::store::mailbox::RawReader`]) into one buffer, decoded for the
/// records asked for only, and dropped after the preview is cut from it: a
/// bounded view of a 16.5 MB SCHD holds the text and one page of records,
/// not the ~50 MB model of all its flights beside a copy per rendering
/// (docs/BENCHMARKS.md).
pub async fn message(
    pool: &PgPool,
    mailbox: &Mailbox,
    msg_id: i64,
    bounds: &Bounds,
) -> Result<Option<MessageView>, sqlx::Error> {
    let record = proc_state::record(pool, msg_id).await?;
    let flights = msg_event::flights_of_message(pool, msg_id).await?;
    // Never closed, so never an error.
    let _permit = VIEWS_AT_ONCE.acquire().await.ok();
    let (raw, decoded) = match read(mailbox, msg_id, bounds).await {
        Ok(Some((text, decoded))) => (Raw::Present(text), Some(decoded)),
        Ok(None) | Err(RawReadError::Vanished(_)) => (Raw::Purged, None),
        Err(RawReadError::Mailbox(e)) => (Raw::Unreadable(e.to_string()), None),
    };
    if record.is_none() && matches!(raw, Raw::Purged) {
        return Ok(None);
    }
    Ok(Some(MessageView {
        record,
        flights,
        raw,
        decoded,
    }))
}

type Read = (RawText, Result<DecodedWindow, DecodeError>);

/// The raw text within `bounds` and its decoding; `None` when the row does
/// not exist. A text larger than the codec accepts is not read beyond the
/// preview (it cannot be decoded).
async fn read(mailbox: &Mailbox, id: i64, bounds: &Bounds) -> Result<Option<Read>, RawReadError> {
    let Some(mut reader) = mailbox.open_raw(id).await? else {
        return Ok(None);
    };
    let stored = usize::try_from(reader.stored_bytes()).unwrap_or(usize::MAX);
    if let (Some(e), Some(limit)) = (codec::too_large(stored), bounds.raw_bytes) {
        let mut start = Vec::new();
        while start.len() <= limit
            && let Some(piece) = reader.next().await?
        {
            start.extend_from_slice(&piece);
        }
        return Ok(Some((shown(start, stored, Some(limit)), Err(e))));
    }
    let text = reader.read_all().await?;
    let decoded = codec::decode_window(&text, bounds.records.clone());
    let total = text.len();
    Ok(Some((shown(text, total, bounds.raw_bytes), decoded)))
}

/// `text` (of a whole of `total` bytes) cut to at most `limit` bytes on a
/// character boundary.
fn shown(mut text: Vec<u8>, total: usize, limit: Option<usize>) -> RawText {
    let cut = limit.is_some_and(|l| total > l || text.len() > l);
    if let Some(limit) = limit.filter(|_| cut) {
        text.truncate(char_floor(&text, limit));
        // The whole text's buffer is freed now, not after the rendering.
        text.shrink_to_fit();
    }
    let text = String::from_utf8(text)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    RawText {
        text,
        total_bytes: total,
        cut,
    }
}

/// The largest length at most `limit` that ends `bytes` without splitting
/// a UTF-8 sequence (bytes that are not UTF-8 are left as they are).
pub fn char_floor(bytes: &[u8], limit: usize) -> usize {
    let end = limit.min(bytes.len());
    let mut start = end;
    while start > 0 && end - start < 3 && bytes[start - 1] & 0xC0 == 0x80 {
        start -= 1;
    }
    let Some(&lead) = start.checked_sub(1).and_then(|i| bytes.get(i)) else {
        return end;
    };
    let len = match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    };
    if start - 1 + len > end {
        start - 1
    } else {
        end
    }
}

/// `value` as pretty JSON of at most `limit` bytes (cut on a character
/// boundary; `true` when cut). Serialization stops at the limit, so a
/// large value costs `limit` bytes, not its whole text.
pub fn pretty_json_bounded(value: &impl serde::Serialize, limit: usize) -> (String, bool) {
    struct Capped {
        buf: Vec<u8>,
        limit: usize,
        full: bool,
    }
    impl std::io::Write for Capped {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let room = self.limit.saturating_sub(self.buf.len());
            if b.len() > room {
                self.buf.extend_from_slice(&b[..room]);
                self.full = true;
                return Err(std::io::Error::other("limit reached"));
            }
            self.buf.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = Capped {
        buf: Vec::new(),
        limit,
        full: false,
    };
    // The only error is the limit: the value is plain data.
    let _ = serde_json::to_writer_pretty(&mut w, value);
    w.buf.truncate(char_floor(&w.buf, w.buf.len()));
    let cut = w.full;
    (
        String::from_utf8(w.buf)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        cut,
    )
}

/// One flight: its current state as the KAFKA:schd projection (MAFL, the
/// codeshare links, included) and the messages that changed it.
#[derive(Debug)]
pub struct FlightView {
    pub flid: i64,
    /// The projection's JSON.
    pub state: Value,
    pub state_version: i64,
    pub last_msg_id: i64,
    /// The A-CDM milestones (also in the projection's `milestones`).
    pub milestones: crate::domain::milestones::Milestones,
    /// Newest first, at most the requested number.
    pub changes: Vec<FlightChange>,
}

/// Reads one flight; `None` when it is not in the current state (never
/// created, or moved to the history store).
pub async fn flight(
    pool: &PgPool,
    config: &Config,
    flid: i64,
    limit: i64,
) -> Result<Option<FlightView>, sqlx::Error> {
    let store = FlightStore::new(&domain_config(config));
    let mut conn = pool.acquire().await?;
    let flights = store.load_with_children(&mut conn, &[flid]).await?;
    drop(conn);
    let Some(current) = flights.iter().find(|f| f.flid == flid) else {
        return Ok(None);
    };
    let shares = mafl::derive(current, flights.iter());
    let state = schd_projection(current, shares.as_deref()).to_json();
    let changes = msg_event::flight_changes(pool, flid, limit).await?;
    Ok(Some(FlightView {
        flid,
        state,
        state_version: current.state_version,
        last_msg_id: current.last_msg_id,
        milestones: crate::domain::milestones::milestones(current),
        changes,
    }))
}

/// The hole W waits at now.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OpenHole {
    pub at_id: i64,
    pub since: DateTime<Utc>,
    pub open_seconds: i64,
}

/// The watermark, its open hole, the released holes and the late rows.
#[derive(Debug)]
pub struct HolesView {
    pub w: i64,
    pub open: Option<OpenHole>,
    pub released: Vec<ReleasedHoleRow>,
    pub late: Vec<LateRow>,
}

/// Reads the holes as of `now` (newest first, at most `limit` of each list).
pub async fn holes(
    pool: &PgPool,
    now: DateTime<Utc>,
    limit: i64,
) -> Result<HolesView, sqlx::Error> {
    let cursor = inbox::load(pool).await?;
    let released = inbox::released_holes(pool, limit).await?;
    let late = inbox::late_rows(pool, limit).await?;
    let w = cursor.cursor.w;
    let open = cursor.cursor.hole_since.map(|since| OpenHole {
        at_id: w + 1,
        since,
        open_seconds: (now - since).num_seconds().max(0),
    });
    Ok(HolesView {
        w,
        open,
        released,
        late,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_never_splits_a_character() {
        let text = "aé€😀b".as_bytes(); // 1 + 2 + 3 + 4 + 1 bytes
        let ends: Vec<usize> = (0..=12).map(|l| char_floor(text, l)).collect();
        assert_eq!(ends, [0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10, 11, 11]);
        for l in 0..=12 {
            assert!(std::str::from_utf8(&text[..char_floor(text, l)]).is_ok());
        }
        // Not UTF-8: left as it is.
        assert_eq!(char_floor(&[0x80, 0x80, 0x80, 0x80, 0x80], 5), 5);
    }

    #[test]
    fn the_raw_preview_says_it_is_cut_and_how_large_the_whole_is() {
        let whole = "<MSG>é</MSG>".repeat(10).into_bytes();
        let n = whole.len();
        let r = shown(whole.clone(), n, Some(6));
        assert_eq!((r.text.as_str(), r.total_bytes, r.cut), ("<MSG>", n, true));
        let r = shown(whole.clone(), n, Some(n));
        assert_eq!((r.text.len(), r.cut), (n, false));
        let r = shown(whole, n, None);
        assert_eq!((r.text.len(), r.cut), (n, false));
    }

    #[test]
    fn pretty_json_stops_at_the_limit() {
        let v: Vec<String> = (0..10_000).map(|i| format!("é{i}")).collect();
        let (whole, cut) = pretty_json_bounded(&v, usize::MAX);
        assert!(!cut);
        assert_eq!(whole, serde_json::to_string_pretty(&v).expect("json"));
        for limit in [0, 1, 7, 8, 9, 1000] {
            let (part, cut) = pretty_json_bounded(&v, limit);
            assert!(cut && part.len() <= limit && whole.starts_with(&part));
            assert!(part.len() + 1 >= limit, "{limit}: {}", part.len());
        }
    }

    #[test]
    fn pages_are_windows_of_records() {
        assert_eq!(Bounds::page(0), None);
        assert_eq!(
            Bounds::page(1).map(|b| b.records),
            Some(0..RECORDS_PER_PAGE)
        );
        assert_eq!(
            Bounds::page(3).map(|b| b.records),
            Some(2 * RECORDS_PER_PAGE..3 * RECORDS_PER_PAGE)
        );
        assert_eq!(Bounds::page(usize::MAX), None);
        assert_eq!(
            Bounds::page(2).and_then(|b| b.raw_bytes),
            Some(RAW_PREVIEW_BYTES)
        );
        assert_eq!(Bounds::full().raw_bytes, None);
    }
}
