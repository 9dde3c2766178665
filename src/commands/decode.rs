//! `msgx decode <FILE|->... [--json]`: decode mailbox messages for an
//! operator.
//!
//! Prints, per input, either a readable summary or one line of JSON
//! (`{"input":…,"message":…}`, `{"input":…,"error":{"class":…,"path":…,"reason":…}}`, or
//! `{"input":…,"unreadable":…}` when the file cannot be read).
//!
//! Exit code: 1 when an input could not be read (that wins: the run is
//! incomplete), else 5 when any message is MALFORMED, else 6 when any has a
//! CODEC_ERROR, else 0.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::codec::{
    Collection, DecodeError, DecodedMessage, Field, MsgKind, RefStyp, ScalarTag, ScalarValue,
    SchdStyp, UnknownElement, decode,
};
use crate::exit::Exit;

/// Decodes each input (`-` = standard input) and prints the result to `out`.
pub fn run(inputs: &[PathBuf], json: bool, out: &mut dyn Write) -> Exit {
    let mut unreadable = false;
    let mut malformed = false;
    let mut codec = false;
    for input in inputs {
        let name = input.display().to_string();
        let bytes = match read_input(input) {
            Ok(b) => b,
            Err(e) => {
                unreadable = true;
                let line = if json {
                    serde_json::json!({"input": name, "unreadable": e.to_string()}).to_string()
                } else {
                    format!("{name}: cannot read: {e}")
                };
                if writeln!(out, "{line}").is_err() {
                    return Exit::Failure;
                }
                continue;
            }
        };
        let result = decode(&bytes);
        match &result {
            Err(DecodeError::Malformed { .. }) => malformed = true,
            Err(DecodeError::Codec { .. }) => codec = true,
            Ok(_) => {}
        }
        let text = if json {
            json_line(&name, &result)
        } else {
            summary(&name, &result)
        };
        if writeln!(out, "{text}").is_err() {
            return Exit::Failure;
        }
    }
    if unreadable {
        Exit::Failure
    } else if malformed {
        Exit::Malformed
    } else if codec {
        Exit::Codec
    } else {
        Exit::Ok
    }
}

fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin().lock().read_to_end(&mut buf)?;
        Ok(buf)
    } else {
        std::fs::read(path)
    }
}

fn json_line(name: &str, result: &Result<DecodedMessage, DecodeError>) -> String {
    let mut v = result_value(result.as_ref());
    if let Some(o) = v.as_object_mut() {
        o.insert("input".into(), serde_json::Value::from(name));
    }
    v.to_string()
}

/// `{"message": …}` or `{"error": …}` (also `msgx msg show --json`).
pub(crate) fn result_value(result: Result<&DecodedMessage, &DecodeError>) -> serde_json::Value {
    match result {
        Ok(m) => serde_json::json!({"message": m}),
        Err(e) => serde_json::json!({"error": e}),
    }
}

/// The readable summary of one decoded message.
pub(crate) fn summary(name: &str, result: &Result<DecodedMessage, DecodeError>) -> String {
    match result {
        Ok(m) => summary_from(name, m, 0, None),
        Err(e) => format!("{name}: {e}"),
    }
}

