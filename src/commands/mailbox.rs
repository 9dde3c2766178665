//! `msgx mailbox generate|load` (development and test tools, never against
//! production): a synthetic backlog from [`generate`](super::generate), or
//! SIS files inserted into CMINMSGS as the AODB would.

use super::generate;
use crate::clock::SharedClock;
use crate::config::Config;
use crate::exit::Exit;
use std::path::PathBuf;

/// `msgx mailbox generate`: all at once, or one message at a time at
/// `rate` per second.
pub async fn generate(
    config: &Config,
    clock: SharedClock,
    spec: &generate::Spec,
    schedules: bool,
    rate: Option<f64>,
) -> Exit {
    let mailbox = match super::open_mailbox(config, "mailbox generate") {
        Ok(m) => m,
        Err(code) => return code,
    };
    if let Some(rate) = rate {
        if !(rate > 0.0 && rate.is_finite()) {
            eprintln!("msgx mailbox generate: --rate must be a positive number");
            return Exit::Config;
        }
        let (rows, holes, failures) = generate::feed(
            &mailbox,
            spec,
            schedules,
            rate,
            (&clock, config.msgx.airport.tz()),
            |t, id| println!("{t:.6} {id}"),
        )
        .await;
        mailbox.close().await;
        eprintln!("{{\"rows\": {rows}, \"holes\": {holes}, \"failed_attempts\": {failures}}}");
        return Exit::Ok;
    }
    let result = generate::load(&mailbox, spec, schedules).await;
    mailbox.close().await;
    match result {
        Ok((rows, holes)) => {
            println!("{{\"rows\": {rows}, \"holes\": {holes}}}");
            Exit::Ok
        }
        Err(e) => {
            eprintln!("msgx mailbox generate: {e}");
            Exit::Failure
        }
    }
}

pub async fn load(config: &Config, clock: SharedClock, paths: &[PathBuf]) -> Exit {
    let files = match sis_files(paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("msgx mailbox load: {e}");
            return Exit::Failure;
        }
    };
    let mailbox = match super::open_mailbox(config, "mailbox load") {
        Ok(m) => m,
        Err(code) => return code,
    };
    let tz = config.msgx.airport.tz();
    let mut loaded = 0;
    for f in &files {
        let xml = match std::fs::read_to_string(f) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("msgx mailbox load: cannot read {}: {e}", f.display());
                return Exit::Failure;
            }
        };
        let received = clock.now().with_timezone(&tz).naive_local();
        match mailbox.insert_raw(&xml, Some(received)).await {
            Ok(id) => {
                println!("{id}\t{}", f.display());
                loaded += 1;
            }
            Err(e) => {
                eprintln!("msgx mailbox load: {}: {e}", f.display());
                mailbox.close().await;
                return Exit::Failure;
            }
        }
    }
    mailbox.close().await;
    eprintln!("loaded {loaded} message(s) into the mailbox");
    Exit::Ok
}

/// Expands directories to their `*.xml` files; keeps file-name order.
fn sis_files(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x.eq_ignore_ascii_case("xml")))
                .collect();
            files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}
