//! Multi-host PostgreSQL URLs, read as libpq reads them (pure; the
//! connecting part is [`super::ha`]).
//!
//! sqlx parses one host per URL, so msgx splits `postgres://u:pw@h1:p1,h2:p2/db?…`
//! (or `?host=h1,h2&port=p1,p2`) into one single-host URL per host, in list
//! order, each keeping the user, password (percent-encoded as given),
//! database and every other parameter; sqlx then reads each as it reads a
//! single-host URL today. `target_session_attrs` and `connect_timeout` are
//! taken out here: sqlx does not know them.
//!
//! A URL with at most one host and one port is passed on as it is, minus
//! those two parameters, so a single-host URL connects exactly as before.

use std::time::Duration;

/// `target_session_attrs`: which kind of server of the host list a session
/// may use (libpq 14's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetSessionAttrs {
    /// The first host that accepts the connection, whatever it is.
    Any,
    /// A server that accepts writes by default: not in recovery and
    /// `default_transaction_read_only` off.
    ReadWrite,
    /// A server not in recovery (it may still be read-only by default).
    Primary,
    /// A server that refuses writes by default (a standby, or a primary with
    /// `default_transaction_read_only` on).
    ReadOnly,
    /// A server in recovery.
    Standby,
    /// A standby if any host is one, else any host.
    PreferStandby,
}

impl TargetSessionAttrs {
    /// Every value, in libpq's documentation order.
    pub const ALL: [TargetSessionAttrs; 6] = [
        Self::Any,
        Self::ReadWrite,
        Self::Primary,
        Self::ReadOnly,
        Self::Standby,
        Self::PreferStandby,
    ];

    /// The URL spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Any => "any",
            Self::ReadWrite => "read-write",
            Self::Primary => "primary",
            Self::ReadOnly => "read-only",
            Self::Standby => "standby",
            Self::PreferStandby => "prefer-standby",
        }
    }

    /// The value spelled `s`, if it is one.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// Whether sessions of this kind can write: the only kinds msgx's
    /// writers (job pool, instance-lock session) take.
    pub fn writes(self) -> bool {
        matches!(self, Self::ReadWrite | Self::Primary)
    }

    /// Whether a server in `role` is one this kind wants. `PreferStandby`
    /// wants a standby here; the connector falls back to any host when no
    /// host is one.
    pub fn accepts(self, role: ServerRole) -> bool {
        match self {
            Self::Any => true,
            Self::ReadWrite => !role.read_only,
            Self::Primary => !role.in_recovery,
            Self::ReadOnly => role.read_only,
            Self::Standby | Self::PreferStandby => role.in_recovery,
        }
    }
}

impl std::fmt::Display for TargetSessionAttrs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a server said about itself after connecting
/// (`pg_is_in_recovery()`, `transaction_read_only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerRole {
    pub in_recovery: bool,
    /// A new transaction would be read-only by default (a standby, or
    /// `default_transaction_read_only = on`).
    pub read_only: bool,
}

impl ServerRole {
    /// Accepts writes by default.
    pub fn writable(self) -> bool {
        !self.in_recovery && !self.read_only
    }
}

impl std::fmt::Display for ServerRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.in_recovery, self.read_only) {
            (true, _) => f.write_str("standby (in recovery)"),
            (false, true) => f.write_str("primary, read-only (default_transaction_read_only)"),
            (false, false) => f.write_str("primary (read-write)"),
        }
    }
}

/// A URL msgx cannot split into hosts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error(
        "target_session_attrs = \"{0}\" is not one of any, read-write, primary, read-only, \
         standby, prefer-standby"
    )]
    Attrs(String),
    #[error("connect_timeout = \"{0}\" is not a whole number of seconds")]
    Timeout(String),
    #[error("{ports} ports for {hosts} hosts: give one port for all hosts or one per host")]
    PortCount { hosts: usize, ports: usize },
    #[error("port \"{0}\" is not a port number")]
    Port(String),
    #[error("the host list has an empty entry")]
    EmptyHost,
    #[error("an IPv6 address in the host list lacks its closing ']'")]
    Bracket,
}

