//! Codec values → stored values: applies the airport time zone and checks the
//! code lists (sis-format §2.3, §2.4). Shared by SCHD, ADFT and FLOP so that
//! one value is judged the same way on every path.

use chrono::NaiveDateTime;

use crate::codec::{
    AirbridgeEvent, CarouselAlloc, ChockEvent, ChuteAlloc, CounterAlloc, Delay, Diversion,
    DoorEvent, Field, GateAlloc, LandingAbort, PushEvent, Return, RoutePoint, ScalarKind,
    ScalarTag, ScalarValue, Service, StandAlloc, TractorEvent, Vip, VipService,
};
use crate::domain::config::DomainConfig;
use crate::domain::error::DomainError;
use crate::domain::flight_state::{
    AirbridgeItem, CarouselItem, ChockItem, ChuteItem, CounterItem, DelayItem, DiversionInfo,
    DoorItem, FlightValue, GateItem, LandingAbortInfo, PushItem, ReturnInfo, RouteItem,
    ServiceItem, StandItem, Time, TractorItem, VipItem, VipServiceItem,
};

/// Code lists checked by the domain (everything else is stored as sent).
pub const MVIN_CODES: &[&str] = &["A", "D"];
pub const FLIN_CODES: &[&str] = &["D", "I", "M"];
pub const DDIR_CODES: &[&str] = &["TO", "FROM"];
pub const REID_CODES: &[&str] = &["A", "G"];
pub const ARES_CODES: &[&str] = &["O", "G"];
pub const POID_CODES: &[&str] = &["O", "C"];
pub const CHID_CODES: &[&str] = &["ON", "OFF"];

/// Checks `value` against `allowed` (exact, upper-case as SIS sends).
pub fn code(
    field: &'static str,
    value: &str,
    allowed: &'static [&'static str],
) -> Result<String, DomainError> {
    if allowed.contains(&value) {
        Ok(value.to_string())
    } else {
        Err(DomainError::InvalidCode {
            field,
            value: value.to_string(),
            allowed,
        })
    }
}

/// An optional code: a value must be in `allowed`; empty/absent is `None`.
fn opt_code(
    field: &'static str,
    f: &Field<String>,
    allowed: &'static [&'static str],
) -> Result<Option<String>, DomainError> {
    f.value().map(|v| code(field, v, allowed)).transpose()
}

/// Value of a text field (empty and absent are `None`).
pub fn text(f: &Field<String>) -> Option<String> {
    f.value().cloned()
}

fn kind_name(v: &ScalarValue) -> &'static str {
    match v {
        ScalarValue::Text(_) => "text",
        ScalarValue::Int(_) => "integer",
        ScalarValue::Decimal(_) => "decimal",
        ScalarValue::Time(_) => "time",
        ScalarValue::Date(_) => "date",
        ScalarValue::Hhmm(_) => "HHMM",
    }
}

/// The converter: one per decision, borrowing the configuration.
#[derive(Debug, Clone, Copy)]
pub struct Conv<'a> {
    pub cfg: &'a DomainConfig,
}

