//! Business identity and ignore rules (design §2). Pure.

use crate::codec::Meta;

/// `Identity.of`: `SNDR|TYPE|STYP|SEQN`, plus `|yyyyMMdd` of DTTM when
/// `msgx.identity.include-day-boundary` is on (C-20, Q11). Never change the
/// algorithm after go-live: old identities would stop matching.
pub fn identity_of(meta: &Meta, include_day_boundary: bool) -> String {
    let mut key = format!(
        "{}|{}|{}|{}",
        meta.sndr, meta.msg_type, meta.styp, meta.seqn
    );
    if include_day_boundary {
        match meta.dttm {
            Some(t) => key.push_str(&format!("|{}", t.format("%Y%m%d"))),
            None => key.push_str("|-"),
        }
    }
    key
}

/// The first ignore rule (`TYPE`, `TYPE-*` or `TYPE-STYP`, case-insensitive)
/// that matches, as written in the config (for `ignored:<rule>`).
pub fn ignore_rule<'a>(rules: &'a [String], meta: &Meta) -> Option<&'a str> {
    rules.iter().map(String::as_str).find(|rule| {
        let (t, s) = rule.split_once('-').unwrap_or((rule, "*"));
        t.eq_ignore_ascii_case(&meta.msg_type) && (s == "*" || s.eq_ignore_ascii_case(&meta.styp))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn meta(t: &str, s: &str) -> Meta {
        Meta {
            sndr: "AODB".into(),
            seqn: "1243".into(),
            dttm: NaiveDate::from_ymd_opt(2026, 12, 1).and_then(|d| d.and_hms_opt(8, 0, 0)),
            msg_type: t.into(),
            styp: s.into(),
        }
    }

    #[test]
    fn identity_is_sender_type_subtype_sequence() {
        assert_eq!(
            identity_of(&meta("FLOP", "APPT"), false),
            "AODB|FLOP|APPT|1243"
        );
        assert_eq!(
            identity_of(&meta("FLOP", "APPT"), true),
            "AODB|FLOP|APPT|1243|20261201"
        );
    }

    #[test]
    fn ignore_rules_match_case_insensitively() {
        let rules: Vec<String> = ["ldm", "REGN", "FLOP-psht"].map(String::from).to_vec();
        assert_eq!(ignore_rule(&rules, &meta("LDM", "UPD")), Some("ldm"));
        assert_eq!(ignore_rule(&rules, &meta("REGN", "DNLD")), Some("REGN"));
        assert_eq!(
            ignore_rule(&rules, &meta("FLOP", "PSHT")),
            Some("FLOP-psht")
        );
        assert_eq!(ignore_rule(&rules, &meta("FLOP", "GTDT")), None);
        assert_eq!(
            ignore_rule(&rules, &meta("ERROR", "X")),
            None,
            "EROR is not ERROR"
        );
    }
}