/// A URL split into its hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// One single-host URL per host, in list order (one for a URL that
    /// names at most one host).
    pub urls: Vec<String>,
    /// `target_session_attrs` as given.
    pub attrs: Option<TargetSessionAttrs>,
    /// `connect_timeout`: the bound on connecting to each host; `None` when
    /// absent or zero (no bound of its own, as libpq).
    pub connect_timeout: Option<Duration>,
}

/// The parameters msgx reads itself, beside the driver's
/// (`crate::config::POSTGRES_URL_PARAMETERS`).
pub const OWN_PARAMETERS: [&str; 2] = ["target_session_attrs", "connect_timeout"];

/// Splits `url` into one URL per host (see the module docs). A string that
/// is not `scheme://…` is passed on for the driver to refuse.
pub fn split(url: &str) -> Result<Split, UrlError> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Ok(Split {
            urls: vec![url.to_string()],
            attrs: None,
            connect_timeout: None,
        });
    };
    let (rest, fragment) = match rest.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (rest, None),
    };
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) =
        before_query.split_at(before_query.find('/').unwrap_or(before_query.len()));
    let (userinfo, host_list) = match authority.rfind('@') {
        Some(at) => authority.split_at(at + 1),
        None => ("", authority),
    };

    let mut kept: Vec<&str> = Vec::new();
    let mut attrs = None;
    let mut connect_timeout = None;
    let mut query_hosts: Option<Vec<String>> = None;
    let mut query_ports: Option<Vec<String>> = None;
    for piece in query.split('&').filter(|p| !p.is_empty()) {
        let Some((key, value)) = decode_pair(piece) else {
            kept.push(piece);
            continue;
        };
        match key.as_str() {
            "target_session_attrs" => {
                attrs = Some(
                    TargetSessionAttrs::parse(&value)
                        .ok_or_else(|| UrlError::Attrs(cut(&value)))?,
                );
            }
            "connect_timeout" => connect_timeout = timeout(&value)?,
            "host" => query_hosts = Some(value.split(',').map(str::to_string).collect()),
            "port" => query_ports = Some(value.split(',').map(str::to_string).collect()),
            _ => kept.push(piece),
        }
    }

    let (mut hosts, mut ports) = authority_hosts(host_list)?;
    if let Some(h) = query_hosts {
        hosts = h;
    }
    if let Some(p) = query_ports {
        ports = p;
    }
    if ports.iter().all(String::is_empty) {
        ports.clear();
    }
    if !ports.is_empty() && ports.len() != 1 && ports.len() != hosts.len() {
        return Err(UrlError::PortCount {
            hosts: hosts.len(),
            ports: ports.len(),
        });
    }
    for p in ports.iter().filter(|p| !p.is_empty()) {
        p.parse::<u16>().map_err(|_| UrlError::Port(cut(p)))?;
    }

    let tail = |extra: &[(&str, &str)]| -> String {
        let mut pairs: Vec<String> = kept.iter().map(|p| (*p).to_string()).collect();
        pairs.extend(
            extra
                .iter()
                .filter_map(|kv| serde_urlencoded::to_string([kv]).ok()),
        );
        let mut out = String::new();
        if !pairs.is_empty() {
            out.push('?');
            out.push_str(&pairs.join("&"));
        }
        if let Some(f) = fragment {
            out.push('#');
            out.push_str(f);
        }
        out
    };

    if hosts.len() <= 1 && ports.len() <= 1 {
        // One host: the URL as given, minus the parameters msgx reads itself.
        let mut own = query
            .split('&')
            .filter(|p| decode_pair(p).is_some_and(|(k, _)| OWN_PARAMETERS.contains(&k.as_str())));
        let url = if own.next().is_none() {
            url.to_string()
        } else {
            format!("{scheme}://{authority}{path}{}", tail(&[]))
        };
        return Ok(Split {
            urls: vec![url],
            attrs,
            connect_timeout,
        });
    }

    let mut urls = Vec::with_capacity(hosts.len());
    for (i, host) in hosts.iter().enumerate() {
        if host.is_empty() {
            return Err(UrlError::EmptyHost);
        }
        let port = match ports.len() {
            0 => "",
            1 => &ports[0],
            _ => &ports[i],
        };
        let plain = !host.starts_with('/') && !host.contains(':');
        urls.push(if plain {
            let port = if port.is_empty() {
                String::new()
            } else {
                format!(":{port}")
            };
            format!("{scheme}://{userinfo}{host}{port}{path}{}", tail(&[]))
        } else {
            // A socket directory or an IPv6 address: as the `host`
            // parameter, which the driver uses as it is (a bracketed
            // address in the authority would reach the resolver with its
            // brackets). The authority's `localhost` is then replaced.
            let mut extra = vec![("host", host.as_str())];
            if !port.is_empty() {
                extra.push(("port", port));
            }
            format!("{scheme}://{userinfo}localhost{path}{}", tail(&extra))
        });
    }
    Ok(Split {
        urls,
        attrs,
        connect_timeout,
    })
}

