//! SIS messages several test files build (distinct SEQNs give distinct
//! business identities).

/// A FLOP subtype msgx does not handle: FAILED(UNSUPPORTED) after its
/// identity is bound, then DEAD(EXHAUSTED).
pub fn unsupported(seqn: u32) -> String {
    format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>20261201080000</DTTM><TYPE>FLOP</TYPE>\
         <STYP>ESTT</STYP></META><FLOP><FLID>9003</FLID><FFID>X</FFID><ESTT>01DEC261450</ESTT></FLOP></MSG>"
    )
}

/// A SCHD-DNLD with one flight: SUCCEEDED.
pub fn schd_one_flight(seqn: u32, flid: i64) -> String {
    format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>20261130200000</DTTM><TYPE>SCHD</TYPE>\
         <STYP>DNLD</STYP></META><SCHD><RECS>1</RECS><FLTR><FLID>{flid}</FLID><ALCD>YG</ALCD>\
         <FLNO>YG{flid}</FLNO><MVIN>D</MVIN><SODT>01DEC260900</SODT><FLTY>W</FLTY><FLIN>D</FLIN>\
         <ACFT>733</ACFT></FLTR></SCHD></MSG>"
    )
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
