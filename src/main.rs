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
            return msgx::exit::Exit::Failure.into();
        }
    };
    runtime.block_on(msgx::cli::run(cli)).into()
}
