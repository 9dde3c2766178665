//! SIS messages several test files build, each builder written once
//! (issue 19, item 7; distinct SEQNs give distinct business identities),
//! and the sample files on disk.

use std::path::{Path, PathBuf};

/// The project's own SIS samples.
pub const OWN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sis");

/// The `*.xml` files of `dir`, in name order.
pub fn xml_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read fixture dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    v.sort();
    v
}

/// The files of [`OWN`], in name order.
pub fn own_files() -> Vec<PathBuf> {
    xml_files(Path::new(OWN))
}

/// One FLTR of a SCHD with the fields every flight has, then `extra`.
pub fn fltr(flid: i64, sodt: &str, extra: &str) -> String {
    format!(
        "<FLTR><FLID>{flid}</FLID><ALCD>YG</ALCD><FLNO>YG{flid}</FLNO><MVIN>D</MVIN><SODT>{sodt}</SODT>\
         <FLTY>W</FLTY><FLIN>D</FLIN><ACFT>733</ACFT>{extra}</FLTR>"
    )
}

/// A SCHD package of `fltrs`; `dttm` is local `yyyyMMddHHmmss`; `extra_meta`
/// goes into META (e.g. an echoed SEQN).
pub fn schd_of(seqn: u32, styp: &str, dttm: &str, extra_meta: &str, fltrs: &[String]) -> String {
    format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>{dttm}</DTTM><TYPE>SCHD</TYPE>\
         <STYP>{styp}</STYP>{extra_meta}</META><SCHD><RECS>{}</RECS>{}</SCHD></MSG>",
        fltrs.len(),
        fltrs.concat()
    )
}

/// [`schd_of`] with one plain [`fltr`] per `(FLID, SODT)`.
pub fn schd_at(
    seqn: u32,
    styp: &str,
    dttm: &str,
    extra_meta: &str,
    flights: &[(i64, &str)],
) -> String {
    let fltrs: Vec<String> = flights
        .iter()
        .map(|(flid, sodt)| fltr(*flid, sodt, ""))
        .collect();
    schd_of(seqn, styp, dttm, extra_meta, &fltrs)
}

/// A SCHD of subtype `styp` sent the evening before (30 Nov 2026 20:00).
pub fn schd(seqn: u32, styp: &str, flights: &[(i64, &str)]) -> String {
    schd_at(seqn, styp, "20261130200000", "", flights)
}

/// A SCHD-DNLD of `fltrs` sent the evening before.
pub fn schd_dnld(seqn: u32, fltrs: &[String]) -> String {
    schd_of(seqn, "DNLD", "20261130200000", "", fltrs)
}

/// A SCHD-DNLD with one flight: SUCCEEDED.
pub fn schd_one_flight(seqn: u32, flid: i64) -> String {
    schd(seqn, "DNLD", &[(flid, "01DEC260900")])
}

/// A FLOP of subtype `styp` for `flid` (1 Dec 2026 08:00) with `payload`.
pub fn flop(seqn: u32, flid: i64, styp: &str, payload: &str) -> String {
    format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>20261201080000</DTTM><TYPE>FLOP</TYPE>\
         <STYP>{styp}</STYP></META><FLOP><FLID>{flid}</FLID><FFID>X</FFID>{payload}</FLOP></MSG>"
    )
}

/// A FLOP subtype msgx does not handle: FAILED(UNSUPPORTED) after its
/// identity is bound, then DEAD(EXHAUSTED).
pub fn unsupported(seqn: u32) -> String {
    flop(seqn, 9003, "ESTT", "<ESTT>01DEC261450</ESTT>")
}

/// One SCHS series (FLTR) for [`schs`]: flight number (its first two letters
/// are the airline), STDT, EDDT, all `DDMMMYY`.
pub struct Series<'a>(pub &'a str, pub &'a str, pub &'a str);

/// A SCHS seasonal schedule (sis-format §2.5) of season `snam` from `sdat` to
/// `edat` (`DDMMMYY`) with `series`, each with a ROUT in `HHMM` and an ERUT
/// with day-change factors, as the real samples have.
pub fn schs(
    seqn: u32,
    styp: &str,
    snam: &str,
    sdat: &str,
    edat: &str,
    series: &[Series],
) -> String {
    let body: String = series
        .iter()
        .map(|Series(flno, stdt, eddt)| {
            format!(
                "<FLTR><ALCD>{}</ALCD><FLNO>{flno}</FLNO><MVIN>D</MVIN><STDT>{stdt}</STDT><EDDT>{eddt}</EDDT>\
                 <DYOP>1200560</DYOP><SCHT>1023</SCHT><FLTY>P</FLTY><FLIN>I</FLIN>\
                 <ROUT RTNO=\"1\"><APCD>HKG</APCD><SCAT>1125</SCAT><SCDT>1330</SCDT></ROUT>\
                 <ACFT>747</ACFT><MAXP>320</MAXP>\
                 <ERUT RTNO=\"1\"><APCD>CTU</APCD><SCDT>{stdt}1023</SCDT><SDDC>0</SDDC></ERUT>\
                 <ERUT RTNO=\"2\"><APCD>HKG</APCD><SCAT>{stdt}1125</SCAT><SADC>+1</SADC></ERUT></FLTR>",
                &flno[..2]
            )
        })
        .collect();
    format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>20261201080000</DTTM><TYPE>SCHS</TYPE>\
         <STYP>{styp}</STYP></META><SCHS><SNAM>{snam}</SNAM><APCD>CTU</APCD><SDAT>{sdat}</SDAT>\
         <EDAT>{edat}</EDAT><RECS>{}</RECS>{body}</SCHS></MSG>",
        series.len()
    )
}

/// One SCHD DNLD of `flights` rich FLTRs (FLIDs from 100000) as `msgx
/// mailbox generate --package-flights N --rich` writes it (about 830 bytes
/// a flight: 4,000 are 3.3 MB, 20,000 the 16.5 MB of issue 32 H3), with
/// each delay text made multi-byte (`läte 遅延`), so a character and a
/// byte count differ all through the text.
pub fn large_schd(flights: u32) -> String {
    let spec = msgx::commands::generate::Spec {
        messages: 1,
        flights,
        seed: 1,
        duplicates: 0.0,
        malformed: 0.0,
        holes: 0,
        first_seqn: 1,
        package_flights: flights,
        rich: true,
    };
    let xml = msgx::commands::generate::messages(&spec)
        .into_iter()
        .flatten()
        .next()
        .expect("one package");
    xml.replace(">late</DELY>", ">läte 遅延</DELY>")
}
