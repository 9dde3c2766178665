//! `msgx contract export [--dir DIR] [--check]`: the JSON Schemas of the
//! Kafka records, generated from the code (src/contract.rs).

use super::exit;

/// `msgx contract export [--dir DIR] [--check]` (src/contract.rs).
pub fn export(dir: &std::path::Path, check: bool) -> i32 {
    if check {
        return match crate::contract::check(dir) {
            Ok(problems) if problems.is_empty() => {
                println!("{}: the schemas match the code", dir.display());
                exit::OK
            }
            Ok(problems) => {
                for p in problems {
                    eprintln!("msgx contract: {p}");
                }
                exit::FAILURE
            }
            Err(e) => {
                eprintln!("msgx contract: {e}");
                exit::FAILURE
            }
        };
    }
    match crate::contract::export(dir) {
        Ok(paths) => {
            for p in paths {
                println!("{}", p.display());
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("msgx contract: {e}");
            exit::FAILURE
        }
    }
}
