//! The query parameters of `msgx.postgres.url`.
//!
//! sqlx ignores a parameter it does not know and logs it at WARN **with its
//! value**: a libpq-only `sslpassword=…` put its secret into the log, and the
//! connection silently went on without it. msgx refuses such a URL instead,
//! in `config check` and before sqlx sees it, and names only the parameter.

/// The parameters sqlx's PostgreSQL driver reads (sqlx-postgres 0.9
/// `options/parse.rs`), plus `options[NAME]`, and the two msgx reads itself
/// for host lists (`store::pg::hosts`; `host` and `port` may be lists).
pub const POSTGRES_URL_PARAMETERS: &[&str] = &[
    "target_session_attrs",
    "connect_timeout",
    "sslmode",
    "ssl-mode",
    "sslrootcert",
    "ssl-root-cert",
    "ssl-ca",
    "sslcert",
    "ssl-cert",
    "sslkey",
    "ssl-key",
    "statement-cache-capacity",
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "application_name",
    "options",
];

/// The parameters of `url` msgx would not pass on, decoded as the driver
/// decodes them, each cut to 64 characters and escaped (a mistyped key may
/// hold anything). Empty for a URL without a query or one that does not
/// parse as a query (the driver's own parse error reports that).
pub fn unknown_postgres_url_parameters(url: &str) -> Vec<String> {
    let Some((_, query)) = url.split_once('?') else {
        return Vec::new();
    };
    let query = query.split('#').next().unwrap_or_default();
    let Ok(pairs) = serde_urlencoded::from_str::<Vec<(String, String)>>(query) else {
        return Vec::new();
    };
    pairs
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| !known(k))
        .map(|k| {
            let cut: String = k.chars().take(64).collect();
            cut.escape_default().to_string()
        })
        .collect()
}

/// A parameter the driver reads.
fn known(key: &str) -> bool {
    POSTGRES_URL_PARAMETERS.contains(&key) || (key.starts_with("options[") && key.ends_with(']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_parameters_pass_and_unknown_ones_are_named_without_their_value() {
        let ok = "postgres://u:p@h/db?sslmode=verify-full&sslrootcert=/x&options[search_path]=a&application_name=m";
        assert!(unknown_postgres_url_parameters(ok).is_empty());
        let list = "postgres://u:p@h1:1,h2:2/db?target_session_attrs=read-write&connect_timeout=3&host=a,b&port=1,2";
        assert!(unknown_postgres_url_parameters(list).is_empty());
        assert!(unknown_postgres_url_parameters("postgres://u@h/db").is_empty());
        let bad = "postgres://u@h/db?sslmode=require&sslpassword=KEYPASS&ssl%70assword2=X#frag";
        assert_eq!(
            unknown_postgres_url_parameters(bad),
            ["sslpassword", "sslpassword2"]
        );
        let hostile = format!("postgres://h/db?{}%0A=1", "k".repeat(100));
        let named = unknown_postgres_url_parameters(&hostile);
        assert_eq!(named.len(), 1);
        assert!(
            named[0].len() <= 64 && !named[0].contains('\n'),
            "{named:?}"
        );
    }
}
