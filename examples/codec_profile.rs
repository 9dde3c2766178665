//! Load-independent codec measurement (issue 3, item 9): runs `decode` or
//! quick-xml's raw tokenization over the benchmark inputs of
//! `benches/codec.rs`, so `valgrind --tool=callgrind` can count instructions
//! (wall-clock numbers swing with the load of a shared machine; instruction
//! counts do not). See docs/BENCHMARKS.md.
//!
//! ```text
//! cargo build --release --example codec_profile
//! valgrind --tool=callgrind target/release/examples/codec_profile decode schd 3
//! valgrind --tool=callgrind target/release/examples/codec_profile tokenize schd 3
//! ```
//!
//! Arguments: `decode|tokenize`, `schd|flop`, iterations (default 1).

use std::hint::black_box;
use std::process::ExitCode;

/// msgx's production allocator (see `msgx::Allocator`).
#[global_allocator]
static ALLOCATOR: msgx::Allocator = msgx::Allocator;

#[path = "../benches/support/codec_inputs.rs"]
mod inputs;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(what), Some(input)) = (args.first(), args.get(1)) else {
        eprintln!("usage: codec_profile decode|tokenize schd|flop [iterations]");
        return ExitCode::from(2);
    };
    let iterations: u32 = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(1);
    let schd;
    let docs: Vec<&str> = match input.as_str() {
        "schd" => {
            schd = inputs::schd_1000();
            vec![schd.as_str()]
        }
        "flop" => inputs::flop_mix(),
        other => {
            eprintln!("unknown input {other}: schd or flop");
            return ExitCode::from(2);
        }
    };
    let mut count = 0usize;
    for _ in 0..iterations {
        for d in &docs {
            match what.as_str() {
                "decode" => {
                    count += usize::from(black_box(msgx::codec::decode(d.as_bytes())).is_ok())
                }
                "tokenize" => count += inputs::tokenize(black_box(d)),
                other => {
                    eprintln!("unknown mode {other}: decode or tokenize");
                    return ExitCode::from(2);
                }
            }
        }
    }
    println!("{what} {input} x{iterations}: {count}");
    ExitCode::SUCCESS
}