/// `host:port` entries of the authority, split at commas outside `[…]`:
/// the hosts (IPv6 without brackets) and their ports (empty when absent).
fn authority_hosts(list: &str) -> Result<(Vec<String>, Vec<String>), UrlError> {
    let (mut hosts, mut ports) = (Vec::new(), Vec::new());
    if list.is_empty() {
        return Ok((hosts, ports));
    }
    let mut rest = list;
    loop {
        let (host, after) = if let Some(inner) = rest.strip_prefix('[') {
            let close = inner.find(']').ok_or(UrlError::Bracket)?;
            (&inner[..close], &inner[close + 1..])
        } else {
            let end = rest.find([':', ',']).unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        let (port, after) = match after.strip_prefix(':') {
            Some(p) => {
                let end = p.find(',').unwrap_or(p.len());
                (&p[..end], &p[end..])
            }
            None => ("", after),
        };
        hosts.push(host.to_string());
        ports.push(port.to_string());
        match after.strip_prefix(',') {
            Some(next) => rest = next,
            None if after.is_empty() => break,
            // Text after a bracketed address that is neither `:port` nor `,`.
            None => return Err(UrlError::Bracket),
        }
    }
    Ok((hosts, ports))
}

/// A query piece `k=v`, decoded as the driver decodes it.
fn decode_pair(piece: &str) -> Option<(String, String)> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(piece)
        .ok()?
        .into_iter()
        .next()
}

/// libpq's `connect_timeout`: whole seconds; zero or negative means no
/// bound; 1 is taken as 2 (libpq's minimum).
fn timeout(value: &str) -> Result<Option<Duration>, UrlError> {
    let secs: i64 = value
        .trim()
        .parse()
        .map_err(|_| UrlError::Timeout(cut(value)))?;
    Ok((secs > 0).then(|| Duration::from_secs(secs.max(2).unsigned_abs())))
}

