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
