//! Headless Chromium for the console's browser tests (issue 21 item 4):
//! Debian's `chromium` driven over WebDriver by Debian's `chromedriver`
//! (installed by `scripts/services.sh`), through `fantoccini`.
//!
//! Each [`Browser`] has its own chromedriver on a loopback port it picks
//! itself (`--port=0`, read back from its first lines, so two tests never
//! race for a port), its own Chromium profile in a temp directory, and a
//! 1280×900 page area. chromedriver runs in a process group of its own and
//! Chromium inherits it, so dropping the `Browser` kills that group and no
//! browser outlives its test, even one that panicked.
//!
//! When the programs are absent, [`Browser::start`] fails the test if `CI`
//! is set (CI must run these tests) and otherwise returns `None` after a
//! message, so a developer without Chromium still runs the rest. Paths can
//! be overridden with `MSGX_TEST_CHROMEDRIVER` and `MSGX_TEST_CHROMIUM`.
//!
//! The helpers panic with the selector and the page's URL on failure, as
//! the other test helpers do; [`Browser::client`] gives the full
//! `fantoccini` API for anything else (scripts, raw requests).
//!
//! This file is also the screenshot tool's (`examples/console_screenshots.rs`
//! includes it), so it uses nothing else from `tests/it/common`.
#![allow(dead_code)]

use fantoccini::cookies::Cookie;
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Bound on chromedriver announcing its port and on opening the session.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Bound on [`Browser::wait_for`]: a page of the console renders in well
/// under a second here; this only keeps a broken page from hanging a test.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(10);
/// How often [`Browser::wait_for`] looks at the DOM.
const POLL: Duration = Duration::from_millis(50);
/// The page area of every session (and so the size of every screenshot).
pub const WINDOW: (u32, u32) = (1280, 900);

/// Why no browser session could be opened.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(
        "{what} not found (looked for {looked_for}); install Debian's chromium and chromium-driver (scripts/services.sh)"
    )]
    Missing {
        what: &'static str,
        looked_for: String,
    },
    #[error("cannot start chromedriver {path}: {source}")]
    Spawn {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("chromedriver did not announce its port within {START_TIMEOUT:?}; it said: {said}")]
    NoPort { said: String },
    #[error("temp profile directory: {0}")]
    Profile(std::io::Error),
    #[error("chromedriver refused a Chromium session: {0}")]
    Session(#[from] fantoccini::error::NewSessionError),
    #[error("opening the Chromium session took longer than {START_TIMEOUT:?}")]
    SessionTimeout,
    #[error("sizing the window: {0}")]
    Window(#[from] fantoccini::error::CmdError),
    #[error("sizing the window: unexpected {0}")]
    Viewport(String),
}

/// The two programs a session needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Programs {
    pub chromedriver: PathBuf,
    pub chromium: PathBuf,
}

impl Programs {
    /// Finds them from the overrides (`MSGX_TEST_CHROMEDRIVER`,
    /// `MSGX_TEST_CHROMIUM`, as `env` returns them) or on `path` (a
    /// `PATH`-style list).
    pub fn locate(
        env: impl Fn(&str) -> Option<String>,
        path: &str,
    ) -> Result<Programs, BrowserError> {
        let find = |what: &'static str, var: &str, names: &[&str]| match env(var) {
            Some(given) => {
                let p = PathBuf::from(&given);
                if is_executable(&p) {
                    Ok(p)
                } else {
                    Err(BrowserError::Missing {
                        what,
                        looked_for: format!("{var}={given}"),
                    })
                }
            }
            None => names
                .iter()
                .flat_map(|n| std::env::split_paths(path).map(move |d| d.join(n)))
                .find(|p| is_executable(p))
                .ok_or_else(|| BrowserError::Missing {
                    what,
                    looked_for: format!("{} on PATH", names.join(" or ")),
                }),
        };
        Ok(Programs {
            chromedriver: find("chromedriver", "MSGX_TEST_CHROMEDRIVER", &["chromedriver"])?,
            chromium: find(
                "chromium",
                "MSGX_TEST_CHROMIUM",
                &["chromium", "chromium-browser"],
            )?,
        })
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// A headless Chromium session with its own chromedriver.
pub struct Browser {
    client: Client,
    driver: Child,
    /// Chromium's user-data-dir; removed after the processes are killed.
    _profile: tempfile::TempDir,
}

impl Browser {
    /// A session, or `None` (with a message) when Chromium is not
    /// installed and `CI` is unset; panics when it is set, or when the
    /// programs exist but the session cannot be opened.
    pub async fn start() -> Option<Browser> {
        let path = std::env::var("PATH").unwrap_or_default();
        let programs = match Programs::locate(|v| std::env::var(v).ok(), &path) {
            Ok(p) => p,
            Err(e) if std::env::var_os("CI").is_some() => panic!("browser test under CI: {e}"),
            Err(e) => {
                println!("skipping the browser test: {e}");
                return None;
            }
        };
        match Browser::open(&programs).await {
            Ok(b) => Some(b),
            Err(e) => panic!("headless Chromium: {e}"),
        }
    }

