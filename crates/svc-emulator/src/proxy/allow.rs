//! The proxy's allow-list: which targets it may connect to (see [`ProxyConfig`]).
//!
//! [`ProxyConfig`]: crate::ProxyConfig

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One parsed entry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    /// `*`: anything.
    Any,
    /// An address range (a single address is a full-length prefix).
    Net { addr: IpAddr, prefix: u8 },
    /// A host name, lower case, without a trailing dot.
    Name(String),
}

/// The parsed allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AllowList {
    entries: Vec<Entry>,
}

impl AllowList {
    /// Parses the entries; an error names the entry that is not an address, range or name.
    pub(crate) fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Self, String> {
        let mut parsed = Vec::new();
        for raw in entries {
            let entry = raw.as_ref().trim();
            match entry {
                "*" => parsed.push(Entry::Any),
                "loopback" => {
                    parsed.push(Entry::Net {
                        addr: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)),
                        prefix: 8,
                    });
                    parsed.push(Entry::Net {
                        addr: IpAddr::V6(Ipv6Addr::LOCALHOST),
                        prefix: 128,
                    });
                }
                _ => parsed.push(parse_entry(entry).ok_or_else(|| {
                    format!(
                        "proxy allow-list entry {entry:?} is not an IP address, a CIDR range, a host name, `loopback` or `*`"
                    )
                })?),
            }
        }
        Ok(Self { entries: parsed })
    }

    /// Whether the list holds `*`.
    pub(crate) fn allows_any(&self) -> bool {
        self.entries.contains(&Entry::Any)
    }

    /// Whether `host` (a name, lower case) is on the list by name.
    pub(crate) fn allows_name(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        self.entries
            .iter()
            .any(|e| matches!(e, Entry::Name(name) if name.eq_ignore_ascii_case(host)))
    }

    /// Whether `ip` is in an allowed address range (an IPv4-mapped IPv6 address counts as
    /// its IPv4 address).
    pub(crate) fn allows_addr(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.entries.iter().any(|e| match e {
            Entry::Any => true,
            Entry::Net { addr, prefix } => in_net(ip, *addr, *prefix),
            Entry::Name(_) => false,
        })
    }
}

fn parse_entry(entry: &str) -> Option<Entry> {
    if let Some((addr, prefix)) = entry.split_once('/') {
        let addr: IpAddr = addr.parse().ok()?;
        let prefix: u8 = prefix.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        return (prefix <= max).then_some(Entry::Net {
            addr: addr.to_canonical(),
            prefix: if addr.is_ipv6() && addr.to_canonical().is_ipv4() {
                prefix.saturating_sub(96)
            } else {
                prefix
            },
        });
    }
    let bare = entry.trim_start_matches('[').trim_end_matches(']');
    if let Ok(addr) = bare.parse::<IpAddr>() {
        let addr = addr.to_canonical();
        let prefix = if addr.is_ipv4() { 32 } else { 128 };
        return Some(Entry::Net { addr, prefix });
    }
    let name = entry.trim_end_matches('.').to_ascii_lowercase();
    let valid = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    valid.then_some(Entry::Name(name))
}

fn in_net(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn loopback_default() {
        let list = AllowList::parse(&["loopback"]).unwrap();
        for ok in ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"] {
            assert!(list.allows_addr(ip(ok)), "{ok}");
        }
        for no in [
            "10.255.255.1",
            "192.0.2.1",
            "0.0.0.0",
            "128.0.0.1",
            "::",
            "::2",
            "fe80::1",
            "::ffff:192.0.2.1",
            "169.254.169.254",
        ] {
            assert!(!list.allows_addr(ip(no)), "{no}");
        }
        assert!(
            !list.allows_name("localhost"),
            "names are checked by address"
        );
        assert!(!list.allows_any());
    }

    #[test]
    fn entries() {
        let list = AllowList::parse(&[
            "10.0.0.0/8",
            "192.0.2.7",
            "[fd00::1]",
            "fd12::/16",
            "API.Internal.",
            "::ffff:172.16.0.0/108",
        ])
        .unwrap();
        assert!(list.allows_addr(ip("10.9.8.7")));
        assert!(!list.allows_addr(ip("11.0.0.1")));
        assert!(list.allows_addr(ip("192.0.2.7")));
        assert!(!list.allows_addr(ip("192.0.2.8")));
        assert!(list.allows_addr(ip("fd00::1")));
        assert!(list.allows_addr(ip("fd12:ffff::1")));
        assert!(!list.allows_addr(ip("fd13::1")));
        assert!(list.allows_addr(ip("172.16.200.1")));
        assert!(!list.allows_addr(ip("172.32.0.1")));
        assert!(list.allows_name("api.internal"));
        assert!(list.allows_name("api.internal."));
        assert!(!list.allows_name("evil.api.internal"));
        assert!(!list.allows_addr(ip("127.0.0.1")));

        let all = AllowList::parse(&["*"]).unwrap();
        assert!(all.allows_any() && all.allows_addr(ip("8.8.8.8")));
        let none = AllowList::parse::<&str>(&[]).unwrap();
        assert!(!none.allows_addr(ip("127.0.0.1")));
        assert!(
            AllowList::parse(&["0.0.0.0/0"])
                .unwrap()
                .allows_addr(ip("1.2.3.4"))
        );
    }

    #[test]
    fn bad_entries_are_named() {
        for bad in ["10.0.0.0/33", "::/129", "a b", "", "exa$mple.com", "x/8"] {
            let err = AllowList::parse(&[bad]).unwrap_err();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }
}
