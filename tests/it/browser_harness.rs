//! The headless-Chromium harness (`tests/it/common/browser.rs`, issue 21
//! item 4) proven on a tiny axum site served in the test, before the
//! console's tests rely on it: a form filled, submitted and its answer
//! read; a session cookie with the console's flags (`Secure`, `HttpOnly`,
//! `SameSite=Strict`) kept on plain-HTTP loopback and sent back; an
//! element a script adds after the load waited for, a missing one given
//! up on within the bound; a screenshot that is a PNG of the window size.

use crate::common;

use axum::Router;
use axum::http::HeaderMap;
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use common::browser::{Browser, BrowserError, Programs, WINDOW};
use std::collections::HashMap;
use std::time::Duration;

const FORM: &str = r#"<!doctype html><title>form</title>
<form method="post" action="/echo">
  <input id="name" name="name" value="placeholder">
  <button id="send" type="submit">Send</button>
</form>"#;

/// Adds `#late` 300 ms after the load, as a page that fills itself in by
/// script would.
const LATE: &str = r#"<!doctype html><title>late</title><p id="early">now</p>
<script>setTimeout(() => { const p = document.createElement('p'); p.id = 'late';
p.textContent = 'later'; document.body.append(p); }, 300);</script>"#;

async fn echo(axum::Form(form): axum::Form<HashMap<String, String>>) -> impl IntoResponse {
    let name = form.get("name").map(String::as_str).unwrap_or("");
    (
        [(
            SET_COOKIE,
            "session=s1; Path=/; Secure; HttpOnly; SameSite=Strict",
        )],
        Html(format!(
            "<!doctype html><title>echo</title><p id=\"result\">Hello, {}</p>",
            quick_xml::escape::escape(name)
        )),
    )
}

async fn whoami(headers: HeaderMap) -> Html<String> {
    let cookie = headers
        .get(COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("no cookie");
    Html(format!(
        "<!doctype html><p id=\"who\">{}</p>",
        quick_xml::escape::escape(cookie)
    ))
}

/// Serves the site on a loopback port; returns its base URL. The server
/// task ends with the test's runtime.
async fn serve_site() -> String {
    let app = Router::new()
        .route("/", get(|| async { Html(FORM) }))
        .route("/echo", post(echo))
        .route("/whoami", get(whoami))
        .route("/late", get(|| async { Html(LATE) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

/// A browser and the site's base URL; `None` when the test is skipped.
async fn open_site() -> Option<(Browser, String)> {
    let browser = Browser::start().await?;
    Some((browser, serve_site().await))
}

#[tokio::test]
async fn a_form_is_filled_and_submitted_and_the_session_cookie_comes_back() {
    let Some((browser, base)) = open_site().await else {
        return;
    };

    browser.goto(&format!("{base}/")).await;
    browser.fill("name", "<Ada & Bob>").await;
    browser.click("send").await;
    assert_eq!(browser.text_of("#result").await, "Hello, <Ada & Bob>");
    assert_eq!(browser.url().await, format!("{base}/echo"));
    browser.goto(&format!("{base}/")).await;
    browser.fill("name", "again").await;
    browser.submit("name").await;
    assert_eq!(browser.text_of("#result").await, "Hello, again");

    // The console's session cookie flags: Chromium treats loopback as a
    // secure context, so a Secure cookie set over plain HTTP is kept.
    let session = browser.cookie("session").await.expect("session cookie set");
    assert_eq!(session.value(), "s1");
    assert_eq!(session.http_only(), Some(true));
    assert_eq!(session.secure(), Some(true));
    assert!(session.same_site().is_some_and(|s| s.is_strict()));
    assert_eq!(browser.cookies().await.len(), 1);
    browser.goto(&format!("{base}/whoami")).await;
    assert_eq!(browser.text_of("#who").await, "session=s1");

    browser.clear_cookies().await;
    assert!(browser.cookie("session").await.is_none());
    browser.goto(&format!("{base}/whoami")).await;
    assert_eq!(browser.text_of("#who").await, "no cookie");
}

#[tokio::test]
async fn wait_for_finds_what_a_script_adds_and_gives_up_on_what_never_comes() {
    let Some((browser, base)) = open_site().await else {
        return;
    };

    browser.goto(&format!("{base}/late")).await;
    // Not there when the load ends; the wait sees it appear.
    assert!(
        browser
            .client()
            .find(fantoccini::Locator::Id("late"))
            .await
            .is_err(),
        "#late exists before its script ran"
    );
    assert_eq!(browser.text_of("#late").await, "later");

    let started = std::time::Instant::now();
    let bound = Duration::from_millis(300);
    assert!(browser.wait_for_within("#never", bound).await.is_none());
    assert!(started.elapsed() >= bound);
}

#[tokio::test]
async fn a_screenshot_is_a_png_of_the_window() {
    let Some((browser, base)) = open_site().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("shots/form.png");

    browser.goto(&format!("{base}/")).await;
    browser.screenshot(&path).await;

    let png = std::fs::read(&path).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&png[12..16], b"IHDR");
    let width = u32::from_be_bytes(png[16..20].try_into().expect("4 bytes"));
    let height = u32::from_be_bytes(png[20..24].try_into().expect("4 bytes"));
    assert_eq!((width, height), WINDOW);
}

#[test]
fn absent_programs_are_reported_with_where_they_were_looked_for() {
    let none = |_: &str| None;
    match Programs::locate(none, "/nonexistent") {
        Err(BrowserError::Missing { what, looked_for }) => {
            assert_eq!(what, "chromedriver");
            assert_eq!(looked_for, "chromedriver on PATH");
        }
        other => panic!("expected Missing, got {other:?}"),
    }

    let dir = tempfile::tempdir().expect("temp dir");
    let driver = dir.path().join("chromedriver");
    std::fs::write(&driver, "#!/bin/sh\n").expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&driver, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = dir.path().to_str().expect("utf-8 temp path");
    match Programs::locate(none, path) {
        Err(BrowserError::Missing { what, .. }) => assert_eq!(what, "chromium"),
        other => panic!("expected chromium Missing, got {other:?}"),
    }

    // An override naming a missing file is an error, not a fallback to PATH.
    let chromium = dir.path().join("chromium");
    std::fs::copy(&driver, &chromium).expect("copy");
    let bad = |v: &str| (v == "MSGX_TEST_CHROMIUM").then(|| "/nonexistent/chromium".to_string());
    match Programs::locate(bad, path) {
        Err(BrowserError::Missing { looked_for, .. }) => {
            assert_eq!(looked_for, "MSGX_TEST_CHROMIUM=/nonexistent/chromium")
        }
        other => panic!("expected the override reported, got {other:?}"),
    }
    assert_eq!(
        Programs::locate(none, path).expect("both found"),
        Programs {
            chromedriver: driver,
            chromium,
        }
    );
}
