//! A headless Chromium driven over the DevTools protocol (CDP), for the browser tests: a
//! small client over the websocket the browser opens (`--remote-debugging-port=0`), one
//! page per [`Browser`], every console error and uncaught exception collected.
//!
//! Chromium is the Debian package `chromium` (`.ci/run` installs it); `TAMSK_CHROMIUM`
//! names another binary.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// One browser with one page (tab).
pub struct Browser {
    child: tokio::process::Child,
    _profile: tempfile::TempDir,
    out: mpsc::UnboundedSender<String>,
    pending: Pending,
    next_id: std::sync::atomic::AtomicU64,
    session: String,
    /// Console errors and uncaught exceptions of the page, as text.
    pub errors: Arc<Mutex<Vec<String>>>,
}

/// The Chromium binary: `TAMSK_CHROMIUM`, or the first of the usual names on `PATH`.
pub fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("TAMSK_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome", "chrome"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "no Chromium found for the browser tests: install it with \
         `apt-get update && apt-get install -y chromium` (Debian; .ci/run does this), \
         or set TAMSK_CHROMIUM to a Chromium or Chrome binary"
    );
}

/// Where the tests write their screenshots: `target/screenshots/` of the workspace.
pub fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot folder");
    dir
}

/// How long a page condition may take before the test fails.
pub const PAGE_WAIT: Duration = Duration::from_secs(15);

