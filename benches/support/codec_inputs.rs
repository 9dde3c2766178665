//! Benchmark inputs shared by `benches/codec.rs` and
//! `examples/codec_profile.rs` (callgrind instruction counts): a SCHD of
//! 1,000 FLTR and a FLOP mix, generated from msgx's own composed samples
//! (never from ../shared), plus quick-xml's raw event loop (the ceiling).

use std::hint::black_box;

use quick_xml::events::Event;
use quick_xml::reader::Reader;

const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<MSG xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="unisysaodbsis.xsd">
  <META>
    <SNDR>AODB</SNDR>
    <SEQN>600001</SEQN>
    <DTTM>20261130210000</DTTM>
    <TYPE>SCHD</TYPE>
    <STYP>DNLD</STYP>
  </META>
  <SCHD>
    <RECS>1000</RECS>
"#;

/// One composed FLTR (the shape of tests/fixtures/sis/003, flight 9001);
/// `{ID}`, `{DD}` and `{HH}` vary per record.
const FLTR: &str = r#"    <FLTR>
      <FLID>{ID}</FLID>
      <ALCD>YG</ALCD>
      <FLNO>YG{ID}</FLNO>
      <MVIN>D</MVIN>
      <SODT>{DD}DEC26{HH}35</SODT>
      <FLTY>W</FLTY>
      <FLIN>D</FLIN>
      <ROUT RTNO = "1"><APCD>XIY</APCD><SCAT>{DD}DEC26{HH}59</SCAT></ROUT>
      <ACFT>733</ACFT>
      <RENO>B2574</RENO>
      <TAOP>YG</TAOP>
      <TAFL>YG9102</TAFL>
      <TAID>9002</TAID>
      <TRML>T2</TRML>
      <MAXP>148</MAXP>
      <STND>504</STND>
      <ESTT>{DD}DEC26{HH}50</ESTT>
      <PHAG>910001</PHAG>
      <FHAG>910001</FHAG>
      <MHAG>910002</MHAG>
      <LBWT>1680.5</LBWT>
      <PSDT PSNO="1"><PSST>504</PSST><STST>{DD}DEC26{HH}00</STST><STET>{DD}DEC26{HH}50</STET></PSDT>
      <GTDT GTNO="1"><GATE>G21</GATE><PGOT>{DD}DEC26{HH}05</PGOT><PGCT>{DD}DEC26{HH}20</PGCT><GTYP>D</GTYP></GTDT>
      <CKDT CKNO="1"><CHKC>11</CHKC><CCLS>Y</CCLS><PCOT>{DD}DEC26{HH}10</PCOT><PCCT>{DD}DEC26{HH}25</PCCT><CTYP>D</CTYP></CKDT>
      <ERUT RTNO = "1"><APCD>CTU</APCD><SCDT>{DD}DEC26{HH}35</SCDT></ERUT>
      <ERUT RTNO = "2"><APCD>XIY</APCD><SCAT>{DD}DEC26{HH}59</SCAT></ERUT>
      <DELY CODE="93" STRT="{DD}DEC26{HH}35" DURA="0045">late inbound aircraft</DELY>
      <EXSC>RCFLOP</EXSC>
      <FTSS>SCH</FTSS>
    </FLTR>
"#;

pub fn schd_1000() -> String {
    let mut s = String::from(HEAD);
    for i in 0..1000u32 {
        let id = (9001 + i).to_string();
        let dd = format!("{:02}", 1 + i % 28);
        let hh = format!("{:02}", i % 24);
        s.push_str(
            &FLTR
                .replace("{ID}", &id)
                .replace("{DD}", &dd)
                .replace("{HH}", &hh),
        );
    }
    s.push_str("  </SCHD>\n</MSG>\n");
    s
}

/// A FLOP mix from the project's own samples (tests/fixtures/sis).
pub fn flop_mix() -> Vec<&'static str> {
    vec![
        include_str!("../../tests/fixtures/sis/005-FLOP-PSDT-stand-plan.xml"),
        include_str!("../../tests/fixtures/sis/006-FLOP-PSHT-pushback.xml"),
        include_str!("../../tests/fixtures/sis/007-FLOP-TIPT-tractor.xml"),
        include_str!("../../tests/fixtures/sis/009-FLOP-SRVT-services.xml"),
        include_str!("../../tests/fixtures/sis/011-FLOP-HNAG-agents.xml"),
        include_str!("../../tests/fixtures/sis/014-FLOP-CTOT-slot.xml"),
        include_str!("../../tests/fixtures/sis/016-FLOP-FDIV-diverted.xml"),
        include_str!("../../tests/fixtures/sis/021-FLOP-ERUT-route.xml"),
        include_str!("../../tests/fixtures/sis/022-FLOP-DELY-delays.xml"),
        include_str!("../../tests/fixtures/sis/023-FLOP-VIPF-vip.xml"),
        include_str!("../../tests/fixtures/sis/026-FLOP-GTDT-unknown-element.xml"),
        include_str!("../../tests/fixtures/sis/028-FLOP-FDEL-delete.xml"),
    ]
}

/// quick-xml's raw event loop over the same text: the ceiling.
pub fn tokenize(s: &str) -> usize {
    let mut r = Reader::from_str(s);
    let mut n = 0;
    loop {
        match r.read_event() {
            Ok(Event::Eof) | Err(_) => return n,
            Ok(ev) => {
                black_box(&ev);
                n += 1;
            }
        }
    }
}
