//! TLS: a certificate authority and a server certificate generated at every start, and the CA
//! written as a PEM file that clients can trust.
//!
//! A separate CA (rather than one self-signed leaf) is what every TLS stack accepts as a trust
//! root: curl, OpenSSL, rustls/webpki and browsers all agree on it. The server certificate names
//! `localhost`, `127.0.0.1`, `::1`, and the listen address when it is a specific one.

use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::ServerConfig;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

/// TLS could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct TlsError(String);

/// The freshly generated credentials: the acceptor for the server, the CA for clients.
pub(crate) struct GeneratedTls {
    pub(crate) acceptor: TlsAcceptor,
    pub(crate) ca_pem: String,
}

/// Generates a CA and a server certificate for `listen_ip`, and a rustls acceptor that offers
/// HTTP/2 and HTTP/1.1 by ALPN.
pub(crate) fn generate(listen_ip: IpAddr) -> Result<GeneratedTls, TlsError> {
    let err = |e: rcgen::Error| TlsError(format!("cannot generate a certificate: {e}"));

    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "svc-emulator local CA");
    let ca =
        CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(err)?).map_err(err)?;

    let mut names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    if !listen_ip.is_unspecified() && !listen_ip.is_loopback() {
        names.push(listen_ip.to_string());
    }
    let mut leaf_params = CertificateParams::new(names).map_err(err)?;
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "svc-emulator");
    leaf_params.is_ca = IsCa::ExplicitNoCa;
    leaf_params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_key = KeyPair::generate().map_err(err)?;
    let leaf = leaf_params.signed_by(&leaf_key, &*ca).map_err(err)?;

    let chain = vec![leaf.der().clone(), ca.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError(format!("TLS configuration: {e}")))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| TlsError(format!("TLS configuration: {e}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(GeneratedTls {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        ca_pem: ca.pem(),
    })
}

/// The CA's PEM, written to a file; a temporary file is removed when this is dropped.
pub(crate) struct CaFile {
    path: PathBuf,
    pem: Vec<u8>,
    remove_on_drop: bool,
}

impl CaFile {
    /// Writes `pem` beside the data file (`<data file>.ca.pem`), or to a new temporary file
    /// when there is no data path. Blocking.
    pub(crate) fn write(pem: String, data_path: Option<&Path>) -> Result<Self, TlsError> {
        let pem = pem.into_bytes();
        let io_err = |path: &Path, e: std::io::Error| {
            TlsError(format!(
                "cannot write the CA certificate to {}: {e}",
                path.display()
            ))
        };
        match data_path {
            Some(data) => {
                let mut name = data.file_name().unwrap_or_default().to_os_string();
                name.push(".ca.pem");
                let path = data.with_file_name(name);
                // Written whole beside the data, then renamed into place: a link planted under
                // its name is replaced, never followed to overwrite another file.
                let temp = data.with_file_name(format!(
                    ".{}.{}.tmp",
                    path.file_name().unwrap_or_default().to_string_lossy(),
                    uuid::Uuid::new_v4().simple()
                ));
                let written = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&temp)
                    .and_then(|mut file| std::io::Write::write_all(&mut file, &pem))
                    .and_then(|()| std::fs::rename(&temp, &path));
                if let Err(e) = written {
                    let _ = std::fs::remove_file(&temp);
                    return Err(io_err(&path, e));
                }
                Ok(Self {
                    path,
                    pem,
                    remove_on_drop: false,
                })
            }
            None => {
                let path = std::env::temp_dir().join(format!(
                    "svc-emulator-{}.ca.pem",
                    uuid::Uuid::new_v4().simple()
                ));
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)
                    .map_err(|e| io_err(&path, e))?;
                std::io::Write::write_all(&mut file, &pem).map_err(|e| io_err(&path, e))?;
                Ok(Self {
                    path,
                    pem,
                    remove_on_drop: true,
                })
            }
        }
    }

    /// Where the PEM file is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The PEM text.
    pub(crate) fn pem(&self) -> &[u8] {
        &self.pem
    }
}

impl Drop for CaFile {
    fn drop(&mut self) {
        if self.remove_on_drop {
            // Nothing useful can be done if it is already gone.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl fmt::Debug for CaFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaFile")
            .field("path", &self.path)
            .field("temporary", &self.remove_on_drop)
            .finish()
    }
}

impl fmt::Debug for GeneratedTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GeneratedTls").finish_non_exhaustive()
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_ca_file_replaces_a_link_in_its_place_and_never_follows_it() {
        let dir = std::env::temp_dir().join(format!("svc-ca-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let data = dir.join("emulator.sqlite3");
        std::os::unix::fs::symlink(&victim, dir.join("emulator.sqlite3.ca.pem")).unwrap();
        let ca = CaFile::write("PEM".to_owned(), Some(&data)).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        let meta = std::fs::symlink_metadata(ca.path()).unwrap();
        assert!(meta.is_file(), "the link is replaced by the file");
        assert_eq!(std::fs::read_to_string(ca.path()).unwrap(), "PEM");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            2,
            "no temporary file left"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