/// The summary of a message whose records start at index `first` (from 0);
/// `total`: the records of the whole message when `m` holds only some
/// (`msgx msg show`'s bounded view).
pub(crate) fn summary_from(
    name: &str,
    m: &DecodedMessage,
    first: usize,
    total: Option<usize>,
) -> String {
    let count = |shown: usize| match total {
        Some(t) if shown < t && shown > 0 => {
            format!("{t} (records {}–{} shown)", first + 1, first + shown)
        }
        Some(t) if shown < t => format!("{t} (none shown)"),
        _ => shown.to_string(),
    };
    let dttm = m
        .meta
        .dttm
        .map_or_else(|| "-".to_owned(), |d| d.to_string());
    let mut s = format!(
        "{name}: {}/{} from {}, SEQN {}, DTTM {}\n",
        m.meta.msg_type, m.meta.styp, m.meta.sndr, m.meta.seqn, dttm
    );
    match &m.kind {
        MsgKind::Schd(x) => {
            let styp = match &x.styp {
                SchdStyp::Dnld => "DNLD".to_owned(),
                SchdStyp::Resp => "RESP".to_owned(),
                SchdStyp::Adft => "ADFT".to_owned(),
                SchdStyp::Del => "DEL".to_owned(),
                SchdStyp::Other(o) => format!("other ({o})"),
            };
            s += &format!(
                "  schedule {styp}: RECS {}, {} flight(s)\n",
                field_text(&x.recs),
                count(x.flights.len())
            );
            for (i, f) in x.flights.iter().enumerate() {
                let sc = |t: ScalarTag| match f.scalar(t) {
                    Field::Value(v) => scalar_text(v),
                    Field::Empty => "(empty)".into(),
                    Field::Absent => "-".into(),
                };
                let groups = [
                    ("ROUT", f.rout.items().len(), is_clear(&f.rout)),
                    ("ERUT", f.erut.items().len(), is_clear(&f.erut)),
                    ("PSDT", f.psdt.items().len(), is_clear(&f.psdt)),
                    ("GTDT", f.gtdt.items().len(), is_clear(&f.gtdt)),
                    ("DELY", f.dely.items().len(), is_clear(&f.dely)),
                ];
                let g: Vec<String> = groups
                    .iter()
                    .filter(|(_, n, c)| *n > 0 || *c)
                    .map(|(t, n, c)| {
                        if *c {
                            format!("{t} clear-all")
                        } else {
                            format!("{t}×{n}")
                        }
                    })
                    .collect();
                s += &format!(
                    "    FLTR {}: FLID {} {} {} SODT {} ({} scalars{}{})\n",
                    first + i + 1,
                    sc(ScalarTag::FLID),
                    sc(ScalarTag::FLNO),
                    sc(ScalarTag::MVIN),
                    sc(ScalarTag::SODT),
                    f.scalars.len(),
                    if g.is_empty() { "" } else { "; " },
                    g.join(", ")
                );
            }
        }
        MsgKind::Flop(x) => {
            let payload = serde_json::to_value(&x.payload).unwrap_or_default();
            let data = payload.get("data").cloned().unwrap_or_default();
            s += &format!(
                "  flop for FLID {} (FFID {}): {}\n",
                x.flid,
                field_text(&x.ffid),
                data
            );
        }
        MsgKind::Fdel(x) => {
            s += &format!(
                "  delete FLID {} (FFID {}), <FDEL/> empty: {}\n",
                x.flid,
                field_text(&x.ffid),
                if x.fdel_empty { "yes" } else { "NO" }
            );
        }
        MsgKind::RefData(x) => {
            let keys: Vec<&str> = x.records.iter().map(|r| r.key.as_str()).collect();
            s += &format!(
                "  reference {} {}: RECS {}, {} record(s): {}\n",
                x.rtype,
                match &x.styp {
                    RefStyp::Dnld => "DNLD",
                    RefStyp::Resp => "RESP",
                    RefStyp::Add => "ADD",
                    RefStyp::Upd => "UPD",
                    RefStyp::Del => "DEL",
                    RefStyp::Other(o) => o.as_str(),
                },
                field_text(&x.recs),
                count(keys.len()),
                keys.join(", ")
            );
        }
        MsgKind::Schs(x) => {
            s += &format!(
                "  season {} {}..{} at {}: RECS {}, {} series\n",
                field_text(&x.snam),
                field_text(&x.sdat),
                field_text(&x.edat),
                field_text(&x.apcd),
                field_text(&x.recs),
                count(x.flights.len())
            );
            for (i, f) in x.flights.iter().enumerate() {
                let sc = |t: ScalarTag| match f.scalar(t) {
                    Field::Value(v) => scalar_text(v),
                    Field::Empty => "(empty)".into(),
                    Field::Absent => "-".into(),
                };
                s += &format!(
                    "    FLTR {}: {} {} STDT {} EDDT {} DYOP {} SCHT {} (ROUT×{}, ERUT×{})\n",
                    first + i + 1,
                    sc(ScalarTag::FLNO),
                    sc(ScalarTag::MVIN),
                    sc(ScalarTag::STDT),
                    sc(ScalarTag::EDDT),
                    sc(ScalarTag::DYOP),
                    sc(ScalarTag::SCHT),
                    f.rout.items().len(),
                    f.erut.items().len()
                );
            }
        }
        MsgKind::Unsupported(x) => {
            s += &format!("  unsupported: {}\n", x.reason);
        }
    }
    s += &unknown_lines(&m.unknown_elements());
    s.trim_end().to_owned()
}