/// A value for a message: at most 64 characters, escaped.
fn cut(v: &str) -> String {
    let c: String = v.chars().take(64).collect();
    c.escape_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sqlx::ConnectOptions;
    use sqlx::postgres::PgConnectOptions;

    fn urls(url: &str) -> Vec<String> {
        split(url).unwrap().urls
    }

    #[test]
    fn a_single_host_url_is_passed_on_unchanged() {
        for url in [
            "postgres://msgx:p%40ss@db:5432/msgx?sslmode=verify-full&sslrootcert=/a/ca.pem",
            "postgres://u@h/db",
            "postgres:///db?host=/var/run/postgresql",
            "not a url",
        ] {
            let s = split(url).unwrap();
            assert_eq!(s.urls, [url]);
            assert_eq!((s.attrs, s.connect_timeout), (None, None));
        }
    }

    #[test]
    fn msgx_own_parameters_are_taken_out_of_a_single_host_url() {
        let s = split(
            "postgres://u:pw@h:5433/db?sslmode=disable&target_session_attrs=primary&connect_timeout=3#f",
        )
        .unwrap();
        assert_eq!(s.urls, ["postgres://u:pw@h:5433/db?sslmode=disable#f"]);
        assert_eq!(s.attrs, Some(TargetSessionAttrs::Primary));
        assert_eq!(s.connect_timeout, Some(Duration::from_secs(3)));
    }

    #[test]
    fn an_authority_host_list_gives_one_url_per_host_in_order() {
        assert_eq!(
            urls(
                "postgres://u:p%2Fw@h1:5432,h2,10.0.0.3:5434/db?sslmode=require&target_session_attrs=read-write"
            ),
            [
                "postgres://u:p%2Fw@h1:5432/db?sslmode=require",
                "postgres://u:p%2Fw@h2/db?sslmode=require",
                "postgres://u:p%2Fw@10.0.0.3:5434/db?sslmode=require",
            ]
        );
    }

    #[test]
    fn host_and_port_parameters_are_lists_too() {
        assert_eq!(
            urls("postgres://u@/db?host=a,b&port=5001,5002&application_name=x"),
            [
                "postgres://u@a:5001/db?application_name=x",
                "postgres://u@b:5002/db?application_name=x"
            ]
        );
        // One port for every host; the parameter replaces the authority's.
        assert_eq!(
            urls("postgres://u@old:1/db?host=a,b&port=7"),
            ["postgres://u@a:7/db", "postgres://u@b:7/db"]
        );
        assert_eq!(
            urls("postgres://u@a:1,b:2/db?port=9"),
            ["postgres://u@a:9/db", "postgres://u@b:9/db"]
        );
    }

    #[test]
    fn ipv6_and_socket_hosts_go_as_the_host_parameter() {
        assert_eq!(
            urls("postgres://u@[::1]:5433,[fe80::2]/db"),
            [
                "postgres://u@localhost/db?host=%3A%3A1&port=5433",
                "postgres://u@localhost/db?host=fe80%3A%3A2"
            ]
        );
        assert_eq!(
            urls("postgres://u@/db?host=/run/pg,h2&port=5432"),
            [
                "postgres://u@localhost/db?host=%2Frun%2Fpg&port=5432",
                "postgres://u@h2:5432/db"
            ]
        );
        let opts: PgConnectOptions = urls("postgres://u@[::1]:5433,h/db")[0].parse().unwrap();
        assert_eq!((opts.get_host(), opts.get_port()), ("::1", 5433));
    }

    #[test]
    fn malformed_lists_and_values_are_refused() {
        let e = |u: &str| split(u).unwrap_err();
        assert_eq!(
            e("postgres://u@a,b,c/db?port=1,2"),
            UrlError::PortCount { hosts: 3, ports: 2 }
        );
        assert_eq!(e("postgres://u@a:x,b/db"), UrlError::Port("x".into()));
        assert_eq!(e("postgres://u@a,,b/db"), UrlError::EmptyHost);
        assert_eq!(e("postgres://u@[::1,b/db"), UrlError::Bracket);
        assert_eq!(
            e("postgres://h/db?target_session_attrs=readwrite"),
            UrlError::Attrs("readwrite".into())
        );
        assert_eq!(
            e("postgres://h/db?connect_timeout=soon"),
            UrlError::Timeout("soon".into())
        );
    }

    #[test]
    fn connect_timeout_follows_libpq() {
        let t = |v: &str| split(&format!("postgres://h/db?connect_timeout={v}")).unwrap();
        assert_eq!(t("0").connect_timeout, None);
        assert_eq!(t("-3").connect_timeout, None);
        assert_eq!(t("1").connect_timeout, Some(Duration::from_secs(2)));
        assert_eq!(t("10").connect_timeout, Some(Duration::from_secs(10)));
    }

    #[test]
    fn each_kind_accepts_the_servers_libpq_would() {
        use TargetSessionAttrs::*;
        let primary = ServerRole {
            in_recovery: false,
            read_only: false,
        };
        let read_only_primary = ServerRole {
            in_recovery: false,
            read_only: true,
        };
        let standby = ServerRole {
            in_recovery: true,
            read_only: true,
        };
        let table = [
            (Any, [true, true, true]),
            (ReadWrite, [true, false, false]),
            (Primary, [true, true, false]),
            (ReadOnly, [false, true, true]),
            (Standby, [false, false, true]),
            (PreferStandby, [false, false, true]),
        ];
        for (kind, want) in table {
            let got = [primary, read_only_primary, standby].map(|r| kind.accepts(r));
            assert_eq!(got, want, "{kind}");
            assert_eq!(TargetSessionAttrs::parse(kind.as_str()), Some(kind));
        }
        assert!(primary.writable() && !read_only_primary.writable() && !standby.writable());
    }

    /// `s` as sqlx writes a password back (`NON_ALPHANUMERIC`).
    fn encode(s: &str) -> String {
        s.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    fn host() -> impl Strategy<Value = (String, Option<u16>, bool)> {
        let name = "[a-z][a-z0-9-]{0,10}(\\.[a-z0-9]{1,5}){0,2}";
        let v4 = (1u8..=254, 0u8..=255, 1u8..=254).prop_map(|(a, b, c)| format!("{a}.{b}.0.{c}"));
        let v6 = (1u16..0xffff, 1u16..0xffff).prop_map(|(a, b)| format!("fd{a:x}::{b:x}"));
        (
            prop_oneof![name.prop_map(String::from), v4, v6],
            proptest::option::of(1u16..),
        )
            .prop_map(|(h, p)| {
                let v6 = h.contains(':');
                (h, p, v6)
            })
    }

    proptest! {
        /// Every host of a generated list comes back, in order, with its
        /// port, the user, the password (percent-encoded as given, decoded
        /// by the driver to the same text), the database and the other
        /// parameters.
        #[test]
        fn every_host_keeps_its_port_and_the_shared_parts(
            hosts in proptest::collection::vec(host(), 2..5),
            password in "[ -~]{1,12}",
            db in "[a-z_]{1,8}",
            attrs in proptest::sample::select(TargetSessionAttrs::ALL.to_vec()),
        ) {
            let list: Vec<String> = hosts
                .iter()
                .map(|(h, p, v6)| {
                    let h = if *v6 { format!("[{h}]") } else { h.clone() };
                    match p { Some(p) => format!("{h}:{p}"), None => h }
                })
                .collect();
            let url = format!(
                "postgresql://msgx:{}@{}/{db}?application_name=m&target_session_attrs={attrs}",
                encode(&password),
                list.join(",")
            );
            let s = split(&url).unwrap();
            prop_assert_eq!(s.attrs, Some(attrs));
            prop_assert_eq!(s.urls.len(), hosts.len());
            for (one, (h, p, _)) in s.urls.iter().zip(&hosts) {
                let opts: PgConnectOptions = one.parse().unwrap();
                prop_assert_eq!(opts.get_host(), h.as_str());
                prop_assert_eq!(opts.get_port(), p.unwrap_or(5432));
                prop_assert_eq!(opts.get_username(), "msgx");
                prop_assert_eq!(opts.get_database(), Some(db.as_str()));
                prop_assert_eq!(opts.get_application_name(), Some("m"));
                // sqlx cannot render an IPv6 host; the host is not asked here.
                let back = opts.clone().host("h").to_url_lossy();
                let want = encode(&password);
                prop_assert_eq!(back.password(), Some(want.as_str()));
            }
        }
    }
}