    /// Starts chromedriver and opens a session with `programs`.
    pub async fn open(programs: &Programs) -> Result<Browser, BrowserError> {
        let profile = tempfile::Builder::new()
            .prefix("msgx-chromium-")
            .tempdir()
            .map_err(BrowserError::Profile)?;
        let (driver, port) = spawn_driver(&programs.chromedriver)?;
        // From here on `driver` is killed on every early return.
        let guard = DriverGuard(Some(driver));
        let mut caps = fantoccini::wd::Capabilities::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": programs.chromium,
                "args": [
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--no-first-run",
                    "--disable-extensions",
                    format!("--user-data-dir={}", profile.path().display()),
                    format!("--window-size={},{}", WINDOW.0, WINDOW.1),
                ],
            }),
        );
        let client = tokio::time::timeout(
            START_TIMEOUT,
            ClientBuilder::new(HttpConnector::new())
                .capabilities(caps)
                .connect(&format!("http://127.0.0.1:{port}")),
        )
        .await
        .map_err(|_| BrowserError::SessionTimeout)??;
        let browser = Browser {
            client,
            driver: guard.disarm(),
            _profile: profile,
        };
        browser.fit_viewport().await?;
        Ok(browser)
    }

    /// Grows the window so that the page area (what a screenshot shows and
    /// what the page lays out in) is [`WINDOW`]; `--window-size` counts the
    /// browser's own frame too, even headless.
    async fn fit_viewport(&self) -> Result<(), BrowserError> {
        let frame = self
            .client
            .execute(
                "return [window.outerWidth - window.innerWidth, \
                         window.outerHeight - window.innerHeight];",
                vec![],
            )
            .await?;
        let extra = |i: usize| frame[i].as_u64().and_then(|v| u32::try_from(v).ok());
        let (Some(dx), Some(dy)) = (extra(0), extra(1)) else {
            return Err(BrowserError::Viewport(format!("frame size {frame}")));
        };
        self.client
            .set_window_size(WINDOW.0 + dx, WINDOW.1 + dy)
            .await?;
        Ok(())
    }

    /// The fantoccini client, for what the helpers do not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Loads `url` and waits until the page has loaded (WebDriver's
    /// "normal" page-load strategy).
    pub async fn goto(&self, url: &str) {
        if let Err(e) = self.client.goto(url).await {
            panic!("goto {url}: {e}");
        }
    }

    /// The URL of the page shown now.
    pub async fn url(&self) -> String {
        match self.client.current_url().await {
            Ok(u) => u.to_string(),
            Err(e) => panic!("current url: {e}"),
        }
    }

    /// Replaces the value of the input with HTML id `id` by `text`, as
    /// typed keys (so the page's input handlers run).
    pub async fn fill(&self, id: &str, text: &str) {
        let field = self.by_id(id).await;
        if let Err(e) = field.clear().await {
            panic!("clear #{id} on {}: {e}", self.url().await);
        }
        if let Err(e) = field.send_keys(text).await {
            panic!("type into #{id} on {}: {e}", self.url().await);
        }
    }

    /// Clicks the element with HTML id `id` (a submit button submits its
    /// form; wait for an element of the next page before reading it).
    pub async fn click(&self, id: &str) {
        let target = self.by_id(id).await;
        if let Err(e) = target.click().await {
            panic!("click #{id} on {}: {e}", self.url().await);
        }
    }

    /// Submits the form of the element with HTML id `id` (one of its
    /// inputs, or the form itself) as pressing Enter in it would, with or
    /// without a submit button (the button's own name and value are not
    /// sent: [`Browser::click`] it when they matter).
    pub async fn submit(&self, id: &str) {
        self.by_id(id).await;
        let script =
            "const e = document.getElementById(arguments[0]); (e.form || e).requestSubmit();";
        if let Err(e) = self.client.execute(script, vec![id.into()]).await {
            panic!("submit the form of #{id} on {}: {e}", self.url().await);
        }
    }

    /// The rendered text of the first element matching `css`, waiting for
    /// it as [`Browser::wait_for`] does. An element the page replaced between
    /// the find and the read (the live view swaps its fragments) is found
    /// again, within [`WAIT_TIMEOUT`].
    pub async fn text_of(&self, css: &str) -> String {
        let deadline = std::time::Instant::now() + WAIT_TIMEOUT;
        loop {
            let el = self.wait_for(css).await;
            match el.text().await {
                Ok(t) => return t,
                Err(e)
                    if e.is_stale_element_reference() && std::time::Instant::now() < deadline => {}
                Err(e) => panic!("text of {css} on {}: {e}", self.url().await),
            }
        }
    }

    /// The first element matching `css`, once it exists; panics after
    /// [`WAIT_TIMEOUT`].
    pub async fn wait_for(&self, css: &str) -> Element {
        match self.wait_for_within(css, WAIT_TIMEOUT).await {
            Some(el) => el,
            None => panic!(
                "no {css} on {} within {WAIT_TIMEOUT:?}; the page is:\n{}",
                self.url().await,
                self.client.source().await.unwrap_or_default()
            ),
        }
    }

    /// The first element matching `css` once it exists, or `None` after
    /// `bound` (polling the DOM: this waits for the browser, not for time
    /// in the application's Clock).
    pub async fn wait_for_within(&self, css: &str, bound: Duration) -> Option<Element> {
        match self
            .client
            .wait()
            .at_most(bound)
            .every(POLL)
            .for_element(Locator::Css(css))
            .await
        {
            Ok(el) => Some(el),
            Err(fantoccini::error::CmdError::WaitTimeout) => None,
            Err(e) => panic!("wait for {css}: {e}"),
        }
    }

    /// The current URL once `done` accepts it (e.g. after a form submit,
    /// the page it led to), or `None` after [`WAIT_TIMEOUT`].
    pub async fn wait_for_url(&self, done: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = std::time::Instant::now() + WAIT_TIMEOUT;
        loop {
            let url = self.url().await;
            if done(&url) {
                return Some(url);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Whether the text of the first element matching `css` becomes
    /// `expected` within `bound` (polling the DOM: a page's script changes
    /// it, no navigation).
    pub async fn wait_for_text(&self, css: &str, expected: &str, bound: Duration) -> bool {
        let deadline = std::time::Instant::now() + bound;
        loop {
            if let Ok(el) = self.client.find(Locator::Css(css)).await
                && el.text().await.is_ok_and(|t| t.trim() == expected)
            {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The value of the page's first `input[name=csrf]` (a session's forms
    /// carry it), empty when there is none.
    pub async fn csrf(&self) -> String {
        let script =
            "const i = document.querySelector('input[name=csrf]'); return i ? i.value : '';";
        match self.client.execute(script, vec![]).await {
            Ok(v) => v.as_str().unwrap_or_default().to_string(),
            Err(e) => panic!("read the csrf token on {}: {e}", self.url().await),
        }
    }

    /// Builds a form the page does not offer (as a user with the
    /// developer tools could), POSTs `fields` to `action` from the page and
    /// waits until the browser shows the answer.
    pub async fn post_form(&self, action: &str, fields: &[(&str, &str)]) {
        let forge = "const f = document.createElement('form'); f.method = 'post'; \
                     f.action = arguments[0]; \
                     for (const [k, v] of arguments[1]) { const i = document.createElement('input'); \
                     i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i); } \
                     document.body.appendChild(f); f.submit();";
        let fields: Vec<[&str; 2]> = fields.iter().map(|(k, v)| [*k, *v]).collect();
        if let Err(e) = self
            .client
            .execute(forge, vec![action.into(), serde_json::json!(fields)])
            .await
        {
            panic!("post a form to {action} on {}: {e}", self.url().await);
        }
        if self.wait_for_url(|u| u.ends_with(action)).await.is_none() {
            panic!("the POST to {action} did not answer within {WAIT_TIMEOUT:?}");
        }
    }

    /// Saves a PNG of the viewport to `path` (parent directories created).
    pub async fn screenshot(&self, path: &Path) {
        let png = match self.client.screenshot().await {
            Ok(png) => png,
            Err(e) => panic!("screenshot of {}: {e}", self.url().await),
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        }
        std::fs::write(path, png).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }

    /// The cookie `name` of the current page's domain, `HttpOnly` ones
    /// included (WebDriver sees them; page scripts do not).
    pub async fn cookie(&self, name: &str) -> Option<Cookie<'static>> {
        match self.client.get_named_cookie(name).await {
            Ok(c) => Some(c),
            Err(e) if e.is_no_such_cookie() => None,
            Err(e) => panic!("cookie {name}: {e}"),
        }
    }

    /// Every cookie of the current page's domain.
    pub async fn cookies(&self) -> Vec<Cookie<'static>> {
        self.client
            .get_all_cookies()
            .await
            .unwrap_or_else(|e| panic!("cookies: {e}"))
    }

    /// Sets a cookie on the current page's domain (e.g. a forged or
    /// expired session).
    pub async fn set_cookie(&self, cookie: Cookie<'static>) {
        self.client
            .add_cookie(cookie)
            .await
            .unwrap_or_else(|e| panic!("add cookie: {e}"));
    }

    /// Removes every cookie of the current page's domain (a logged-out
    /// browser).
    pub async fn clear_cookies(&self) {
        self.client
            .delete_all_cookies()
            .await
            .unwrap_or_else(|e| panic!("delete cookies: {e}"));
    }

    async fn by_id(&self, id: &str) -> Element {
        match self.client.find(Locator::Id(id)).await {
            Ok(el) => el,
            Err(e) => panic!("no #{id} on {}: {e}", self.url().await),
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        kill_group(&mut self.driver);
    }
}

/// Kills chromedriver's process group (Chromium's processes are in it)
/// and reaps chromedriver.
fn kill_group(driver: &mut Child) {
    if let Ok(pgid) = i32::try_from(driver.id()) {
        // SAFETY: kill(2) on the group this harness created for its own
        // chromedriver (`process_group(0)`: the group id is its pid).
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
    let _ = driver.wait();
}

/// Kills chromedriver when [`Browser::open`] fails after starting it.
struct DriverGuard(Option<Child>);

impl DriverGuard {
    fn disarm(mut self) -> Child {
        // Always Some: only `disarm` and `drop` take it.
        self.0.take().expect("driver present")
    }
}

impl Drop for DriverGuard {
    fn drop(&mut self) {
        if let Some(child) = self.0.as_mut() {
            kill_group(child);
        }
    }
}

/// Starts chromedriver on a port of its choosing in a new process group;
/// returns it and the port it announced.
fn spawn_driver(path: &Path) -> Result<(Child, u16), BrowserError> {
    let mut child = Command::new(path)
        .arg("--port=0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|source| BrowserError::Spawn {
            path: path.to_path_buf(),
            source,
        })?;
    let Some(stdout) = child.stdout.take() else {
        kill_group(&mut child);
        return Err(BrowserError::NoPort {
            said: "(no stdout)".into(),
        });
    };
    // Read on a thread so the wait is bounded; the thread ends when
    // chromedriver's stdout closes (it is killed at the latest on drop).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let port = announced_port(&line);
            let _ = tx.send((line, port));
        }
    });
    let deadline = std::time::Instant::now() + START_TIMEOUT;
    let mut said = String::new();
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok((_, Some(port))) => return Ok((child, port)),
            Ok((line, None)) => {
                said.push_str(&line);
                said.push('\n');
            }
            Err(_) => {
                kill_group(&mut child);
                return Err(BrowserError::NoPort { said });
            }
        }
    }
}

/// The port in chromedriver's "ChromeDriver was started successfully on
/// port 12345." line.
fn announced_port(line: &str) -> Option<u16> {
    line.split_once("started successfully on port ")?
        .1
        .trim_end_matches('.')
        .trim()
        .parse()
        .ok()
}
