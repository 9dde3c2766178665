//! Property tests: `decode` never panics, on arbitrary bytes and on real
//! and composed samples mutated (truncated, tags swapped, attributes
//! dropped, non-UTF-8 bytes inserted, ranges cut or doubled), and every
//! error it returns names a path and a reason. The two-level parse of large
//! messages (`decode_with`, issue 17 item 5) gives the same result, model or
//! error, on every input.

use std::path::Path;
use std::sync::OnceLock;

use msgx::codec::{DecodeError, decode, decode_with};
use proptest::prelude::*;

/// Samples that decode: ours always, the shared ones when present.
fn corpus() -> &'static [Vec<u8>] {
    static CORPUS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        for dir in [
            root.join("tests/fixtures/sis"),
            root.join("../shared/fixtures/sis"),
        ] {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                println!("skipping absent {}", dir.display());
                continue;
            };
            let mut paths: Vec<_> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "xml"))
                .collect();
            paths.sort();
            for p in paths {
                let bytes = std::fs::read(&p).expect("read sample");
                if decode(&bytes).is_ok() {
                    out.push(bytes);
                }
            }
        }
        assert!(out.len() >= 20, "corpus too small: {}", out.len());
        out
    })
}

/// A decode that must not panic; errors must be explained.
fn check_decode(bytes: &[u8]) {
    let once = decode(bytes);
    if let Err(e) = &once {
        let (DecodeError::Malformed { path, reason } | DecodeError::Codec { path, reason }) = e;
        assert!(!path.is_empty(), "error without a path: {e:?}");
        assert!(!reason.is_empty(), "error without a reason: {e:?}");
    }
    // Threshold 0: every message parsed in two levels.
    assert_eq!(
        decode_with(bytes, 0),
        once,
        "the two-level parse differs on {}",
        String::from_utf8_lossy(bytes)
    );
}

/// The samples that are SCHD messages (their FLTRs are what the two-level
/// parse treats apart).
fn schd_corpus() -> Vec<&'static Vec<u8>> {
    let v: Vec<_> = corpus()
        .iter()
        .filter(|b| memchr_find(b, b"<TYPE>SCHD</TYPE>"))
        .collect();
    assert!(!v.is_empty(), "no SCHD sample in the corpus");
    v
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Byte ranges of element names (`<NAME` and `</NAME`).
fn tag_names(b: &[u8]) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'<' {
            let mut s = i + 1;
            if b.get(s) == Some(&b'/') {
                s += 1;
            }
            let mut e = s;
            while e < b.len() && b[e].is_ascii_alphanumeric() {
                e += 1;
            }
            if e > s {
                v.push((s, e));
            }
            i = e.max(i + 1);
        } else {
            i += 1;
        }
    }
    v
}

/// Byte ranges of attributes (` NAME = "value"`), leading blank included.
fn attributes(b: &[u8]) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut in_tag = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'<' => in_tag = true,
            b'>' => in_tag = false,
            b'"' if in_tag => {
                // Walk back over `= ` and the name to the blank before it.
                let mut s = i;
                while s > 0 && matches!(b[s - 1], b' ' | b'=') {
                    s -= 1;
                }
                while s > 0 && (b[s - 1].is_ascii_alphanumeric() || b[s - 1] == b':') {
                    s -= 1;
                }
                let Some(close) = b[i + 1..].iter().position(|&c| c == b'"') else {
                    break;
                };
                let e = i + 1 + close + 1;
                v.push((s.saturating_sub(1), e));
                i = e;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    v
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    SwapTag(usize, usize),
    DropAttr(usize),
    InsertBytes(usize, Vec<u8>),
    Cut(usize, usize),
    Double(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let non_utf8 = prop_oneof![
        (0x80u8..=0xFF).prop_map(|b| vec![b]),
        Just(vec![0xC3]),
        Just(vec![0xED, 0xA0, 0x80]),
        Just(vec![0xF4, 0x90, 0x80, 0x80]),
        Just(vec![0x00]),
        Just(b"&bogus;".to_vec()),
        Just(b"<![CDATA[x]]>".to_vec()),
    ];
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapTag(a, b)),
        any::<usize>().prop_map(Mutation::DropAttr),
        (any::<usize>(), non_utf8).prop_map(|(a, b)| Mutation::InsertBytes(a, b)),
        (any::<usize>(), 0usize..64).prop_map(|(a, n)| Mutation::Cut(a, n)),
        (any::<usize>(), 0usize..256).prop_map(|(a, n)| Mutation::Double(a, n)),
    ]
}