impl Browser {
    /// Starts a headless Chromium with a fresh profile and opens one blank page.
    pub async fn launch() -> Browser {
        let profile = tempfile::tempdir().expect("profile folder");
        let mut child = tokio::process::Command::new(chromium())
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--mute-audio",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("starting Chromium ({}): {e}", chromium().display()));
        // Chromium says where its DevTools websocket is on stderr.
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let url = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.expect("chromium stderr") {
                if let Some(i) = line.find("ws://") {
                    return line[i..].trim().to_string();
                }
            }
            panic!("Chromium exited without a DevTools address");
        })
        .await
        .expect("Chromium says where its DevTools listen within 30 s");
        // Keep reading its stderr, or it could block on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

        let (ws, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("DevTools websocket");
        let (mut sink, mut stream) = ws.split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(text) = out_rx.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
        });
        let pending: Pending = Default::default();
        let errors: Arc<Mutex<Vec<String>>> = Default::default();
        {
            let pending = pending.clone();
            let errors = errors.clone();
            tokio::spawn(async move {
                while let Some(Ok(msg)) = stream.next().await {
                    let Message::Text(text) = msg else { continue };
                    let Ok(v) = serde_json::from_str::<Value>(text.as_str()) else {
                        continue;
                    };
                    if let Some(id) = v["id"].as_u64() {
                        if let Some(tx) = pending.lock().expect("pending").remove(&id) {
                            let answer = match v.get("error") {
                                Some(e) => Err(e.to_string()),
                                None => Ok(v["result"].clone()),
                            };
                            let _ = tx.send(answer);
                        }
                    } else if let Some(e) = page_error(&v) {
                        errors.lock().expect("errors").push(e);
                    }
                }
            });
        }
        let mut browser = Browser {
            child,
            _profile: profile,
            out,
            pending,
            next_id: 1.into(),
            session: String::new(),
            errors,
        };
        let target = browser
            .call("Target.createTarget", json!({ "url": "about:blank" }))
            .await;
        let attached = browser
            .call(
                "Target.attachToTarget",
                json!({ "targetId": target["targetId"], "flatten": true }),
            )
            .await;
        browser.session = attached["sessionId"]
            .as_str()
            .expect("a session id")
            .to_string();
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            browser.send(domain, json!({})).await;
        }
        browser
    }

    /// A browser-level command (no page session).
    async fn call(&self, method: &str, params: Value) -> Value {
        self.raw(method, params, None).await
    }

    /// A command to the page.
    pub async fn send(&self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.raw(method, params, Some(session)).await
    }

    async fn raw(&self, method: &str, params: Value, session: Option<String>) -> Value {
        match self.raw_result(method, params, session).await {
            Ok(v) => v,
            Err(e) => panic!("{method} failed: {e}"),
        }
    }

    async fn raw_result(
        &self,
        method: &str,
        params: Value,
        session: Option<String>,
    ) -> Result<Value, String> {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = s.into();
        }
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("pending").insert(id, tx);
        self.out.send(msg.to_string()).expect("DevTools connection");
        match tokio::time::timeout(PAGE_WAIT, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err("the DevTools connection closed".into()),
            Err(_) => Err(format!("no answer within {PAGE_WAIT:?}")),
        }
    }

    /// Opens `url` and waits until the page has loaded. The new document is told from the
    /// old one by a mark the old one has (not by its address: a page may rewrite its own,
    /// as a game's short id becomes its full id, before the first look).
    pub async fn goto(&self, url: &str) {
        self.eval("window.__navigating = 1").await;
        self.send("Page.navigate", json!({ "url": url })).await;
        self.wait_for(
            "window.__navigating === undefined && document.readyState === 'complete'",
            "the page to load",
        )
        .await;
    }

    /// Reloads the page and waits until it has loaded again.
    pub async fn reload(&self) {
        self.eval("window.__reloading = 1").await;
        self.send("Page.reload", json!({})).await;
        self.wait_for(
            "window.__reloading === undefined && document.readyState === 'complete'",
            "the page to load again",
        )
        .await;
    }

    /// Evaluates a JavaScript expression in the page (awaiting a promise); its value as JSON.
    pub async fn eval(&self, expr: &str) -> Value {
        match self.try_eval(expr).await {
            Ok(v) => v,
            Err(e) => panic!("evaluating {expr}: {e}"),
        }
    }

    /// [`Browser::eval`], with the failure as a value (a page that is navigating has no
    /// context to evaluate in for a moment).
    pub async fn try_eval(&self, expr: &str) -> Result<Value, String> {
        let params = json!({ "expression": expr, "returnByValue": true, "awaitPromise": true });
        let session = self.session.clone();
        let r = self
            .raw_result("Runtime.evaluate", params, Some(session))
            .await?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(e.to_string());
        }
        Ok(r["result"]["value"].clone())
    }

    /// Polls `expr` (every 10 ms) until it is truthy; fails the test after [`PAGE_WAIT`].
    pub async fn wait_for(&self, expr: &str, what: &str) -> Value {
        self.wait_for_within(expr, what, PAGE_WAIT).await
    }

    pub async fn wait_for_within(&self, expr: &str, what: &str, limit: Duration) -> Value {
        let start = Instant::now();
        let probe =
            format!("(() => {{ try {{ return ({expr}); }} catch (_) {{ return null; }} }})()");
        loop {
            let v = self.try_eval(&probe).await.unwrap_or(Value::Null);
            let truthy = match &v {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if truthy {
                return v;
            }
            if start.elapsed() > limit {
                let body = self
                    .try_eval("document.body ? document.body.innerText.slice(0, 2000) : ''")
                    .await;
                panic!("timed out waiting for {what} ({expr}); page text: {body:?}");
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A real mouse click in the middle of the element `selector` (scrolled into view).
    pub async fn click(&self, selector: &str) {
        let rect = self
            .eval(&format!(
                "(() => {{ const e = document.querySelector({sel}); if (!e) return null; \
                 e.scrollIntoView({{block: 'center', inline: 'center'}}); \
                 const r = e.getBoundingClientRect(); \
                 return {{x: r.left + r.width / 2, y: r.top + r.height / 2}}; }})()",
                sel = json!(selector)
            ))
            .await;
        assert!(!rect.is_null(), "no element {selector} to click");
        for kind in ["mousePressed", "mouseReleased"] {
            self.send(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": rect["x"], "y": rect["y"], "button": "left", "clickCount": 1 }),
            )
            .await;
        }
    }

    /// Types one key (a character, or a name such as "Escape").
    pub async fn key(&self, key: &str) {
        let text = if key.chars().count() == 1 { key } else { "" };
        for kind in ["keyDown", "keyUp"] {
            self.send(
                "Input.dispatchKeyEvent",
                json!({ "type": kind, "key": key, "text": if kind == "keyDown" { text } else { "" } }),
            )
            .await;
        }
    }

    /// Sets the page's viewport (a phone: 390×844, mobile).
    pub async fn viewport(&self, width: u32, height: u32, mobile: bool) {
        self.send(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile }),
        )
        .await;
    }

    /// Writes a PNG of the page to `target/screenshots/{name}.png`; returns the path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        use base64::Engine as _;
        let shot = self
            .send("Page.captureScreenshot", json!({ "format": "png" }))
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("screenshot data"))
            .expect("base64 screenshot");
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let path = screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write screenshot");
        path
    }

    /// Fails the test if the page logged an error or threw.
    pub fn assert_no_errors(&self) {
        let errors = self.errors.lock().expect("errors");
        assert!(
            errors.is_empty(),
            "JavaScript errors in the console: {errors:#?}"
        );
    }

    /// Closes the browser.
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            self.raw("Browser.close", json!({}), None),
        )
        .await;
        let _ = self.child.kill().await;
    }
}

/// An error that a CDP event reports: an uncaught exception, `console.error`, or a log
/// entry of level error (a failed request, a CSP violation, ...).
fn page_error(v: &Value) -> Option<String> {
    let params = &v["params"];
    match v["method"].as_str()? {
        "Runtime.exceptionThrown" => Some(format!(
            "exception: {}",
            params["exceptionDetails"]["exception"]["description"]
                .as_str()
                .or(params["exceptionDetails"]["text"].as_str())
                .unwrap_or("?")
        )),
        "Runtime.consoleAPICalled"
            if matches!(params["type"].as_str(), Some("error" | "assert")) =>
        {
            Some(format!(
                "console.{}: {}",
                params["type"].as_str()?,
                params["args"]
            ))
        }
        "Log.entryAdded" if params["entry"]["level"] == "error" => Some(format!(
            "log: {} {}",
            params["entry"]["text"].as_str().unwrap_or("?"),
            params["entry"]["url"].as_str().unwrap_or("")
        )),
        _ => None,
    }
}
