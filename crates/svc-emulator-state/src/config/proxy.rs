//! The settings of the HTTP proxy: allow-list, timeout, secrets, pinned names, extra roots.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

/// The default limit on one proxied exchange (connect, redirects, the whole answer).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Settings of the HTTP proxy route (`POST {app_base_url}/proxy_request/`), given to
/// [`EmulatorConfig::proxy`](../svc_emulator/struct.EmulatorConfig.html#method.proxy).
///
/// The proxy forwards only to targets on its allow-list. Each entry is one of:
///
/// | Entry | Allows |
/// | --- | --- |
/// | `loopback` (the default list) | `127.0.0.0/8` and `::1` |
/// | an IP address, e.g. `10.1.2.3`, `::1` | that address |
/// | a CIDR range, e.g. `10.0.0.0/8`, `fd00::/8` | the addresses in it |
/// | a host name, e.g. `api.internal` | that name, whatever it resolves to |
/// | `*` | any target (use with care) |
///
/// A target named by a host name that is not on the list is allowed only when **every**
/// address the name resolves to is allowed; the proxy then connects to one of those checked
/// addresses, never resolving again (so DNS rebinding cannot move it elsewhere). Redirects are
/// followed (at most 10) only to allowed targets.
///
/// ```
/// use std::time::Duration;
/// use svc_emulator::{EmulatorConfig, ProxyConfig};
///
/// let proxy = ProxyConfig::new()
///     .allow(["loopback", "api.internal", "10.0.0.0/8"])
///     .timeout(Duration::from_secs(5))
///     .secret("STRIPE_KEY", "sk_test_...")
///     .resolve("api.internal", ["10.1.2.3".parse().unwrap()]);
/// let config = EmulatorConfig::default().proxy(proxy);
/// assert_eq!(config.proxy_settings().timeout_limit(), Duration::from_secs(5));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyConfig {
    allow: Vec<String>,
    timeout: Duration,
    secrets: BTreeMap<String, String>,
    resolve: BTreeMap<String, Vec<IpAddr>>,
    roots_pem: Vec<Vec<u8>>,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        Self {
            allow: vec!["loopback".to_owned()],
            timeout: DEFAULT_TIMEOUT,
            secrets: BTreeMap::new(),
            resolve: BTreeMap::new(),
            roots_pem: Vec::new(),
        }
    }
}

impl ProxyConfig {
    /// The defaults: loopback only, a 30 s timeout, no secrets.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the allow-list (entries in the table above; checked when the emulator
    /// starts). Include `loopback` to keep loopback allowed. An empty list refuses every
    /// target.
    pub fn allow<I, S>(mut self, entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow = entries.into_iter().map(Into::into).collect();
        self
    }

    /// The limit on one proxied exchange: connecting, every redirect and reading the whole
    /// answer (default 30 s). Past it the proxy answers `504`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// A secret token of every project: a request naming `name` in `secret_tokens` has each
    /// `{{secret:NAME}}` in its URL, query values, header values and body text replaced by
    /// `value`. Never logged or printed.
    pub fn secret(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.secrets.insert(name.into(), value.into());
        self
    }

    /// Pins a host name to addresses, like curl's `--resolve`: the proxy uses them instead of
    /// asking the system resolver (the allow-list still checks each of them).
    pub fn resolve(
        mut self,
        host: impl Into<String>,
        addrs: impl IntoIterator<Item = IpAddr>,
    ) -> Self {
        let host = host.into().trim_end_matches('.').to_ascii_lowercase();
        self.resolve.insert(host, addrs.into_iter().collect());
        self
    }

    /// Trusts one more root certificate (PEM) for `https://` targets, besides the Mozilla
    /// roots of `webpki-roots` (e.g. another emulator's CA, or a private CA).
    pub fn root_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.roots_pem.push(pem.into());
        self
    }

    /// The allow-list entries.
    pub fn allow_list(&self) -> &[String] {
        &self.allow
    }

    /// The timeout of one proxied exchange.
    pub fn timeout_limit(&self) -> Duration {
        self.timeout
    }

    /// The secret tokens of [`secret`](Self::secret), by name. Their values are secrets: the
    /// emulator never logs or prints them (nor does this type's `Debug`).
    pub fn secrets(&self) -> &BTreeMap<String, String> {
        &self.secrets
    }

    /// The host names pinned with [`resolve`](Self::resolve) (lower case, without a trailing
    /// dot), and their addresses.
    pub fn pinned_names(&self) -> &BTreeMap<String, Vec<IpAddr>> {
        &self.resolve
    }

    /// The root certificates (PEM) added with
    /// [`root_certificate_pem`](Self::root_certificate_pem).
    pub fn root_certificates_pem(&self) -> &[Vec<u8>] {
        &self.roots_pem
    }
}

impl fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyConfig")
            .field("allow", &self.allow)
            .field("timeout", &self.timeout)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .field("resolve", &self.resolve)
            .field("roots_pem", &self.roots_pem.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_read_back_as_set() {
        let ip: IpAddr = "10.1.2.3".parse().unwrap();
        let c = ProxyConfig::new()
            .allow(["api.internal"])
            .timeout(Duration::from_secs(5))
            .secret("KEY", "v")
            .resolve("API.Internal.", [ip])
            .root_certificate_pem("PEM");
        assert_eq!(c.allow_list(), ["api.internal"]);
        assert_eq!(c.timeout_limit(), Duration::from_secs(5));
        assert_eq!(c.secrets()["KEY"], "v");
        assert_eq!(c.pinned_names()["api.internal"], [ip]);
        assert_eq!(c.root_certificates_pem(), [b"PEM".to_vec()]);
        assert_eq!(ProxyConfig::default().allow_list(), ["loopback"]);
    }

    #[test]
    fn debug_hides_secret_values() {
        let c = ProxyConfig::new().secret("KEY", "sk_live_hush");
        let dbg = format!("{c:?}");
        assert!(
            dbg.contains("KEY") && !dbg.contains("sk_live_hush"),
            "{dbg}"
        );
    }
}
