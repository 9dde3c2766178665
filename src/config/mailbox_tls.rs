//! Load-time rules for the mailbox TLS keys (`[msgx.mailbox.tls]` and the
//! mailbox URL): pure checks of the configuration, so `config check` needs no
//! store code (config imports nothing above it). The files are read
//! when the mailbox connects (`store::mailbox::tls`).

use super::{Mailbox as MailboxConfig, MailboxTlsMode};

/// The URL parameters by which mysql_async would configure TLS itself;
/// refused so `[msgx.mailbox.tls]` is the one place TLS is set.
const URL_TLS_PARAMS: &[&str] = &[
    "require_ssl",
    "verify_ca",
    "verify_identity",
    "built_in_roots",
];

/// The parameter names in the query of `url`.
pub fn url_params(url: &str) -> impl Iterator<Item = &str> {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    query
        .split('&')
        .filter_map(|kv| kv.split('=').next())
        .filter(|k| !k.is_empty())
}

/// The load-time rules for `[msgx.mailbox.tls]` and the URL: `(key, rule)`
/// per broken rule. Files are not read here (see [`ssl_opts`]).
pub fn mailbox_tls_issues(cfg: &MailboxConfig) -> Vec<(&'static str, String)> {
    let t = &cfg.tls;
    let mut issues = Vec::new();
    let in_url: Vec<&str> = url_params(&cfg.url)
        .filter(|k| URL_TLS_PARAMS.contains(k))
        .collect();
    if !in_url.is_empty() {
        issues.push((
            "msgx.mailbox.url",
            format!(
                "TLS is set in [msgx.mailbox.tls] (mode, ca-file, …), not with {} in the URL",
                in_url.join(", ")
            ),
        ));
    }
    if t.cert_file.is_some() != t.key_file.is_some() {
        issues.push((
            "msgx.mailbox.tls.cert-file",
            "cert-file and key-file are set together (a client certificate and its key)".into(),
        ));
    }
    let set: Vec<&str> = [
        ("ca-file", t.ca_file.is_some()),
        ("cert-file", t.cert_file.is_some()),
        ("key-file", t.key_file.is_some()),
        ("server-name", t.server_name.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, on)| on.then_some(k))
    .collect();
    match t.mode {
        MailboxTlsMode::Disabled if !set.is_empty() => issues.push((
            "msgx.mailbox.tls.mode",
            format!(
                "is disabled, so {} would be ignored: set mode = \"verify-identity\" (or verify-ca, \
                 required) to use TLS, or remove them",
                set.join(", ")
            ),
        )),
        MailboxTlsMode::Required if t.ca_file.is_some() || t.server_name.is_some() => {
            issues.push((
                "msgx.mailbox.tls.mode",
                "required encrypts without checking the server's certificate, so ca-file and \
                 server-name would be ignored: use verify-identity (or verify-ca)"
                    .into(),
            ))
        }
        _ => {}
    }
    if let Some(name) = &t.server_name
        && rustls::pki_types::ServerName::try_from(name.as_str()).is_err()
    {
        issues.push((
            "msgx.mailbox.tls.server-name",
            format!("{name:?} is not a DNS name or an IP address"),
        ));
    }
    issues
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issues(tweak: impl FnOnce(&mut MailboxConfig)) -> Vec<&'static str> {
        let mut cfg = MailboxConfig::default();
        tweak(&mut cfg);
        mailbox_tls_issues(&cfg)
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    #[test]
    fn the_defaults_are_plaintext_and_valid() {
        assert_eq!(issues(|_| {}), Vec::<&str>::new());
    }

    #[test]
    fn tls_in_the_url_is_refused() {
        assert_eq!(
            issues(|c| c.url = "mysql://u:p@h/db?require_ssl=true".into()),
            ["msgx.mailbox.url"]
        );
        assert_eq!(
            issues(|c| c.url = "mysql://u:p@h/db?pool_min=1&verify_ca=false".into()),
            ["msgx.mailbox.url"]
        );
    }

    #[test]
    fn files_without_a_tls_mode_are_refused() {
        assert_eq!(
            issues(|c| c.tls.ca_file = Some("/etc/ssl/ca.pem".into())),
            ["msgx.mailbox.tls.mode"]
        );
        assert_eq!(
            issues(|c| {
                c.tls.mode = MailboxTlsMode::Required;
                c.tls.ca_file = Some("/etc/ssl/ca.pem".into());
            }),
            ["msgx.mailbox.tls.mode"]
        );
    }

    #[test]
    fn client_certificate_and_key_go_together() {
        assert_eq!(
            issues(|c| {
                c.tls.mode = MailboxTlsMode::VerifyIdentity;
                c.tls.cert_file = Some("/etc/msgx/client.pem".into());
            }),
            ["msgx.mailbox.tls.cert-file"]
        );
    }

    #[test]
    fn server_name_must_be_a_name() {
        assert_eq!(
            issues(|c| {
                c.tls.mode = MailboxTlsMode::VerifyIdentity;
                c.tls.server_name = Some("not a name".into());
            }),
            ["msgx.mailbox.tls.server-name"]
        );
    }
}
