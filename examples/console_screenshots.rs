//! Screenshots of the operator console's pages for docs/console.md (issue
//! 21 item 4), through the same headless-Chromium harness as the browser
//! tests (`tests/it/common/browser.rs`). `scripts/console-screenshots.sh`
//! prepares a drained database and a running `msgx console`, then runs:
//!
//! ```text
//! MSGX_SHOT_PASSWORD=… cargo run --example console_screenshots -- \
//!     --base http://127.0.0.1:PORT --user NAME --out docs/console \
//!     login=/login overview=/ messages=/messages …
//! ```
//!
//! Each `NAME=PATH` is saved as `OUT/NAME.png` (1280×900). The page at
//! `--login-path` is shot logged out, before logging in; the others after
//! logging in through the form (inputs `--user-field`, `--password-field`).

#[path = "../tests/it/common/browser.rs"]
mod browser;

use anyhow::{Context, bail};
use browser::{Browser, Programs};
use clap::Parser;
use std::path::PathBuf;

#[derive(Parser)]
struct Args {
    /// The console's base URL.
    #[arg(long)]
    base: String,
    /// The user to log in as.
    #[arg(long)]
    user: String,
    /// The environment variable holding the password (kept off the command line).
    #[arg(long, default_value = "MSGX_SHOT_PASSWORD")]
    password_env: String,
    /// Where the PNGs go.
    #[arg(long, default_value = "docs/console")]
    out: PathBuf,
    #[arg(long, default_value = "/login")]
    login_path: String,
    /// HTML id of the login form's user-name input.
    #[arg(long, default_value = "username")]
    user_field: String,
    /// HTML id of the login form's password input.
    #[arg(long, default_value = "password")]
    password_field: String,
    /// The pages, `NAME=PATH`.
    #[arg(required = true)]
    pages: Vec<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let password = std::env::var(&args.password_env)
        .with_context(|| format!("the password in ${}", args.password_env))?;
    let pages = args
        .pages
        .iter()
        .map(|p| {
            p.split_once('=')
                .with_context(|| format!("page {p:?} is not NAME=PATH"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let path = std::env::var("PATH").unwrap_or_default();
    let programs = Programs::locate(|v| std::env::var(v).ok(), &path)?;
    let browser = Browser::open(&programs).await?;
    let base = args.base.trim_end_matches('/');

    let (logged_out, logged_in): (Vec<_>, Vec<_>) =
        pages.iter().partition(|(_, path)| *path == args.login_path);
    for (name, path) in logged_out {
        shoot(&browser, base, name, path, &args.out).await;
    }

    browser.goto(&format!("{base}{}", args.login_path)).await;
    browser.fill(&args.user_field, &args.user).await;
    browser.fill(&args.password_field, &password).await;
    browser.submit(&args.password_field).await;
    // Logged in once the browser has left the login page.
    let login_url = format!("{base}{}", args.login_path);
    if browser
        .wait_for_url(|u| !u.starts_with(&login_url))
        .await
        .is_none()
    {
        bail!("login as {} did not leave {login_url}", args.user);
    }

    for (name, path) in logged_in {
        shoot(&browser, base, name, path, &args.out).await;
    }
    Ok(())
}

/// How long a live page (`data-live-src`) may take to connect its stream
/// before it is shot anyway.
const LIVE_CONNECT: std::time::Duration = std::time::Duration::from_secs(5);

/// Loads `base` + `path` and saves it as `out/name.png`; a live page once
/// its live view says it is connected.
async fn shoot(browser: &Browser, base: &str, name: &str, path: &str, out: &std::path::Path) {
    browser.goto(&format!("{base}{path}")).await;
    if browser
        .wait_for_within("[data-live-src]", std::time::Duration::ZERO)
        .await
        .is_some()
    {
        browser
            .wait_for_within("#live-status:not([hidden])", LIVE_CONNECT)
            .await;
    }
    let file = out.join(format!("{name}.png"));
    browser.screenshot(&file).await;
    println!("{} <- {path}", file.display());
}
