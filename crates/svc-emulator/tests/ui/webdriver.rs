//! A small WebDriver client (the W3C protocol, JSON over HTTP) for the browser test: it starts
//! Debian's `chromedriver` with its `chromium`, headless, and drives one session.
//!
//! Waits are gates on a condition the page reaches (an element, a text), polled until a
//! generous deadline: a slow machine waits longer, it does not fail.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// How long a wait may take before the test fails: the page answers in milliseconds; this is
/// for a loaded CI machine.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// The W3C name of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A running chromedriver.
pub struct Driver {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A program from an environment variable, else the first of `candidates` that exists.
fn program(var: &str, candidates: &[&str]) -> PathBuf {
    if let Some(path) = std::env::var_os(var) {
        return PathBuf::from(path);
    }
    let found = candidates.iter().map(PathBuf::from).find(|p| p.exists());
    found.unwrap_or_else(|| {
        panic!(
            "the browser test needs Chromium and ChromeDriver: install Debian's packages \
             (apt-get install chromium chromium-driver; .ci/run does), or set {var} to the \
             program's path (looked for {})",
            candidates.join(", ")
        )
    })
}

impl Driver {
    /// Starts chromedriver on a free port and waits until it is ready.
    pub async fn start() -> Self {
        let driver = program(
            "SVC_TEST_CHROMEDRIVER",
            &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"],
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", driver.display()));
        let this = Self {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        };
        let started = Instant::now();
        loop {
            if let Ok((_, status)) = this.call(Method::GET, "/status", None).await
                && status["value"]["ready"] == true
            {
                return this;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "chromedriver ({}) did not get ready",
                driver.display()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// One WebDriver command: its status and its JSON answer.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), String> {
        let stream = TcpStream::connect(self.addr)
            .await
            .map_err(|e| e.to_string())?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header(
                http::header::HOST,
                format!("127.0.0.1:{}", self.addr.port()),
            )
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        let value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        Ok((status, value))
    }

    /// A new headless Chromium session at 1280x800; `resolve` maps host names to 127.0.0.1
    /// (`--host-resolver-rules`), to open the page under a name it does not serve.
    pub async fn session(&self, resolve: &[&str]) -> Session<'_> {
        let chromium = program(
            "SVC_TEST_CHROMIUM",
            &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
        );
        let mut args = vec![
            "--headless=new".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--window-size=1280,800".to_owned(),
            "--hide-scrollbars".to_owned(),
            "--no-first-run".to_owned(),
        ];
        if !resolve.is_empty() {
            let rules: Vec<String> = resolve
                .iter()
                .map(|h| format!("MAP {h} 127.0.0.1"))
                .collect();
            args.push(format!("--host-resolver-rules={}", rules.join(", ")));
        }
        let capabilities = json!({
            "capabilities": { "alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": { "binary": chromium, "args": args },
            }}
        });
        let (status, answer) = self
            .call(Method::POST, "/session", Some(&capabilities))
            .await
            .expect("chromedriver answers");
        assert_eq!(status, 200, "no browser session: {answer}");
        let id = answer["value"]["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned();
        Session { driver: self, id }
    }
}

/// One browser session.
pub struct Session<'d> {
    driver: &'d Driver,
    id: String,
}

/// An element of the page.
#[derive(Clone)]
pub struct Element(String);

impl Session<'_> {
    async fn command(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        let full = format!("/session/{}{path}", self.id);
        let (status, answer) = self
            .driver
            .call(method, &full, body.as_ref())
            .await
            .unwrap_or_else(|e| panic!("chromedriver: {full}: {e}"));
        assert_eq!(status, 200, "{full}: {answer}");
        answer["value"].clone()
    }