impl Conv<'_> {
    /// A naive local time with the airport zone applied.
    pub fn at(&self, t: NaiveDateTime) -> FlightValue {
        FlightValue::Time(self.cfg.local_time(t))
    }

    /// An optional time field.
    pub fn time(&self, f: &Field<NaiveDateTime>) -> Time {
        f.value().map(|t| self.cfg.local_time(*t))
    }

    /// A route time (`ScalarValue::Time` in SCHD/FLOP; `HHMM` is SCHS-only and rejected).
    fn route_time(&self, field: &'static str, f: &Field<ScalarValue>) -> Result<Time, DomainError> {
        match f.value() {
            None => Ok(None),
            Some(ScalarValue::Time(t)) => Ok(Some(self.cfg.local_time(*t))),
            Some(other) => Err(DomainError::WrongValueKind {
                field,
                found: kind_name(other),
                expected: "time",
            }),
        }
    }

    /// A FLTR scalar: checks the value kind against the tag and the MVIN/FLIN codes.
    pub fn scalar(&self, tag: ScalarTag, v: &ScalarValue) -> Result<FlightValue, DomainError> {
        let out = match (tag.kind(), v) {
            (ScalarKind::Text, ScalarValue::Text(s)) => match tag {
                ScalarTag::MVIN => FlightValue::Text(code("MVIN", s, MVIN_CODES)?),
                ScalarTag::FLIN => FlightValue::Text(code("FLIN", s, FLIN_CODES)?),
                _ => FlightValue::Text(s.clone()),
            },
            (ScalarKind::Int, ScalarValue::Int(i)) => FlightValue::Int(*i),
            (ScalarKind::Decimal, ScalarValue::Decimal(s)) => FlightValue::Decimal(s.clone()),
            (ScalarKind::Time, ScalarValue::Time(t)) => self.at(*t),
            (ScalarKind::Date, ScalarValue::Date(d)) => FlightValue::Date(*d),
            (ScalarKind::Hhmm, ScalarValue::Hhmm(s)) => FlightValue::Hhmm(s.clone()),
            (expected, found) => {
                return Err(DomainError::WrongValueKind {
                    field: tag.name(),
                    found: kind_name(found),
                    expected: match expected {
                        ScalarKind::Text => "text",
                        ScalarKind::Int => "integer",
                        ScalarKind::Decimal => "decimal",
                        ScalarKind::Time => "time",
                        ScalarKind::Date => "date",
                        ScalarKind::Hhmm => "HHMM",
                    },
                });
            }
        };
        Ok(out)
    }

    /// FDIV. DDIR, when sent, must be TO/FROM. No DDES clears all three
    /// (sis-format §3.3); with DDES, DDIR is mandatory.
    pub fn diversion(&self, d: &Diversion) -> Result<Option<DiversionInfo>, DomainError> {
        let ddir = opt_code("FDIV@DDIR", &d.ddir, DDIR_CODES)?;
        let Some(ddes) = text(&d.ddes) else {
            return Ok(None);
        };
        let ddir = ddir.ok_or(DomainError::Missing {
            field: "FDIV@DDIR",
            context: "a diversion with DDES needs DDIR TO or FROM",
        })?;
        Ok(Some(DiversionInfo {
            ddes,
            ddir,
            reason: text(&d.reason),
        }))
    }

    /// FRET. REID is mandatory (A/G) when FRET has content.
    pub fn ret(&self, r: &Return) -> Result<ReturnInfo, DomainError> {
        let reid = opt_code("FRET@REID", &r.reid, REID_CODES)?.ok_or(DomainError::Missing {
            field: "FRET@REID",
            context: "a return needs REID A or G",
        })?;
        Ok(ReturnInfo {
            reid,
            reason: text(&r.reason),
        })
    }

    /// FLAB. ARES is mandatory (O/G) when FLAB has content.
    pub fn abort(&self, a: &LandingAbort) -> Result<LandingAbortInfo, DomainError> {
        let ares = opt_code("FLAB@ARES", &a.ares, ARES_CODES)?.ok_or(DomainError::Missing {
            field: "FLAB@ARES",
            context: "a landing abort needs ARES O or G",
        })?;
        Ok(LandingAbortInfo {
            ares,
            reason: text(&a.reason),
        })
    }

    pub fn route(&self, r: &RoutePoint) -> Result<RouteItem, DomainError> {
        Ok(RouteItem {
            ordinal: 0,
            source_seq: r.seq,
            apcd: text(&r.apcd),
            scat: self.route_time("SCAT", &r.scat)?,
            scdt: self.route_time("SCDT", &r.scdt)?,
            sadc: text(&r.sadc),
            sddc: text(&r.sddc),
        })
    }

    pub fn stand(&self, s: &StandAlloc) -> Result<StandItem, DomainError> {
        Ok(StandItem {
            ordinal: 0,
            source_seq: s.seq,
            psst: text(&s.psst),
            stst: self.time(&s.stst),
            stet: self.time(&s.stet),
        })
    }

    pub fn gate(&self, g: &GateAlloc) -> Result<GateItem, DomainError> {
        Ok(GateItem {
            ordinal: 0,
            source_seq: g.seq,
            gate: text(&g.gate),
            pgot: self.time(&g.pgot),
            pgct: self.time(&g.pgct),
            gotm: self.time(&g.gotm),
            gctm: self.time(&g.gctm),
            gtyp: text(&g.gtyp),
        })
    }

    pub fn counter(&self, c: &CounterAlloc) -> Result<CounterItem, DomainError> {
        Ok(CounterItem {
            ordinal: 0,
            source_seq: c.seq,
            chkc: text(&c.chkc),
            ccls: text(&c.ccls),
            pcot: self.time(&c.pcot),
            pcct: self.time(&c.pcct),
            cotm: self.time(&c.cotm),
            cctm: self.time(&c.cctm),
            ctyp: text(&c.ctyp),
        })
    }

    pub fn carousel(&self, c: &CarouselAlloc) -> Result<CarouselItem, DomainError> {
        Ok(CarouselItem {
            ordinal: 0,
            source_seq: c.seq,
            belt: text(&c.belt),
            bcls: text(&c.bcls),
            pcot: self.time(&c.pcot),
            pcct: self.time(&c.pcct),
            fbag: self.time(&c.fbag),
            lbag: self.time(&c.lbag),
            btyp: text(&c.btyp),
        })
    }

    pub fn chute(&self, c: &ChuteAlloc) -> Result<ChuteItem, DomainError> {
        Ok(ChuteItem {
            ordinal: 0,
            source_seq: c.seq,
            chut: text(&c.chut),
            ccls: text(&c.ccls),
            pcbt: self.time(&c.pcbt),
            pcet: self.time(&c.pcet),
            cbtm: self.time(&c.cbtm),
            cetm: self.time(&c.cetm),
            ctyp: text(&c.ctyp),
        })
    }

    /// CHOT: CHID, when sent, must be ON/OFF.
    pub fn chock(&self, c: &ChockEvent) -> Result<ChockItem, DomainError> {
        Ok(ChockItem {
            ordinal: 0,
            source_seq: c.seq,
            chtm: self.time(&c.chtm),
            chid: opt_code("CHOT/CHID", &c.chid, CHID_CODES)?,
            chst: text(&c.chst),
        })
    }

    pub fn airbridge(&self, a: &AirbridgeEvent) -> Result<AirbridgeItem, DomainError> {
        Ok(AirbridgeItem {
            ordinal: 0,
            source_seq: a.seq,
            abdg: text(&a.abdg),
            abop: text(&a.abop),
            aotm: self.time(&a.aotm),
        })
    }

    pub fn delay(&self, d: &Delay) -> Result<DelayItem, DomainError> {
        Ok(DelayItem {
            ordinal: 0,
            source_seq: None,
            code: text(&d.code),
            strt: self.time(&d.strt),
            dura_minutes: d.dura_minutes.value().copied(),
            comment: text(&d.comment),
        })
    }

    pub fn service(&self, s: &Service) -> Result<ServiceItem, DomainError> {
        Ok(ServiceItem {
            ordinal: 0,
            source_seq: None,
            srtc: text(&s.srtc),
            srqt: text(&s.srqt),
            srst: self.time(&s.srst),
            sret: self.time(&s.sret),
            srpr: text(&s.srpr),
            sanr: text(&s.sanr),
            sarr: text(&s.sarr),
        })
    }

    pub fn vip(&self, v: &Vip) -> Result<VipItem, DomainError> {
        let mut vipt: Vec<VipServiceItem> = v.vipt.iter().map(|s| self.vip_service(s)).collect();
        crate::domain::flight_state::renumber(&mut vipt);
        Ok(VipItem {
            ordinal: 0,
            source_seq: None,
            vpcd: text(&v.vpcd),
            vfes: v.vfes.value().copied(),
            vipt,
        })
    }

    fn vip_service(&self, s: &VipService) -> VipServiceItem {
        VipServiceItem {
            ordinal: 0,
            source_seq: None,
            vscd: text(&s.vscd),
            vtqy: text(&s.vtqy),
            vtst: self.time(&s.vtst),
            vtet: self.time(&s.vtet),
        }
    }

    /// PORT: POID, when sent, must be O/C.
    pub fn door(&self, d: &DoorEvent) -> Result<DoorItem, DomainError> {
        Ok(DoorItem {
            ordinal: 0,
            source_seq: None,
            potm: self.time(&d.potm),
            poid: opt_code("PORT/POID", &d.poid, POID_CODES)?,
        })
    }

    pub fn tractor(&self, t: &TractorEvent) -> Result<TractorItem, DomainError> {
        Ok(TractorItem {
            ordinal: 0,
            source_seq: None,
            trtm: self.time(&t.trtm),
            trst: text(&t.trst),
        })
    }

    pub fn push(&self, p: &PushEvent) -> Result<PushItem, DomainError> {
        Ok(PushItem {
            ordinal: 0,
            source_seq: p.seq,
            pstm: self.time(&p.pstm),
            psid: text(&p.psid),
            pust: text(&p.pust),
        })
    }
}
