//! The ACRIS flight API (issue 36 items 3 and 5; docs/acris.md) over real
//! HTTP (and once over TLS) on a database filled by the real pipeline
//! (ingest + pump of a generated schedule and of flights built here), every
//! answer checked against ACI's ACRISFlight / ACRISFlightList draft-03
//! schemas by Python's jsonschema (`common/acris_validate.py`). The schemas
//! are read from `../shared/standards/acris/` (the test skips, saying so,
//! when they are absent); the validator is installed by scripts/services.sh.

use crate::common;

use chrono::Duration;
use common::jobs::drain_ok;
use common::{TestDb, TestMailbox, manual_clock, runner};
use msgx::clock::{ManualClock, SharedClock};
use msgx::console::access::sha256_hex;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const TOKEN: &str = "acris-reader-0123456789abcdef0123456789";
const OPERATOR_TOKEN: &str = "acris-operator-0123456789abcdef01234567";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// ACI's model schemas, or `None` (said) when ../shared is not there.
fn schema_dir() -> Option<PathBuf> {
    let dir = root().join("../shared/standards/acris/model");
    if dir.join("ACRISFlight.schema.json").is_file() {
        Some(dir)
    } else {
        println!(
            "ACRIS schema validation skipped: {} is absent",
            dir.display()
        );
        None
    }
}

/// The Python with jsonschema: `$MSGX_TEST_PYTHON`, the project's `.venv`
/// (scripts/services.sh), else `python3`.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("MSGX_TEST_PYTHON") {
        return p.into();
    }
    let venv = root().join(".venv/bin/python");
    if venv.is_file() {
        venv
    } else {
        "python3".into()
    }
}

