//! TLS plumbing shared by the PostgreSQL and mailbox connections
//! (docs/production/databases.md).
//!
//! - [`init`] installs rustls' ring provider as the process default. sqlx
//!   picks its provider itself, but mysql_async (and anything else calling
//!   `rustls::ClientConfig::builder()`) panics with "no process-level
//!   CryptoProvider" when the build enables more than one provider and none
//!   was installed. Every connect path calls it, so no entry point can miss it.
//! - [`read_certs`] / [`read_key`] check a configured PEM file before the
//!   first connection, so a missing or unreadable file is an error naming the
//!   setting and the path (the drivers read them at handshake time and report
//!   only "No such file or directory").
//! - [`describe_failure`] turns a handshake error buried in a driver error
//!   into words an operator can act on.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};

/// Installs the ring `CryptoProvider` process-wide; idempotent, never panics
/// (an already installed provider is kept).
pub fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A TLS file named in the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{setting} = {}: {problem}", path.display())]
pub struct FileError {
    /// The setting that names the file (`sslrootcert`, `msgx.mailbox.tls.ca-file`, …).
    pub setting: String,
    pub path: PathBuf,
    pub problem: String,
}

fn read(setting: &str, path: &Path) -> Result<Vec<u8>, FileError> {
    std::fs::read(path).map_err(|e| FileError {
        setting: setting.to_string(),
        path: path.to_path_buf(),
        problem: format!("cannot read it: {e}"),
    })
}

/// Reads a PEM file of one or more certificates (a CA bundle, a client
/// certificate chain). The bytes are returned as read.
pub fn read_certs(setting: &str, path: &Path) -> Result<Vec<u8>, FileError> {
    let data = read(setting, path)?;
    let problem = |problem: String| FileError {
        setting: setting.to_string(),
        path: path.to_path_buf(),
        problem,
    };
    let mut count = 0;
    for cert in CertificateDer::pem_slice_iter(&data) {
        cert.map_err(|e| problem(format!("not a valid PEM certificate file: {e}")))?;
        count += 1;
    }
    if count == 0 {
        return Err(problem(
            "contains no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
        ));
    }
    Ok(data)
}

/// Reads a PEM private key (PKCS#8, PKCS#1 or SEC1). The bytes are returned
/// as read.
pub fn read_key(setting: &str, path: &Path) -> Result<Vec<u8>, FileError> {
    let data = read(setting, path)?;
    PrivateKeyDer::from_pem_slice(&data).map_err(|e| FileError {
        setting: setting.to_string(),
        path: path.to_path_buf(),
        problem: format!("contains no usable PEM private key: {e}"),
    })?;
    Ok(data)
}

/// The rustls error somewhere in `err`'s chain, looking inside `io::Error`s
/// too (their `source()` skips the wrapped error, and both drivers wrap
/// handshake failures in one).
fn find_rustls<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut next = Some(err);
    while let Some(e) = next {
        if let Some(r) = e.downcast_ref::<rustls::Error>() {
            return Some(r);
        }
        if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            && let Some(r) = find_rustls(inner)
        {
            return Some(r);
        }
        next = e.source();
    }
    None
}

/// What went wrong in a TLS handshake, in words, or `None` when `err` holds
/// no TLS error. Certificate failures say "certificate verification failed".
pub fn describe_failure(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    use rustls::CertificateError as C;
    let tls = find_rustls(err)?;
    Some(match tls {
        rustls::Error::InvalidCertificate(C::UnknownIssuer) => format!(
            "certificate verification failed: the server's certificate is not signed by a trusted CA \
             (check the CA file; {tls})"
        ),
        rustls::Error::InvalidCertificate(
            C::NotValidForName | C::NotValidForNameContext { .. },
        ) => {
            format!(
                "certificate verification failed: the server's certificate does not name the host \
                 connected to ({tls})"
            )
        }
        rustls::Error::InvalidCertificate(_) => format!("certificate verification failed: {tls}"),
        rustls::Error::AlertReceived(alert) => format!(
            "the server refused the TLS handshake ({alert:?}); if it requires a client \
             certificate, configure one signed by a CA the server trusts"
        ),
        other => format!("TLS handshake failed: {other}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_is_idempotent_and_installs_a_provider() {
        init();
        init();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }

    #[test]
    fn certificate_failures_are_named_through_io_errors() {
        let wrapped = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        );
        let text = describe_failure(&wrapped).expect("a TLS failure");
        assert!(
            text.starts_with("certificate verification failed"),
            "{text}"
        );
        assert!(text.contains("not signed by a trusted CA"), "{text}");
        let plain = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(describe_failure(&plain), None);
    }

    #[test]
    fn files_are_checked_with_the_setting_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.pem");
        let e = read_certs("ca-file", &missing).unwrap_err().to_string();
        assert!(
            e.starts_with("ca-file = ") && e.contains("cannot read it"),
            "{e}"
        );
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let e = read_certs("ca-file", &junk).unwrap_err().to_string();
        assert!(e.contains("contains no PEM certificate"), "{e}");
        let e = read_key("key-file", &junk).unwrap_err().to_string();
        assert!(e.contains("no usable PEM private key"), "{e}");
    }
}
