//! TLS to the mailbox (`[msgx.mailbox.tls]`, docs/production/databases.md):
//! the config turned into mysql_async's `SslOpts`, the load-time rules for
//! it, error wording, and the check that a session is encrypted.
//!
//! mysql_async facts this relies on (0.37.1, rustls):
//! - with `SslOpts` set, a server without TLS is refused
//!   (`NoClientSslFlagFromServer`): there is no plaintext fallback;
//! - after connecting over TCP it reconnects through the Unix socket path
//!   the server reports, if that path exists on this host (`prefer_socket`,
//!   on by default), and never encrypts a socket. msgx turns that off (see
//!   [`apply`]): a session stays on the TCP connection to the server the URL
//!   names, verified when TLS is on;
//! - `verify-ca` (skip the host-name check) is inert with rustls 0.23
//!   (mysql_async#404, fixed upstream by #408, not released in 0.37.1): the
//!   name is still checked. That fails closed; `server-name` names the
//!   certificate's host when connecting by another address.

use super::{Mailbox, MailboxError};
use crate::config::{Mailbox as MailboxConfig, MailboxTls, MailboxTlsMode};
use crate::tls::{FileError, read_certs, read_key};
use mysql_async::prelude::Queryable;
use mysql_async::{ClientIdentity, Opts, OptsBuilder, SslOpts};

/// mysql_async's TLS options for `cfg`: `None` when TLS is disabled. Reads
/// (and checks) the named files now, so a missing or malformed one is an
/// error naming the key, not a failure inside the first handshake.
pub fn ssl_opts(cfg: &MailboxTls) -> Result<Option<SslOpts>, FileError> {
    let mut ssl = match cfg.mode {
        MailboxTlsMode::Disabled => return Ok(None),
        MailboxTlsMode::Required => SslOpts::default().with_danger_accept_invalid_certs(true),
        MailboxTlsMode::VerifyCa => SslOpts::default().with_danger_skip_domain_validation(true),
        MailboxTlsMode::VerifyIdentity => SslOpts::default(),
    };
    if let Some(path) = &cfg.ca_file {
        let pem = read_certs("msgx.mailbox.tls.ca-file", path)?;
        ssl = ssl
            .with_root_certs(vec![pem.into()])
            .with_disable_built_in_roots(true);
    }
    if let (Some(cert), Some(key)) = (&cfg.cert_file, &cfg.key_file) {
        let cert = read_certs("msgx.mailbox.tls.cert-file", cert)?;
        let key = read_key("msgx.mailbox.tls.key-file", key)?;
        ssl = ssl.with_client_identity(Some(ClientIdentity::new(cert.into(), key.into())));
    }
    if let Some(name) = &cfg.server_name {
        ssl = ssl.with_danger_tls_hostname_override(Some(name.clone()));
    }
    Ok(Some(ssl))
}

/// `opts` with the TLS of `cfg` applied (the hook in `Mailbox::new`), and
/// mysql_async's move to a Unix socket turned off unless the URL asks for it
/// (`prefer_socket=true`; never with TLS): the socket path is the one the
/// server reports, looked up on this host, where it may belong to another
/// server (the Debian default path is the same for every MariaDB).
pub fn apply(opts: Opts, cfg: &MailboxConfig) -> Result<Opts, MailboxError> {
    crate::tls::init();
    let socket_asked = crate::config::url_params(&cfg.url).any(|k| k == "prefer_socket");
    let mut builder = OptsBuilder::from_opts(opts);
    if !socket_asked {
        builder = builder.prefer_socket(false);
    }
    if let Some(ssl) = ssl_opts(&cfg.tls)? {
        builder = builder.ssl_opts(ssl).prefer_socket(false);
    }
    Ok(builder.into())
}

/// A driver error in words: TLS failures say what failed (certificate
/// verification, a server without TLS); others are shown as they are.
pub fn explain(e: &mysql_async::Error) -> String {
    if let Some(detail) = crate::tls::describe_failure(e) {
        return format!("TLS: {detail}");
    }
    match e {
        mysql_async::Error::Driver(mysql_async::DriverError::NoClientSslFlagFromServer) => {
            "TLS: the server does not offer TLS (msgx.mailbox.tls.mode requires it); msgx never \
             falls back to plaintext"
                .into()
        }
        other => other.to_string(),
    }
}

impl Mailbox {
    /// The TLS protocol version of a pooled mailbox session (e.g.
    /// `TLSv1.3`), `None` when it is not encrypted (`Ssl_version`; for
    /// `msgx doctor`).
    pub async fn tls_in_use(&self) -> Result<Option<String>, MailboxError> {
        let row: Option<(String, String)> = self
            .bounded(async {
                let mut conn = self.pool.get_conn().await?;
                conn.query_first("SHOW SESSION STATUS LIKE 'Ssl_version'")
                    .await
            })
            .await?;
        Ok(row.map(|(_, version)| version).filter(|v| !v.is_empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_tls_is_none() {
        assert!(ssl_opts(&MailboxTls::default()).unwrap().is_none());
    }

    #[test]
    fn a_missing_ca_file_names_the_key() {
        let cfg = MailboxTls {
            mode: MailboxTlsMode::VerifyIdentity,
            ca_file: Some("/nonexistent/ca.pem".into()),
            ..MailboxTls::default()
        };
        let e = ssl_opts(&cfg).unwrap_err().to_string();
        assert!(
            e.starts_with("msgx.mailbox.tls.ca-file = /nonexistent/ca.pem: cannot read it"),
            "{e}"
        );
    }

    #[test]
    fn modes_map_to_mysql_async_options() {
        let with = |mode| {
            ssl_opts(&MailboxTls {
                mode,
                ..MailboxTls::default()
            })
            .unwrap()
            .unwrap()
        };
        let required = with(MailboxTlsMode::Required);
        assert!(required.accept_invalid_certs());
        let ca = with(MailboxTlsMode::VerifyCa);
        assert!(!ca.accept_invalid_certs() && ca.skip_domain_validation());
        let full = with(MailboxTlsMode::VerifyIdentity);
        assert!(!full.accept_invalid_certs() && !full.skip_domain_validation());
        assert!(!full.disable_built_in_roots());
    }

    #[test]
    fn mode_names_parse_in_both_spellings() {
        for (text, mode) in [
            ("verify-identity", MailboxTlsMode::VerifyIdentity),
            ("VERIFY_IDENTITY", MailboxTlsMode::VerifyIdentity),
            ("verify-ca", MailboxTlsMode::VerifyCa),
            ("required", MailboxTlsMode::Required),
            ("disabled", MailboxTlsMode::Disabled),
        ] {
            let t: MailboxTls = toml::from_str(&format!("mode = {text:?}")).unwrap();
            assert_eq!(t.mode, mode);
        }
        assert!(toml::from_str::<MailboxTls>("mode = \"preferred\"").is_err());
    }
}
