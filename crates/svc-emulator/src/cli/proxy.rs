//! The HTTP proxy's flags.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::ProxyConfig;

/// The HTTP proxy's flags of the `svc-emulator` binary (part of
/// [`EmulatorArgs`](crate::cli::EmulatorArgs)); each can also be set by an environment variable.
#[derive(Debug, Clone, clap::Args)]
pub struct ProxyArgs {
    /// Targets the HTTP proxy may forward to, comma-separated: IP addresses, CIDR ranges, host
    /// names, `loopback` (127.0.0.0/8 and ::1) or `*` (anything). Replaces the default,
    /// `loopback`.
    #[arg(
        long,
        env = "SVC_EMULATOR_PROXY_ALLOW",
        value_name = "HOSTS",
        value_delimiter = ','
    )]
    pub proxy_allow: Vec<String>,

    /// Limit on one proxied request (connect, redirects, the whole answer), in seconds; past it
    /// the proxy answers 504.
    #[arg(
        long,
        env = "SVC_EMULATOR_PROXY_TIMEOUT",
        value_name = "SECONDS",
        default_value = "30",
        value_parser = parse_seconds
    )]
    pub proxy_timeout: Duration,

    /// A secret token for the proxy's `secret_tokens`, as NAME=VALUE; repeat the flag, or
    /// separate with commas in the variable. `{{secret:NAME}}` in a request naming it is
    /// replaced by VALUE.
    #[arg(
        long = "proxy-secret",
        env = "SVC_EMULATOR_PROXY_SECRETS",
        value_name = "NAME=VALUE",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub proxy_secrets: Vec<ProxySecret>,
}

impl ProxyArgs {
    /// The [`ProxyConfig`] these flags describe.
    pub fn to_proxy_config(&self) -> ProxyConfig {
        let mut config = ProxyConfig::new().timeout(self.proxy_timeout);
        if !self.proxy_allow.is_empty() {
            config = config.allow(self.proxy_allow.iter().map(|e| e.trim().to_owned()));
        }
        for secret in &self.proxy_secrets {
            config = config.secret(secret.name.clone(), secret.value.clone());
        }
        config
    }
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{text:?} is not a positive number of seconds"))
}

/// A `NAME=VALUE` secret token of [`ProxyArgs`]; `Debug` hides the value.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxySecret {
    /// The name used in `secret_tokens` and `{{secret:NAME}}`.
    pub name: String,
    /// The value.
    pub value: String,
}

impl FromStr for ProxySecret {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => Ok(Self {
                name: name.trim().to_owned(),
                value: value.to_owned(),
            }),
            _ => Err("expected NAME=VALUE".to_owned()),
        }
    }
}

impl fmt::Debug for ProxySecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=<hidden>", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            proxy: ProxyArgs,
        }
        let cli = Cli::parse_from([
            "x",
            "--proxy-allow",
            "loopback,api.internal",
            "--proxy-timeout",
            "0.5",
            "--proxy-secret",
            "KEY=a=b",
        ]);
        let config = cli.proxy.to_proxy_config();
        assert_eq!(config.allow_list(), ["loopback", "api.internal"]);
        assert_eq!(config.timeout_limit(), Duration::from_millis(500));
        assert_eq!(config.secrets()["KEY"], "a=b");
        assert!(!format!("{:?}", cli.proxy).contains("a=b"));
        let defaults = Cli::parse_from(["x"]).proxy.to_proxy_config();
        assert_eq!(defaults, ProxyConfig::default());
        for bad in [
            ["--proxy-timeout", "0"],
            ["--proxy-timeout", "x"],
            ["--proxy-secret", "=v"],
        ] {
            assert!(
                Cli::try_parse_from(["x", bad[0], bad[1]]).is_err(),
                "{bad:?}"
            );
        }
    }
}