fn apply(b: &mut Vec<u8>, m: &Mutation) {
    let len = b.len().max(1);
    match m {
        Mutation::Truncate(at) => b.truncate(at % len),
        Mutation::SwapTag(i, j) => {
            let names = tag_names(b);
            if names.len() < 2 {
                return;
            }
            let (s1, e1) = names[i % names.len()];
            let (s2, e2) = names[j % names.len()];
            let replacement = b[s2..e2].to_vec();
            b.splice(s1..e1, replacement);
        }
        Mutation::DropAttr(i) => {
            let attrs = attributes(b);
            if let Some(&(s, e)) = attrs.get(i % attrs.len().max(1)) {
                b.drain(s..e);
            }
        }
        Mutation::InsertBytes(at, bytes) => {
            let at = at % (b.len() + 1);
            b.splice(at..at, bytes.iter().copied());
        }
        Mutation::Cut(at, n) => {
            let s = at % len;
            let e = (s + n).min(b.len());
            if s < e {
                b.drain(s..e);
            }
        }
        Mutation::Double(at, n) => {
            let s = at % len;
            let e = (s + n).min(b.len());
            if s < e {
                let copy = b[s..e].to_vec();
                b.splice(e..e, copy);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        check_decode(&bytes);
    }

    #[test]
    fn xml_like_text_never_panics(s in r#"(<[/?!]?[A-Z]{0,5}( [A-Z]{1,4} ?= ?"[^"<]{0,6}")?/?>|[A-Za-z0-9 &;#\n]{0,8}){0,40}"#) {
        check_decode(s.as_bytes());
        let wrapped = format!("<MSG><META><SNDR>A</SNDR><SEQN>1</SEQN><TYPE>FLOP</TYPE><STYP>GTDT</STYP></META><FLOP><FLID>1</FLID>{s}</FLOP></MSG>");
        check_decode(wrapped.as_bytes());
    }

    #[test]
    fn mutated_samples_never_panic(
        pick in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..5),
    ) {
        let corpus = corpus();
        let mut bytes = corpus[pick % corpus.len()].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        check_decode(&bytes);
    }

    #[test]
    fn mutated_schedules_decode_alike_in_one_and_two_levels(
        pick in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..5),
    ) {
        let corpus = schd_corpus();
        let mut bytes = corpus[pick % corpus.len()].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        check_decode(&bytes);
    }

    #[test]
    fn xml_like_flight_records_decode_alike_in_one_and_two_levels(
        s in r#"(<[/?!]?[A-Z]{0,5}( [A-Z]{1,4} ?= ?"[^"<]{0,6}")?/?>|[A-Za-z0-9 &;#\n]{0,8}){0,40}"#,
        fltr in "(FLTR|FLTR RTNO=\"1\"|FLTX)",
        count in 0usize..4,
    ) {
        let records: String = (0..count)
            .map(|i| format!("<FLTR><FLID>{i}</FLID><SODT>01DEC260600</SODT><ROUT RTNO=\"1\"><APCD>PEK</APCD><XYZQ>{i}</XYZQ></ROUT></FLTR>"))
            .collect();
        let wrapped = format!("<MSG><META><SNDR>A</SNDR><SEQN>1</SEQN><TYPE>SCHD</TYPE><STYP>DNLD</STYP></META><SCHD><RECS>2</RECS>{records}<{fltr}>{s}</FLTR></SCHD></MSG>");
        check_decode(wrapped.as_bytes());
    }

    #[test]
    fn truncating_a_sample_inside_its_root_is_always_malformed(pick in any::<usize>(), at in any::<usize>()) {
        let corpus = corpus();
        let bytes = &corpus[pick % corpus.len()];
        let end = bytes.iter().rposition(|&c| c == b'>').expect("root end");
        let cut = &bytes[..at % end];
        let result = decode(cut);
        prop_assert!(matches!(result, Err(DecodeError::Malformed { .. })), "{:?}", result);
    }
}

#[test]
fn mutation_helpers_find_what_they_mutate() {
    let b = br#"<MSG a = "1"><FLOP><FLID>1</FLID></FLOP></MSG>"#;
    assert_eq!(tag_names(b).len(), 6);
    let attrs = attributes(b);
    assert_eq!(attrs.len(), 1);
    let mut v = b.to_vec();
    apply(&mut v, &Mutation::DropAttr(0));
    assert_eq!(v, b"<MSG><FLOP><FLID>1</FLID></FLOP></MSG>".to_vec());
    let mut v = b.to_vec();
    apply(&mut v, &Mutation::SwapTag(1, 2));
    assert!(String::from_utf8_lossy(&v).starts_with("<MSG a = \"1\"><FLID><FLID>"));
}

