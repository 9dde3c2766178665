//! Who a request's client is, and what each client may use of a listener
//! (docs/production/http.md "Per-client budgets").
//!
//! The client is the direct peer, unless the peer is one of
//! `msgx.http.trusted-proxies`: then it is the right-most
//! `X-Forwarded-For` hop that is not itself a trusted proxy ([`resolve`]).
//! Anybody can write `X-Forwarded-For`; only the hop a trusted proxy
//! appended (the address it saw) is believed, so a client cannot pick the
//! address it is counted under.
//!
//! Per client the listener keeps a connection budget ([`Connections`]) and
//! a request-rate budget ([`Rates`]), so one client cannot take the share of
//! the others; [`FailureLimiter`] counts failed credentials per key (the
//! console's logins and bearer tokens). Every map here is bounded.

use axum::http::HeaderMap;
use chrono::{DateTime, Utc};
use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use tokio::time::{Duration, Instant};

/// The resolved client address, in every request's extensions (the
/// listener puts it there). Budgets, limiters and log lines key on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client(pub IpAddr);

/// The header a proxy appends the address it saw to.
const FORWARDED_FOR: &str = "x-forwarded-for";

/// The client of a request from `peer`: `peer` itself unless it is in
/// `trusted`; then, walking the `X-Forwarded-For` hops from the right, the
/// first that is not a trusted proxy. When every hop is trusted, or a hop is
/// not an address (a proxy that appends `unknown`, a mangled header), the
/// last trusted address reached is the client: never a hop left of one that
/// cannot be read, since nobody vouches for it. IPv4-mapped IPv6 addresses
/// count as IPv4.
pub fn resolve(peer: IpAddr, headers: &HeaderMap, trusted: &[IpAddr]) -> IpAddr {
    let is_trusted = |ip: IpAddr| trusted.iter().any(|t| t.to_canonical() == ip);
    let mut client = peer.to_canonical();
    if !is_trusted(client) {
        return client;
    }
    for value in headers.get_all(FORWARDED_FOR).iter().rev() {
        let Ok(value) = value.to_str() else {
            return client;
        };
        for hop in value.rsplit(',') {
            let Some(ip) = hop_address(hop) else {
                return client;
            };
            client = ip;
            if !is_trusted(ip) {
                return ip;
            }
        }
    }
    client
}

/// One `X-Forwarded-For` hop: an address, optionally with a port
/// (`1.2.3.4:5678`, `[::1]:80`) or in brackets (`[::1]`).
fn hop_address(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    let ip = hop
        .parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| hop.strip_prefix('[')?.strip_suffix(']')?.parse().ok())?;
    Some(ip.to_canonical())
}

/// The token of `Authorization: Bearer <token>` (the scheme in any case),
/// without surrounding white space; `None` without one.
pub fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let v = headers.get(axum::http::header::AUTHORIZATION)?.as_bytes();
    let (scheme, rest) = v.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| rest.trim_ascii())
}

/// The answer text and `WWW-Authenticate` value (RFC 6750) of a request
/// refused for a missing bearer token, or for a wrong one (`wrong`).
pub fn bearer_refusal(wrong: bool) -> (&'static str, axum::http::HeaderValue) {
    use axum::http::HeaderValue;
    if wrong {
        (
            "invalid bearer token",
            HeaderValue::from_static("Bearer realm=\"msgx\", error=\"invalid_token\""),
        )
    } else {
        (
            "missing bearer token",
            HeaderValue::from_static("Bearer realm=\"msgx\""),
        )
    }
}

/// Open connections per client address, at most `max` each. Entries exist
/// only while a connection is open, so the map is bounded by the listener's
/// `max-connections`.
#[derive(Debug)]
pub struct Connections {
    max: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection counted against its client; dropping it frees it.
#[derive(Debug)]
pub struct ConnectionSlot {
    budget: Arc<Connections>,
    client: IpAddr,
}

impl Connections {
    pub fn new(max: usize) -> Arc<Connections> {
        Arc::new(Connections {
            max: max.max(1),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// A slot for one more connection of `client`, or `None` when it holds
    /// `max` already.
    pub fn take(self: &Arc<Self>, client: IpAddr) -> Option<ConnectionSlot> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(client).or_insert(0);
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(ConnectionSlot {
            budget: self.clone(),
            client,
        })
    }

    /// Open connections of `client`.
    pub fn open(&self, client: IpAddr) -> usize {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.get(&client).copied().unwrap_or(0)
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut open = self.budget.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.client);
            }
        }
    }
}

/// Requests per second per client: a token bucket per address holding at
/// most one second's worth (`per_second`), refilled continuously. At most
/// `capacity` clients are tracked; an idle client's bucket (full again) is
/// forgotten, and when every tracked client is active, new ones share one
/// bucket, so a flood from many addresses costs bounded memory.
#[derive(Debug)]
pub struct Rates {
    per_second: f64,
    capacity: usize,
    state: Mutex<RateState>,
}

