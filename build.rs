//! Build-time facts for `msgx --version`, `/metrics` and the console footer
//! (`src/build_info.rs` reads them with `env!`), and the migrations rerun.
//!
//! - Rebuilds when a migration is added, changed or removed: `sqlx::migrate!`
//!   embeds `migrations/pg` at compile time, and on stable Rust a proc macro
//!   cannot tell cargo which files it read (sqlx's documented build script).
//! - `MSGX_BUILD_COMMIT`: `$MSGX_BUILD_COMMIT` if set (a build from a source
//!   archive), else the checkout's `HEAD` (12 hex digits), else `unknown`.
//! - `MSGX_BUILD_EPOCH`: `$SOURCE_DATE_EPOCH` if set, else the commit time of
//!   `HEAD`, else empty; never the wall clock, so two builds of one commit are
//!   byte-identical (reproducible builds).
//! - `MSGX_BUILD_TARGET` and `MSGX_BUILD_RUSTC` (`rustc --version`).
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=migrations/pg");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-env-changed=MSGX_BUILD_COMMIT");
    watch_git_head();

    let commit = std::env::var("MSGX_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    let epoch = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .filter(|e| !e.trim().is_empty())
        .or_else(|| git(&["log", "-1", "--format=%ct", "HEAD"]))
        .unwrap_or_default();
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_string());
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let rustc = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());

    println!("cargo:rustc-env=MSGX_BUILD_COMMIT={}", commit.trim());
    println!("cargo:rustc-env=MSGX_BUILD_EPOCH={}", epoch.trim());
    println!("cargo:rustc-env=MSGX_BUILD_TARGET={target}");
    println!("cargo:rustc-env=MSGX_BUILD_RUSTC={rustc}");
}

/// Standard output of `git ARGS` in the package directory, when git runs and
/// succeeds with a non-empty answer.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Reruns this script when `HEAD` moves: the `HEAD` file of this checkout
/// (a worktree has its own), the branch it names and `packed-refs`.
fn watch_git_head() {
    let (Some(git_dir), Some(common)) = (
        git(&["rev-parse", "--git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
    ) else {
        return;
    };
    let head = Path::new(&git_dir).join("HEAD");
    if !head.exists() {
        return;
    }
    println!("cargo:rerun-if-changed={}", head.display());
    let packed = Path::new(&common).join("packed-refs");
    if packed.exists() {
        println!("cargo:rerun-if-changed={}", packed.display());
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        let reference = Path::new(&common).join(branch);
        if reference.exists() {
            println!("cargo:rerun-if-changed={}", reference.display());
        }
    }
}