/// A SCHS field value: usually well-formed, sometimes empty, out of range or
/// garbage, so both the codec and the season rules see every class.
fn schs_value(good: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        60 => proptest::sample::select(good).prop_map(String::from),
        1 => Just(String::new()),
        1 => "[0-9A-Z+-]{0,12}",
    ]
}

/// One SCHS FLTR with each element sent (or left out) at random.
fn schs_fltr() -> impl Strategy<Value = String> {
    let fields = (
        schs_value(&["CA", "LH", "3U"]),
        schs_value(&["CA002", "LH724", "3U8701"]),
        schs_value(&["A", "D"]),
        schs_value(&["01NOV26", "29FEB24", "25OCT26", "14NOV21"]),
        schs_value(&["27MAR27", "27MAR27", "14MAR21"]),
        schs_value(&["1200560", "1234567", "0000000"]),
        schs_value(&["1023", "0000", "2359"]),
        schs_value(&["P", "W"]),
        schs_value(&["D", "I", "M"]),
        schs_value(&["747", "32N"]),
    );
    let route = (
        schs_value(&["1", "2", "3"]),
        schs_value(&["1125", "14MAR211023", "2359"]),
        schs_value(&["+1", "-2", "0"]),
    );
    (fields, proptest::collection::vec(route, 0..4), proptest::collection::vec(proptest::bool::weighted(0.97), 10))
        .prop_map(|(f, routes, sent)| {
            let tags = ["ALCD", "FLNO", "MVIN", "STDT", "EDDT", "DYOP", "SCHT", "FLTY", "FLIN", "ACFT"];
            let values = [f.0, f.1, f.2, f.3, f.4, f.5, f.6, f.7, f.8, f.9];
            let mut x = String::from("<FLTR>");
            for ((tag, v), on) in tags.iter().zip(values).zip(sent) {
                if on {
                    x += &format!("<{tag}>{v}</{tag}>");
                }
            }
            for (i, (rtno, t, dc)) in routes.iter().enumerate() {
                let group = if i % 2 == 0 { "ERUT" } else { "ROUT" };
                x += &format!(
                    "<{group} RTNO=\"{rtno}\"><APCD>HKG</APCD><SCAT>{t}</SCAT><SADC>{dc}</SADC></{group}>"
                );
            }
            x + "</FLTR>"
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Generated SCHS packages (issue 18 item 2): the codec never panics and
    /// explains every error; what decodes, the season rules judge without
    /// panicking — a reason naming the SCHS, or a season with one series per
    /// FLTR, unique keys, STDT ≤ EDDT, routes ordered 1…n.
    #[test]
    fn generated_schs_decode_and_validate_never_panic(
        snam in schs_value(&["Winter", "S27"]),
        sdat in schs_value(&["10SEP20", "25OCT26"]),
        edat in schs_value(&["10JUN21", "27MAR27"]),
        recs_delta in prop_oneof![8 => Just(1i64), 1 => Just(0), 1 => Just(2)],
        styp in proptest::sample::select(vec!["DNLD", "RESP", "ADD"]),
        fltrs in proptest::collection::vec(schs_fltr(), 0..3),
    ) {
        let recs = fltrs.len() as i64 + recs_delta - 1;
        let xml = format!(
            "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><TYPE>SCHS</TYPE><STYP>{styp}</STYP></META>\
             <SCHS><SNAM>{snam}</SNAM><SDAT>{sdat}</SDAT><EDAT>{edat}</EDAT><RECS>{recs}</RECS>{}</SCHS></MSG>",
            fltrs.concat()
        );
        check_decode(xml.as_bytes());
        let Ok(m) = decode(xml.as_bytes()) else { return Ok(()) };
        let msgx::codec::MsgKind::Schs(s) = &m.kind else {
            prop_assert_eq!(styp, "ADD", "only DNLD/RESP are SCHS: {:?}", m.kind);
            return Ok(());
        };
        match msgx::domain::season::validate(s, &msgx::domain::DomainConfig::default()) {
            Err(e) => prop_assert!(e.to_string().starts_with("SCHS"), "{}", e),
            Ok(season) => {
                prop_assert_eq!(season.series.len(), fltrs.len());
                let keys: std::collections::BTreeSet<String> =
                    season.series.iter().map(|x| x.key(&season.id.snam)).collect();
                prop_assert_eq!(keys.len(), season.series.len());
                for x in &season.series {
                    prop_assert!(x.stdt <= x.eddt);
                    for r in [&x.rout, &x.erut] {
                        let ordinals: Vec<i32> = r.iter().map(|p| p.ordinal).collect();
                        prop_assert_eq!(ordinals, (1..=r.len() as i32).collect::<Vec<_>>());
                    }
                }
            }
        }
    }
}