#[derive(Debug)]
struct RateState {
    /// `None`: the bucket of the clients beyond `capacity`.
    buckets: HashMap<Option<IpAddr>, Bucket>,
    pruned: Option<Instant>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Clients tracked by [`Rates`] and by each map of the console's login
/// limiter: a few hundred KB at most.
pub const TRACKED_CLIENTS: usize = 4096;

impl Rates {
    pub fn new(per_second: u64, capacity: usize) -> Rates {
        Rates {
            per_second: per_second.max(1) as f64,
            capacity: capacity.max(1),
            state: Mutex::new(RateState {
                buckets: HashMap::new(),
                pruned: None,
            }),
        }
    }

    /// Whether `client` may make another request at `now` (and counts it).
    pub fn admit(&self, client: IpAddr, now: Instant) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let full = Duration::from_secs(1);
        let mut key = Some(client);
        if !state.buckets.contains_key(&key) && state.buckets.len() >= self.capacity {
            // At most one pass a second, so a flood from many addresses
            // does not cost a scan per request.
            if state.pruned.is_none_or(|p| now.duration_since(p) >= full) {
                state.buckets.retain(|_, b| now.duration_since(b.at) < full);
                state.pruned = Some(now);
            }
            if state.buckets.len() >= self.capacity {
                key = None;
            }
        }
        let rate = self.per_second;
        let b = state.buckets.entry(key).or_insert(Bucket {
            tokens: rate,
            at: now,
        });
        let elapsed = now.duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * rate).min(rate);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Failures per key (a user name, a client address) in a fixed window:
/// after `max` failures the key is refused until the window that began with
/// its first failure has passed. At most `capacity` keys are kept: when
/// full, ended windows are dropped first, then the oldest window, so
/// memory stays bounded whatever the keys. In memory: a
/// restart forgets, which only gives a guesser one more window.
#[derive(Debug)]
pub struct FailureLimiter<K> {
    max: u32,
    window: chrono::Duration,
    capacity: usize,
    failures: Mutex<HashMap<K, (DateTime<Utc>, u32)>>,
}

impl<K: Eq + Hash + Clone> FailureLimiter<K> {
    pub fn new(max: u32, window: chrono::Duration, capacity: usize) -> FailureLimiter<K> {
        FailureLimiter {
            max,
            window,
            capacity: capacity.max(1),
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Whether another attempt for `key` is allowed at `now`.
    pub fn allowed<Q>(&self, key: &Q, now: DateTime<Utc>) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        map.get(key)
            .is_none_or(|(since, n)| now - *since >= self.window || *n < self.max)
    }

    /// Counts a failed attempt against `key`.
    pub fn failed<Q>(&self, key: &Q, now: DateTime<Utc>)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let mut map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((since, n)) = map.get_mut(key) {
            if now - *since >= self.window {
                (*since, *n) = (now, 0);
            }
            *n += 1;
            return;
        }
        if map.len() >= self.capacity {
            map.retain(|_, (since, _)| now - *since < self.window);
        }
        if map.len() >= self.capacity {
            let oldest = map
                .iter()
                .min_by_key(|(_, (since, _))| *since)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                map.remove::<K>(&k);
            }
        }
        map.insert(key.to_owned(), (now, 1));
    }

