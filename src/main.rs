//! The `msgx` binary: a thin entry over the library (see `msgx --help`).

use clap::Parser;

/// msgx's production allocator (see `msgx::Allocator`).
#[global_allocator]
static ALLOCATOR: msgx::Allocator = msgx::Allocator;

fn main() -> std::process::ExitCode {
    let cli = msgx::cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("msgx: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let code = runtime.block_on(msgx::cli::run(cli));
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}