/// Validates `(name, schema, document)` triples with the draft-03 helper;
/// `Ok` with its summary, `Err` with every violation (or why it could not run).
fn validate(schemas: &Path, docs: &[(String, &str, Value)]) -> Result<String, String> {
    use std::io::Write;
    let mut child = std::process::Command::new(python())
        .arg(root().join("tests/it/common/acris_validate.py"))
        .arg(schemas)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", python().display()))?;
    let mut input = String::new();
    for (name, schema, document) in docs {
        input += &json!({"name": name, "schema": schema, "document": document}).to_string();
        input.push('\n');
    }
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(input.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

/// One HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: BTreeMap<String, String>,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("JSON ({e}): {self:?}"))
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// GET `path` over `io` (`Connection: close`), with `token` and `extra` headers.
async fn get_over<S: AsyncRead + AsyncWrite + Unpin>(
    mut io: S,
    path: &str,
    token: Option<&str>,
    extra: &[(&str, &str)],
) -> Answer {
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    if let Some(t) = token {
        req += &format!("Authorization: Bearer {t}\r\n");
    }
    for (k, v) in extra {
        req += &format!("{k}: {v}\r\n");
    }
    req += "\r\n";
    io.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    // A TLS peer may close without close_notify after the answer.
    let _ = io.read_to_end(&mut raw).await;
    let (status, headers, body) = common::parse_http_answer(&raw);
    Answer {
        status,
        headers: headers.into_iter().collect(),
        body,
    }
}

/// A running API on a drained database, its clock and runner.
struct Api {
    addr: SocketAddr,
    db: TestDb,
    mailbox: TestMailbox,
    clock: ManualClock,
    runner: msgx::scheduler::runner::JobRunner,
    _tokens: tempfile::NamedTempFile,
    _stop: tokio::sync::watch::Sender<bool>,
    _runner_stop: tokio::sync::watch::Sender<bool>,
    /// Every 200 body fetched, for the schema check.
    seen: std::sync::Mutex<Vec<(String, &'static str, Value)>>,
}

/// A tokens file (mode 0600 by tempfile) with a viewer and an operator token.
fn tokens_file() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    let text = format!(
        "[[token]]\nname = \"fids\"\nrole = \"viewer\"\nsha256 = \"{}\"\n\n\
         [[token]]\nname = \"ops\"\nrole = \"operator\"\nsha256 = \"{}\"\n",
        sha256_hex(TOKEN.as_bytes()),
        sha256_hex(OPERATOR_TOKEN.as_bytes()),
    );
    std::fs::write(file.path(), text).expect("write tokens");
    file
}

/// `<TAG>v</TAG>` for each pair.
fn tags(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(t, v)| format!("<{t}>{v}</{t}>"))
        .collect()
}

/// A FLTR of `flid` with the mandatory fields, then `extra` (sis-format §2.3).
fn flight(flid: i64, alcd: &str, flno: &str, mvin: &str, sodt: &str, extra: &str) -> String {
    let fixed = tags(&[
        ("FLID", &flid.to_string()),
        ("ALCD", alcd),
        ("FLNO", flno),
        ("MVIN", mvin),
        ("SODT", sodt),
        ("FLTY", "W"),
        ("FLIN", "D"),
        ("ACFT", "320"),
    ]);
    format!("<FLTR>{fixed}{extra}</FLTR>")
}

/// The flights built here, on 1 Dec 2026 (the clock is at 16:00 local):
/// 7001 a departure to PEK via XIY, boarding, master of 7002 and 7003; 7004
/// an arrival from XIY airborne; 7005 a cancelled arrival; 7006 a departure
/// deleted later.
fn built_schedule() -> String {
    let master = flight(
        7001,
        "YG",
        "YG7001",
        "D",
        "01DEC261700",
        "<RENO>B2574</RENO><TRML>T2</TRML><BOTM>01DEC261550</BOTM>\
         <ERUT RTNO=\"1\"><APCD>CTU</APCD><SCDT>01DEC261700</SCDT></ERUT>\
         <ERUT RTNO=\"2\"><APCD>XIY</APCD><SCAT>01DEC261830</SCAT><SCDT>01DEC261930</SCDT></ERUT>\
         <ERUT RTNO=\"3\"><APCD>PEK</APCD><SCAT>01DEC262130</SCAT></ERUT>\
         <GTDT GTNO=\"1\"><GATE>B12</GATE><PGOT>01DEC261530</PGOT><GOTM>01DEC261540</GOTM><GTYP>D</GTYP></GTDT>",
    );
    let share = |flid, alcd, flno| {
        flight(
            flid,
            alcd,
            flno,
            "D",
            "01DEC261700",
            "<MAID>7001</MAID><ROUT RTNO=\"1\"><APCD>PEK</APCD><SCAT>01DEC262130</SCAT></ROUT>",
        )
    };
    let arrival = flight(
        7004,
        "CSC",
        "CSC8701",
        "A",
        "01DEC261800",
        "<PADT>01DEC261605</PADT><ROUT RTNO=\"1\"><APCD>XIY</APCD><SCDT>01DEC261600</SCDT></ROUT>\
         <CLDT CLNO=\"1\"><BELT>7</BELT><PCOT>01DEC261810</PCOT></CLDT>",
    );
    let cancelled = flight(
        7005,
        "YG",
        "YG7005",
        "A",
        "01DEC261900",
        "<CNCL>01DEC261200</CNCL>",
    );
    let doomed = flight(7006, "YG", "YG7006", "D", "01DEC262000", "");
    common::sis::schd_dnld(
        1,
        &[
            master,
            share(7002, "CA", "CA1234"),
            share(7003, "MU", "MU5555"),
            arrival,
            cancelled,
            doomed,
        ],
    )
}

impl Api {
    /// Drains generated days (`msgx mailbox generate --rich`: 600 flights,
    /// FLOPs) and [`built_schedule`], then binds the API on loopback.
    async fn start(tweak: impl FnOnce(&mut msgx::config::Config)) -> Api {
        let db = TestDb::migrated().await;
        let mailbox = TestMailbox::new().await;
        let (clock, shared): (_, SharedClock) = manual_clock();
        let spec = msgx::commands::generate::Spec {
            messages: 300,
            flights: 600,
            seed: 7,
            duplicates: 0.0,
            malformed: 0.0,
            holes: 0,
            first_seqn: 1000,
            package_flights: 60,
            rich: true,
        };
        for xml in msgx::commands::generate::messages(&spec)
            .into_iter()
            .flatten()
        {
            mailbox.insert(&xml).await;
        }
        mailbox.insert(&built_schedule()).await;
        let tokens = tokens_file();
        let tokens_path = tokens.path().to_path_buf();
        let (runner, runner_stop) = runner(&db, Some(&mailbox), shared.clone(), |c| {
            c.msgx.acris.listen = Some("127.0.0.1:0".into());
            c.msgx.acris.tokens_file = Some(tokens_path);
            tweak(c);
        });
        drain_ok(&runner).await;
        let server = msgx::acris::bind(
            "127.0.0.1:0",
            &runner.config,
            db.pool.clone(),
            shared.clone(),
        )
        .await
        .expect("the ACRIS API binds");
        let addr = server.local_addr();
        let (stop, rx) = tokio::sync::watch::channel(false);
        tokio::spawn(server.serve(rx));
        Api {
            addr,
            db,
            mailbox,
            clock,
            runner,
            _tokens: tokens,
            _stop: stop,
            _runner_stop: runner_stop,
            seen: Default::default(),
        }
    }

    async fn get_with(&self, path: &str, token: Option<&str>, extra: &[(&str, &str)]) -> Answer {
        let tcp = tokio::net::TcpStream::connect(self.addr)
            .await
            .expect("connect");
        get_over(tcp, path, token, extra).await
    }

    /// GET with the viewer token; a 200 body is kept for the schema check
    /// (`schema` names the body's ACI schema).
    async fn get(&self, path: &str, schema: &'static str) -> Answer {
        let a = self.get_with(path, Some(TOKEN), &[]).await;
        if a.status == 200 {
            self.seen
                .lock()
                .expect("lock")
                .push((path.to_string(), schema, a.json()));
        }
        a
    }

    /// Every kept body against ACI's schemas.
    fn check_schemas(&self) {
        let Some(dir) = schema_dir() else { return };
        let docs = self.seen.lock().expect("lock").clone();
        assert!(!docs.is_empty(), "nothing fetched");
        match validate(&dir, &docs) {
            Ok(summary) => println!("{summary}"),
            Err(e) => panic!("ACRIS answers violate ACI's schemas:\n{e}"),
        }
    }

    /// Sends `xml` through the mailbox and the pipeline at the clock's time.
    async fn feed(&self, xml: &str) {
        self.mailbox.insert(xml).await;
        drain_ok(&self.runner).await;
    }
}

const DEPARTURES: &str = "/acris/v1/flight/CTU/departure";
const ARRIVALS: &str = "/acris/v1/flight/CTU/arrival";
const LIST: &str = "ACRISFlightList";
const ONE: &str = "ACRISFlight";

fn numbers(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|f| {
            format!(
                "{}{}",
                f["flightNumber"]["airlineCode"].as_str().unwrap_or(""),
                f["flightNumber"]["trackNumber"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn find<'a>(list: &'a Value, number: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|f| {
        format!(
            "{}{}",
            f["flightNumber"]["airlineCode"].as_str().unwrap_or(""),
            f["flightNumber"]["trackNumber"].as_str().unwrap_or("")
        ) == number
    })
}

#[tokio::test]
async fn every_route_answers_what_acis_schemas_accept() {
    let api = Api::start(|_| {}).await;
    let deps = api.get(DEPARTURES, LIST).await;
    assert_eq!(deps.status, 200, "{deps:?}");
    assert_eq!(deps.header("content-type"), Some("application/json"));
    let list = deps.json();
    assert!(
        list.as_array().is_some_and(|l| l.len() == 50),
        "a full default page"
    );
    let all = api
        .get(&format!("{DEPARTURES}?length=1000"), LIST)
        .await
        .json();
    assert!(
        all.as_array().is_some_and(|l| l.len() > 50),
        "more than a page"
    );
    let master = find(&all, "YG7001").expect("YG7001 departs in the default window");
    assert_eq!(master["flightStatus"], "Boarding", "{master}");
    assert_eq!(master["departureAirport"], "CTU");
    assert_eq!(master["arrivalAirport"], "PEK");
    assert_eq!(master["via"][0]["viaAirport"], "XIY");
    assert_eq!(
        master["departure"]["scheduled"],
        "2026-12-01T17:00:00+08:00"
    );
    assert_eq!(master["departure"]["gate"], "B12");
    assert_eq!(master["departure"]["terminal"], "T2");
    assert_eq!(master["arrival"]["scheduled"], "2026-12-01T21:30:00+08:00");
    assert_eq!(master["aircraftType"]["modelName"], "320");
    assert_eq!(master["aircraftType"]["registration"], "B2574");
    assert_eq!(master["originDate"], "2026-12-01T00:00:00Z");
    assert_eq!(master["lastUpdate"], "2026-12-01T08:00:00Z");
    // Ordered by scheduled time.
    let times: Vec<String> = all
        .as_array()
        .expect("list")
        .iter()
        .map(|f| {
            chrono::DateTime::parse_from_rfc3339(f["departure"]["scheduled"].as_str().unwrap_or(""))
                .map(|t| t.to_utc().to_rfc3339())
                .unwrap_or_default()
        })
        .collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted);

    let arrs = api
        .get(&format!("{ARRIVALS}?length=1000"), LIST)
        .await
        .json();
    let from_xiy = find(&arrs, "CSC8701").expect("the arrival from XIY");
    assert_eq!(from_xiy["operatingAirline"]["icaoCode"], "CSC");
    assert_eq!(from_xiy["flightStatus"], "InApproach");
    assert_eq!(from_xiy["departureAirport"], "XIY");
    assert_eq!(from_xiy["arrival"]["baggageClaim"]["carousel"], "7");
    assert_eq!(
        find(&arrs, "YG7005").expect("cancelled")["flightStatus"],
        "Canceled"
    );

    // The other routes, each kept for the schema check.
    let r = api
        .get(
            &format!("{ARRIVALS}?from=2026-12-01T06:00&timeRange=720"),
            LIST,
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let found = api
        .get("/acris/v1/flightDetails/YG/7001/2026-12-01", LIST)
        .await;
    assert_eq!(numbers(&found.json()), ["YG7001"]);
    let one = api
        .get("/acris/v1/flightDetails/YG/7001/2026-12-01/CTU/PEK", ONE)
        .await;
    assert_eq!(one.status, 200, "{one:?}");
    assert_eq!(one.json()["flightNumber"]["trackNumber"], "7001");
    let none = api
        .get("/acris/v1/flightDetails/YG/7001/2026-12-01/CTU/XIY", ONE)
        .await;
    assert_eq!(none.status, 404, "{none:?}");
    assert!(none.json()["error"].is_string());
    let empty = api
        .get("/acris/v1/flightDetails/YG/7001/2026-12-02", LIST)
        .await;
    assert_eq!(empty.json(), json!([]));
    api.check_schemas();
}

#[tokio::test]
async fn the_schema_check_rejects_a_broken_flight() {
    let Some(dir) = schema_dir() else { return };
    let good = json!({
        "operatingAirline": {"iataCode": "YG"},
        "flightNumber": {"airlineCode": "YG", "trackNumber": "9028"},
        "originDate": "2026-12-01T00:00:00Z",
        "flightStatus": "Scheduled",
        "departure": {"scheduled": "2026-12-01T17:00:00+08:00"}
    });
    let ok = validate(&dir, &[("good".into(), ONE, good.clone())]);
    assert!(ok.is_ok(), "{ok:?}");
    for (what, broken) in [
        ("status", json!({"flightStatus": "Delayed"})),
        (
            "trackNumber",
            json!({"flightNumber": {"airlineCode": "YG"}}),
        ),
        ("iataCode", json!({"operatingAirline": {"iataCode": "YGX"}})),
        ("date-time", json!({"departure": {"scheduled": "17:00"}})),
        ("null", json!({"arrivalAirport": null})),
    ] {
        let mut doc = good.clone();
        for (k, v) in broken.as_object().expect("object") {
            doc[k] = v.clone();
        }
        let list = json!([doc]);
        let out = validate(&dir, &[(what.into(), LIST, list)]);
        assert!(
            out.as_ref().is_err_and(|e| e.contains("INVALID")),
            "{what}: {out:?}"
        );
    }
}

#[tokio::test]
async fn over_tls_with_a_generated_certificate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("certificate");
    let (pem, key) = (dir.path().join("acris.pem"), dir.path().join("acris.key"));
    std::fs::write(&pem, cert.cert.pem()).expect("write cert");
    std::fs::write(&key, cert.signing_key.serialize_pem()).expect("write key");
    let api = Api::start(|c| {
        c.msgx.acris.tls_cert = Some(pem.clone());
        c.msgx.acris.tls_key = Some(key.clone());
    })
    .await;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.cert.der().clone()).expect("root");
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(api.addr)
        .await
        .expect("connect");
    let name = rustls_pki_types::ServerName::try_from("localhost").expect("name");
    let tls = connector.connect(name, tcp).await.expect("TLS handshake");
    let a = get_over(tls, DEPARTURES, Some(TOKEN), &[]).await;
    assert_eq!(a.status, 200, "{a:?}");
    api.seen
        .lock()
        .expect("lock")
        .push(("TLS departures".into(), LIST, a.json()));
    // Plain HTTP on the TLS port gets no HTTP answer.
    let plain = api.get_with(DEPARTURES, Some(TOKEN), &[]).await;
    assert_eq!(plain.status, 0, "{plain:?}");
    api.check_schemas();
}

#[tokio::test]
async fn a_token_is_needed_on_every_route_and_wrong_ones_are_limited() {
    let api = Api::start(|_| {}).await;
    for path in [
        DEPARTURES,
        "/acris/v1/flightDetails/YG/7001/2026-12-01",
        "/acris/v1/openapi.json",
        "/acris/v1/nothing",
    ] {
        let a = api.get_with(path, None, &[]).await;
        assert_eq!(a.status, 401, "{path}: {a:?}");
        assert_eq!(a.header("www-authenticate"), Some("Bearer realm=\"msgx\""));
        assert_eq!(a.json()["error"], "missing bearer token");
    }
    let ok = api.get_with(DEPARTURES, Some(OPERATOR_TOKEN), &[]).await;
    assert_eq!(ok.status, 200, "any role reads");
    let wrong = api
        .get_with(DEPARTURES, Some("not-the-token-0123456789"), &[])
        .await;
    assert_eq!(wrong.status, 401);
    assert!(
        wrong
            .header("www-authenticate")
            .is_some_and(|h| h.contains("invalid_token"))
    );
    // 4 missing + 1 wrong so far; the 20th failure locks the client out.
    for _ in 0..15 {
        api.get_with(DEPARTURES, Some("guess-0123456789abcdef"), &[])
            .await;
    }
    let locked = api.get_with(DEPARTURES, Some(TOKEN), &[]).await;
    assert_eq!(locked.status, 429, "{locked:?}");
    api.clock.advance(Duration::minutes(
        msgx::acris::server::FAILED_AUTH_WINDOW_MINUTES,
    ));
    let again = api.get_with(DEPARTURES, Some(TOKEN), &[]).await;
    assert_eq!(again.status, 200, "the window has passed");
}

#[tokio::test]
async fn another_airport_is_404_and_bad_parameters_are_400_with_a_reason() {
    let api = Api::start(|_| {}).await;
    let other = api.get("/acris/v1/flight/PEK/departure", LIST).await;
    assert_eq!(other.status, 404, "{other:?}");
    assert!(
        other.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("CTU"))
    );
    assert_eq!(
        api.get("/acris/v1/flight/ctu/arrival", LIST).await.status,
        200
    );
    for (query, name) in [
        ("length=0", "length"),
        ("length=5000", "length"),
        ("offset=x", "offset"),
        ("from=tomorrow", "from"),
        ("from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", "to"),
        ("timeRange=-5", "timeRange"),
        ("lastUpdate=now", "lastUpdate"),
        ("colour=red", "query"),
    ] {
        let a = api.get(&format!("{DEPARTURES}?{query}"), LIST).await;
        assert_eq!(a.status, 400, "{query}: {a:?}");
        let e = a.json()["error"].as_str().unwrap_or("").to_string();
        assert!(e.starts_with(name), "{query}: {e}");
    }
    for path in [
        "/acris/v1/flightDetails/Y/7001/2026-12-01",
        "/acris/v1/flightDetails/YG/70011/2026-12-01",
        "/acris/v1/flightDetails/YG/7001/1.12.2026",
        "/acris/v1/flightDetails/YG/7001/2026-12-01/C/PEK",
    ] {
        let a = api.get(path, ONE).await;
        assert_eq!(a.status, 400, "{path}: {a:?}");
        assert!(a.json()["error"].is_string());
    }
}

