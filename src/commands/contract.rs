//! `msgx contract export [--dir DIR] [--check]`: the JSON Schemas of the
//! Kafka records, generated from the code (src/contract.rs), and the ACRIS
//! API's OpenAPI document (src/acris/openapi.rs).

use crate::exit::Exit;

/// `msgx contract export [--dir DIR] [--check]` (src/contract.rs).
pub fn export(dir: &std::path::Path, check: bool) -> Exit {
    if check {
        return match crate::contract::check_with(dir, acris()) {
            Ok(problems) if problems.is_empty() => {
                println!("{}: the schemas match the code", dir.display());
                Exit::Ok
            }
            Ok(problems) => {
                for p in problems {
                    eprintln!("msgx contract: {p}");
                }
                Exit::Failure
            }
            Err(e) => {
                eprintln!("msgx contract: {e}");
                Exit::Failure
            }
        };
    }
    match crate::contract::export_with(dir, acris()) {
        Ok(paths) => {
            for p in paths {
                println!("{}", p.display());
            }
            Exit::Ok
        }
        Err(e) => {
            eprintln!("msgx contract: {e}");
            Exit::Failure
        }
    }
}

/// The ACRIS API's OpenAPI document as a contract file.
fn acris() -> Vec<crate::contract::Published> {
    vec![crate::contract::Published {
        file_name: crate::acris::openapi::FILE_NAME.into(),
        text: crate::acris::openapi::text(),
    }]
}