fn is_clear<T>(c: &Collection<T>) -> bool {
    matches!(c, Collection::ClearAll)
}

fn field_text<T: std::fmt::Display>(f: &Field<T>) -> String {
    match f {
        Field::Absent => "-".into(),
        Field::Empty => "(empty)".into(),
        Field::Value(v) => v.to_string(),
    }
}

fn scalar_text(v: &ScalarValue) -> String {
    match v {
        ScalarValue::Text(s) | ScalarValue::Decimal(s) | ScalarValue::Hhmm(s) => s.clone(),
        ScalarValue::Int(i) => i.to_string(),
        ScalarValue::Time(t) => t.format("%Y-%m-%d %H:%M").to_string(),
        ScalarValue::Date(d) => d.to_string(),
    }
}

/// Every unknown element at any depth, with its path and
/// raw XML; nothing when there is none.
fn unknown_lines(unknown: &[&UnknownElement]) -> String {
    if unknown.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "  unknown elements ({}; kept, not applied):\n",
        unknown.len()
    );
    for u in unknown {
        s += &format!("    {}: {}\n", u.path, u.raw);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, body).expect("write");
        p
    }

    const GOOD: &str = "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><TYPE>FLOP</TYPE><STYP>APPT</STYP></META>\
                        <FLOP><FLID>9001</FLID><APPT>01DEC260800</APPT></FLOP></MSG>";
    const CODEC: &str = "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><TYPE>FLOP</TYPE><STYP>APPT</STYP></META>\
                         <FLOP><FLID>9001</FLID><APPT>2026-12-01T08:00</APPT></FLOP></MSG>";

    #[test]
    fn exit_codes_follow_the_worst_class() {
        let dir = tempfile::tempdir().expect("tmp");
        let good = write(dir.path(), "good.xml", GOOD);
        let codec = write(dir.path(), "codec.xml", CODEC);
        let bad = write(dir.path(), "bad.xml", "<MSG></MSG></MSG>");
        let missing = dir.path().join("missing.xml");
        let mut out = Vec::new();
        assert_eq!(run(std::slice::from_ref(&good), false, &mut out), Exit::Ok);
        assert_eq!(
            run(&[good.clone(), codec.clone()], false, &mut out),
            Exit::Codec
        );
        assert_eq!(
            run(&[codec.clone(), bad.clone(), good.clone()], false, &mut out),
            Exit::Malformed
        );
        let mut out = Vec::new();
        assert_eq!(run(&[missing, bad], false, &mut out), Exit::Failure);
        let text = String::from_utf8(out).expect("utf8");
        assert!(text.contains("missing.xml: cannot read"), "{text}");
        assert!(
            text.contains("bad.xml: MALFORMED at MSG: trailing content"),
            "{text}"
        );
    }

    #[test]
    fn json_lines_carry_message_or_error() {
        let dir = tempfile::tempdir().expect("tmp");
        let good = write(dir.path(), "good.xml", GOOD);
        let codec = write(dir.path(), "codec.xml", CODEC);
        let mut out = Vec::new();
        assert_eq!(run(&[good, codec], true, &mut out), Exit::Codec);
        let text = String::from_utf8(out).expect("utf8");
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["message"]["kind"]["kind"], "flop");
        assert_eq!(lines[0]["message"]["kind"]["flid"], 9001);
        assert_eq!(
            lines[0]["message"]["kind"]["payload"]["data"]["value"],
            "2026-12-01T08:00:00"
        );
        assert_eq!(lines[1]["error"]["class"], "CODEC_ERROR");
        assert_eq!(lines[1]["error"]["path"], "MSG/FLOP/APPT");
    }

    #[test]
    fn summary_names_the_flight() {
        let dir = tempfile::tempdir().expect("tmp");
        let good = write(dir.path(), "good.xml", GOOD);
        let mut out = Vec::new();
        run(&[good], false, &mut out);
        let text = String::from_utf8(out).expect("utf8");
        assert!(
            text.contains("FLOP/APPT from AODB, SEQN 1, DTTM -"),
            "{text}"
        );
        assert!(text.contains("flop for FLID 9001"), "{text}");
    }
}