    /// Opens `url`.
    pub async fn open(&self, url: &str) {
        self.command(Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    /// The address shown.
    pub async fn url(&self) -> String {
        let v = self.command(Method::GET, "/url", None).await;
        v.as_str().unwrap_or_default().to_owned()
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page: its return value.
    pub async fn script(&self, script: &str, args: Value) -> Value {
        self.command(
            Method::POST,
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
        .await
    }

    /// The page's visible text.
    pub async fn text(&self) -> String {
        let v = self
            .script(
                "return document.body ? document.body.innerText : '';",
                json!([]),
            )
            .await;
        v.as_str().unwrap_or_default().to_owned()
    }

    /// The whole document as HTML, with the values typed in controls.
    pub async fn source(&self) -> String {
        let v = self
            .script(
                "return document.documentElement.outerHTML + [...document.querySelectorAll('input,textarea,select')].map(e => e.value).join('\\n');",
                json!([]),
            )
            .await;
        v.as_str().unwrap_or_default().to_owned()
    }

    /// The first element `css` selects now, if any.
    pub async fn find_now(&self, css: &str) -> Option<Element> {
        let full = format!("/session/{}/element", self.id);
        let (status, answer) = self
            .driver
            .call(
                Method::POST,
                &full,
                Some(&json!({ "using": "css selector", "value": css })),
            )
            .await
            .unwrap_or_else(|e| panic!("chromedriver: {e}"));
        if status != 200 {
            return None;
        }
        answer["value"][ELEMENT]
            .as_str()
            .map(|id| Element(id.to_owned()))
    }

    /// Waits until `css` selects an element, and gives it.
    pub async fn find(&self, css: &str) -> Element {
        let started = Instant::now();
        loop {
            if let Some(found) = self.find_now(css).await {
                return found;
            }
            self.deadline(started, &format!("an element {css:?}")).await;
        }
    }

    /// Waits until `check(page's text)` holds, and gives the text.
    pub async fn wait_text(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let text = self.text().await;
            if check(&text) {
                return text;
            }
            self.deadline(started, what).await;
        }
    }

    /// Waits until the script (a function body) returns `true`.
    pub async fn wait_script(&self, what: &str, script: &str) {
        let started = Instant::now();
        while self.script(script, json!([])).await != true {
            self.deadline(started, what).await;
        }
    }

    /// Fails the test once [`DEADLINE`] has passed since `started`, saying what it waited for
    /// and what the page shows; else pauses before the next look.
    async fn deadline(&self, started: Instant, what: &str) {
        if started.elapsed() > DEADLINE {
            panic!(
                "waited {DEADLINE:?} for {what} at {}; the page says:\n{}",
                self.url().await,
                self.text().await
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    /// Clicks `element`.
    pub async fn click(&self, element: &Element) {
        self.command(
            Method::POST,
            &format!("/element/{}/click", element.0),
            Some(json!({})),
        )
        .await;
    }

    /// Empties a control and types `text` into it, as a keyboard would.
    pub async fn type_into(&self, element: &Element, text: &str) {
        self.command(
            Method::POST,
            &format!("/element/{}/clear", element.0),
            Some(json!({})),
        )
        .await;
        self.command(
            Method::POST,
            &format!("/element/{}/value", element.0),
            Some(json!({ "text": text })),
        )
        .await;
    }

    /// A control's current value.
    pub async fn value(&self, element: &Element) -> String {
        let v = self
            .command(
                Method::GET,
                &format!("/element/{}/property/value", element.0),
                None,
            )
            .await;
        v.as_str().unwrap_or_default().to_owned()
    }

    /// Picks the option of a `<select>` whose value is `value`.
    pub async fn choose(&self, select_css: &str, value: &str) {
        let option = self
            .find(&format!("{select_css} option[value=\"{value}\"]"))
            .await;
        self.click(&option).await;
    }

    /// The window's size.
    pub async fn resize(&self, width: u32, height: u32) {
        self.command(
            Method::POST,
            "/window/rect",
            Some(json!({ "width": width, "height": height })),
        )
        .await;
    }

    /// A PNG of what the window shows.
    pub async fn screenshot(&self) -> Vec<u8> {
        let v = self.command(Method::GET, "/screenshot", None).await;
        base64_decode(v.as_str().unwrap_or_default())
    }

    /// Ends the session (the browser quits).
    pub async fn quit(self) {
        let _ = self
            .driver
            .call(Method::DELETE, &format!("/session/{}", self.id), None)
            .await;
    }
}

/// Standard base64 (WebDriver's screenshots), padding and line breaks ignored.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for sextet in text.bytes().filter_map(value) {
        buffer = (buffer << 6) | u32::from(sextet);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    out
}

#[test]
fn base64_decodes_as_written() {
    assert_eq!(base64_decode("aGVsbG8="), b"hello");
    assert_eq!(base64_decode("iVBORw0KGgo="), b"\x89PNG\r\n\x1a\n");
    assert_eq!(base64_decode(""), b"");
}