/// Last-Modified names the window's newest change; If-Modified-Since of it
/// answers 304 until a flight of the window changes (here a gate, then a
/// deletion); `lastUpdate` returns only the flights changed after it.
#[tokio::test]
async fn the_window_answers_304_until_it_changes_and_last_update_is_a_delta() {
    let api = Api::start(|_| {}).await;
    let first = api.get(DEPARTURES, LIST).await;
    let modified = first
        .header("last-modified")
        .expect("Last-Modified")
        .to_string();
    assert_eq!(modified, "Tue, 01 Dec 2026 08:00:00 GMT");
    let same = api
        .get_with(DEPARTURES, Some(TOKEN), &[("If-Modified-Since", &modified)])
        .await;
    assert_eq!(same.status, 304, "{same:?}");
    assert!(same.body.is_empty());
    assert_eq!(same.header("last-modified"), Some(modified.as_str()));

    api.clock.advance(Duration::seconds(10));
    let gate = "<GTDT GTNO=\"1\"><GATE>C3</GATE><PGOT>01DEC261530</PGOT><GTYP>D</GTYP></GTDT>";
    api.feed(&common::sis::flop(2, 7001, "GTDT", gate)).await;
    let changed = api
        .get_with(DEPARTURES, Some(TOKEN), &[("If-Modified-Since", &modified)])
        .await;
    assert_eq!(changed.status, 200, "{changed:?}");
    assert_eq!(
        changed.header("last-modified"),
        Some("Tue, 01 Dec 2026 08:00:10 GMT")
    );
    let delta = api
        .get(
            &format!("{DEPARTURES}?lastUpdate=2026-12-01T08:00:00Z"),
            LIST,
        )
        .await
        .json();
    assert_eq!(numbers(&delta), ["YG7001"], "only the flight changed since");
    assert_eq!(delta[0]["departure"]["gate"], "C3");
    assert_eq!(delta[0]["lastUpdate"], "2026-12-01T08:00:10Z");
    let local = api
        .get(
            &format!("{DEPARTURES}?lastUpdate=2026-12-01T16:00:10"),
            LIST,
        )
        .await
        .json();
    assert_eq!(
        local,
        json!([]),
        "a local time of the airport; nothing after it"
    );

    // A deletion is a change of the window too, and the flight is gone.
    api.clock.advance(Duration::seconds(10));
    let all = api
        .get(&format!("{DEPARTURES}?length=1000"), LIST)
        .await
        .json();
    assert!(find(&all, "YG7006").is_some());
    api.feed(&common::sis::flop(3, 7006, "FDEL", "<FDEL/>"))
        .await;
    let after = api
        .get_with(
            DEPARTURES,
            Some(TOKEN),
            &[("If-Modified-Since", "Tue, 01 Dec 2026 08:00:10 GMT")],
        )
        .await;
    assert_eq!(after.status, 200, "{after:?}");
    assert_eq!(
        after.header("last-modified"),
        Some("Tue, 01 Dec 2026 08:00:20 GMT")
    );
    let all = api
        .get(&format!("{DEPARTURES}?length=1000"), LIST)
        .await
        .json();
    assert!(
        find(&all, "YG7006").is_none(),
        "DELETED flights are left out"
    );
    let gone = api
        .get("/acris/v1/flightDetails/YG/7006/2026-12-01", LIST)
        .await;
    assert_eq!(gone.json(), json!([]));
    let state: String = sqlx::query_scalar("SELECT state FROM flight_schd WHERE flid = 7006")
        .fetch_one(&api.db.pool)
        .await
        .expect("row");
    assert_eq!(state, "DELETED");
    api.check_schemas();
}