    /// Forgets `key`'s failures.
    pub fn clear<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let mut map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        map.remove(key);
    }

    /// Keys held (at most the capacity).
    pub fn len(&self) -> usize {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    fn xff(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(FORWARDED_FOR, HeaderValue::from_str(v).expect("value"));
        }
        h
    }

    #[test]
    fn only_a_trusted_proxy_is_believed_and_only_for_the_hop_it_appended() {
        let proxies = [ip("10.0.0.1"), ip("10.0.0.2")];
        let forged = xff(&["6.6.6.6"]);
        assert_eq!(
            resolve(ip("192.0.2.7"), &forged, &proxies),
            ip("192.0.2.7"),
            "a direct client's header is ignored"
        );
        assert_eq!(resolve(ip("192.0.2.7"), &forged, &[]), ip("192.0.2.7"));
        // The client put 6.6.6.6 in front; the proxy appended what it saw.
        let h = xff(&["6.6.6.6, 192.0.2.7"]);
        assert_eq!(resolve(ip("10.0.0.1"), &h, &proxies), ip("192.0.2.7"));
        // Two proxies in a row; the hops may come in several headers.
        let h = xff(&["6.6.6.6", "192.0.2.7, 10.0.0.2"]);
        assert_eq!(resolve(ip("10.0.0.1"), &h, &proxies), ip("192.0.2.7"));
        // No header, or only proxies: the last proxy reached.
        assert_eq!(
            resolve(ip("10.0.0.1"), &HeaderMap::new(), &proxies),
            ip("10.0.0.1")
        );
        let h = xff(&["10.0.0.2"]);
        assert_eq!(resolve(ip("10.0.0.1"), &h, &proxies), ip("10.0.0.2"));
    }

    #[test]
    fn an_unreadable_hop_stops_the_walk_and_ports_brackets_and_mapped_addresses_are_read() {
        let proxies = [ip("10.0.0.1")];
        let h = xff(&["192.0.2.9, unknown"]);
        assert_eq!(resolve(ip("10.0.0.1"), &h, &proxies), ip("10.0.0.1"));
        let h = xff(&["192.0.2.9,"]);
        assert_eq!(resolve(ip("10.0.0.1"), &h, &proxies), ip("10.0.0.1"));
        let h = xff(&["192.0.2.9:5555"]);
        assert_eq!(resolve(ip("10.0.0.1"), &h, &proxies), ip("192.0.2.9"));
        let h = xff(&["[2001:db8::1]:443"]);
        assert_eq!(resolve(ip("10.0.0.1"), &h, &proxies), ip("2001:db8::1"));
        let h = xff(&["[2001:db8::2]"]);
        assert_eq!(resolve(ip("10.0.0.1"), &h, &proxies), ip("2001:db8::2"));
        // A proxy seen over an IPv6 socket as ::ffff:10.0.0.1 is still trusted.
        let h = xff(&["::ffff:192.0.2.3"]);
        assert_eq!(
            resolve(ip("::ffff:10.0.0.1"), &h, &proxies),
            ip("192.0.2.3")
        );
        let mut h = HeaderMap::new();
        h.append(
            FORWARDED_FOR,
            HeaderValue::from_bytes(b"192.0.2.9\xff").expect("opaque bytes"),
        );
        assert_eq!(resolve(ip("10.0.0.1"), &h, &proxies), ip("10.0.0.1"));
    }

    #[test]
    fn connections_are_counted_per_client_and_freed_on_drop() {
        let c = Connections::new(2);
        let a = ip("127.0.0.2");
        let first = c.take(a).expect("one");
        let _second = c.take(a).expect("two");
        assert!(c.take(a).is_none(), "a third is refused");
        assert!(
            c.take(ip("127.0.0.3")).is_some(),
            "another client has its own"
        );
        drop(first);
        assert!(c.take(a).is_some(), "a closed connection frees its slot");
        assert_eq!(
            c.open(ip("127.0.0.3")),
            0,
            "an entry lives while its connection does"
        );
    }

    #[test]
    fn each_client_has_its_own_rate_and_the_tracked_clients_are_bounded() {
        let t0 = Instant::now();
        let r = Rates::new(3, 2);
        let (a, b) = (ip("10.0.0.1"), ip("10.0.0.2"));
        let admitted = |c, at| (0..5).filter(|_| r.admit(c, at)).count();
        assert_eq!(admitted(a, t0), 3, "one second's worth");
        assert_eq!(admitted(b, t0), 3, "the flood of a took nothing from b");
        assert!(!r.admit(a, t0 + Duration::from_millis(300)));
        assert!(r.admit(a, t0 + Duration::from_millis(400)), "refilled");
        // Full: the newcomers share one bucket…
        assert_eq!(admitted(ip("10.0.0.3"), t0), 3);
        assert_eq!(admitted(ip("10.0.0.4"), t0), 0);
        // …until the tracked clients have been idle a second.
        assert_eq!(admitted(ip("10.0.0.4"), t0 + Duration::from_secs(2)), 3);
        assert!(r.state.lock().expect("lock").buckets.len() <= 3);
    }

    #[test]
    fn failures_lock_a_key_for_its_window_and_the_keys_are_bounded() {
        let t0 = DateTime::<Utc>::UNIX_EPOCH;
        let l = FailureLimiter::<String>::new(2, chrono::Duration::minutes(15), 3);
        let key = "alice";
        l.failed(key, t0);
        assert!(l.allowed(key, t0));
        l.failed(key, t0 + chrono::Duration::minutes(1));
        assert!(!l.allowed(key, t0 + chrono::Duration::minutes(14)));
        assert!(l.allowed(key, t0 + chrono::Duration::minutes(15)));
        l.failed(key, t0 + chrono::Duration::minutes(15));
        assert!(
            l.allowed(key, t0 + chrono::Duration::minutes(15)),
            "a new window"
        );
        for i in 0..10_000 {
            l.failed(
                format!("name-{i}").as_str(),
                t0 + chrono::Duration::minutes(16),
            );
        }
        assert_eq!(l.len(), 3, "never more than the capacity");
        l.clear("name-9999");
        assert_eq!(l.len(), 2);
    }
}