#[tokio::test]
async fn pages_split_the_window_in_order() {
    let api = Api::start(|_| {}).await;
    let whole = numbers(
        &api.get(&format!("{DEPARTURES}?length=6"), LIST)
            .await
            .json(),
    );
    assert_eq!(whole.len(), 6);
    let mut paged = Vec::new();
    for offset in [0, 2, 4] {
        let page = api
            .get(&format!("{DEPARTURES}?length=2&offset={offset}"), LIST)
            .await;
        paged.extend(numbers(&page.json()));
    }
    assert_eq!(paged, whole);
    let total = api
        .get(&format!("{DEPARTURES}?length=1000"), LIST)
        .await
        .json();
    let n = total.as_array().map_or(0, Vec::len);
    let past = api
        .get(&format!("{DEPARTURES}?length=10&offset={n}"), LIST)
        .await;
    assert_eq!(past.json(), json!([]), "past the end: empty");
    let ranged = api
        .get(
            &format!("{DEPARTURES}?timeRange=1500&length=1&offset=5"),
            LIST,
        )
        .await
        .json();
    assert_eq!(
        ranged.as_array().map(Vec::len),
        Some(n),
        "timeRange: no paging"
    );
    api.check_schemas();
}

#[tokio::test]
async fn a_master_shows_its_shares_and_a_share_its_master_and_sibling() {
    let api = Api::start(|_| {}).await;
    let all = api
        .get(&format!("{DEPARTURES}?length=1000"), LIST)
        .await
        .json();
    let codes = |n: &str| -> Vec<String> {
        let f = find(&all, n).unwrap_or_else(|| panic!("{n} listed"));
        f["codeShares"]
            .as_array()
            .map(|c| {
                c.iter()
                    .map(|s| {
                        format!(
                            "{}{}",
                            s["airlineCode"].as_str().unwrap_or(""),
                            s["trackNumber"].as_str().unwrap_or("")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(codes("YG7001"), ["CA1234", "MU5555"]);
    assert_eq!(codes("CA1234"), ["YG7001", "MU5555"]);
    assert_eq!(codes("MU5555"), ["YG7001", "CA1234"]);
    assert!(codes("YG7006").is_empty());
    let share = find(&all, "CA1234").expect("share");
    assert_eq!(share["operatingAirline"]["iataCode"], "CA");
    api.check_schemas();
}

#[tokio::test]
async fn the_openapi_document_is_3_1_lists_every_route_and_is_committed() {
    let api = Api::start(|_| {}).await;
    let a = api
        .get_with("/acris/v1/openapi.json", Some(TOKEN), &[])
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.body, msgx::acris::openapi::text(), "served as generated");
    let doc = a.json();
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1.")),
        "{}",
        doc["openapi"]
    );
    let paths: Vec<&String> = doc["paths"].as_object().expect("paths").keys().collect();
    assert_eq!(paths.len(), 5, "{paths:?}");
    // Every documented path is a route: a request on it is not the fallback's 404.
    for p in paths {
        let concrete = p
            .replace("{airport}", "CTU")
            .replace("{airlineCode}", "YG")
            .replace("{flightNumber}", "7001")
            .replace("{originDate}", "2026-12-01")
            .replace("{depAirport}", "CTU")
            .replace("{arrAirport}", "PEK");
        let r = api.get_with(&concrete, Some(TOKEN), &[]).await;
        assert_eq!(r.status, 200, "{p}: {r:?}");
        assert!(
            doc["paths"][p]["get"]["security"].is_array(),
            "{p} names its bearer token"
        );
    }
    let committed = std::fs::read_to_string(root().join("schemas/acris-openapi.json"))
        .expect("schemas/acris-openapi.json");
    assert_eq!(
        committed,
        msgx::acris::openapi::text(),
        "schemas/acris-openapi.json drifted; run `msgx contract export`"
    );
    let extra = vec![msgx::contract::Published {
        file_name: msgx::acris::openapi::FILE_NAME.into(),
        text: msgx::acris::openapi::text(),
    }];
    let problems = msgx::contract::check_with(&root().join("schemas"), extra).expect("readable");
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn config_check_refuses_a_shared_tokens_file_and_a_plain_non_loopback_listener() {
    use std::os::unix::fs::PermissionsExt;
    let tokens = tokens_file();
    std::fs::set_permissions(tokens.path(), std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let mut c = msgx::config::Config::default();
    c.msgx.acris.listen = Some("127.0.0.1:0".into());
    c.msgx.acris.tokens_file = Some(tokens.path().to_path_buf());
    let file = common::write_config(&c);
    let out = common::msgx(file.path(), &["config", "check"]);
    let text = common::text(&out);
    assert_eq!(common::code(&out), 2, "{text}");
    assert!(
        text.contains("msgx.acris.tokens-file") && text.contains("chmod 600"),
        "{text}"
    );
    c.msgx.acris.listen = Some("10.1.2.3:8091".into());
    std::fs::set_permissions(tokens.path(), std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let file = common::write_config(&c);
    let out = common::msgx(file.path(), &["config", "check"]);
    let text = common::text(&out);
    assert_eq!(common::code(&out), 2, "{text}");
    assert!(text.contains("msgx.acris.tls-cert"), "{text}");
}

/// The address the daemon logged for the API.
async fn daemon_api(d: &common::Daemon) -> SocketAddr {
    let address = || {
        let log = d.output();
        let line = log
            .lines()
            .find(|l| l.contains("ACRIS flight API listening"))?;
        let at = line.find("listen=")? + "listen=".len();
        line[at..]
            .split_whitespace()
            .next()?
            .parse::<SocketAddr>()
            .ok()
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < until {
        if let Some(addr) = address() {
            return addr;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!(
        "the daemon logged no ACRIS address; its log:\n{}",
        d.output()
    )
}

#[tokio::test]
async fn the_daemon_serves_the_api_on_its_own_pool() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let tokens = tokens_file();
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.acris.listen = Some("127.0.0.1:0".into());
        c.msgx.acris.tokens_file = Some(tokens.path().to_path_buf());
    });
    let d = common::Daemon::spawn(cfg.path(), &[]);
    let addr = daemon_api(&d).await;
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let a = get_over(tcp, DEPARTURES, Some(TOKEN), &[]).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json(), json!([]), "nothing stored yet");
    let sessions: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
    )
    .bind(msgx::store::pg::ACRIS_APPLICATION)
    .fetch_one(&db.pool)
    .await
    .expect("pg_stat_activity");
    assert!(
        sessions >= 1,
        "no '{}' session",
        msgx::store::pg::ACRIS_APPLICATION
    );
    d.terminate();
}

/// The API's pool: its own sessions, its statement timeout, and no JIT
/// (docs/BENCHMARKS.md "ACRIS API": JIT took 2.6 s of a 1,000-flight page).
#[tokio::test]
async fn the_api_pool_runs_its_own_sessions_without_jit() {
    let db = TestDb::migrated().await;
    let c = db.config();
    let pool = msgx::store::pg::connect_acris(&c.msgx.postgres, &c.msgx.acris).expect("pool");
    let (jit, timeout, app): (String, String, String) = sqlx::query_as(
        "SELECT current_setting('jit'), current_setting('statement_timeout'), \
                current_setting('application_name')",
    )
    .fetch_one(&pool)
    .await
    .expect("settings");
    assert_eq!(
        (jit.as_str(), timeout.as_str(), app.as_str()),
        ("off", "5s", msgx::store::pg::ACRIS_APPLICATION)
    );
}
