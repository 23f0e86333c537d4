//! The TLS test fixture: a throwaway certificate authority and a leaf for `127.0.0.1`, `::1`
//! and `localhost`, made at test time ([`TlsCert::generate`]), and the server side of TLS over
//! any accepted `TcpStream` ([`TlsCert::acceptor`], [`accept`], [`serve`]).
//!
//! Nothing is written to disk and nothing is trusted system-wide. A test's Chromium trusts the
//! leaf through its public key ([`TlsCert::chromium_arg`]:
//! `--ignore-certificate-errors-spki-list=<base64 sha256 of the leaf's SubjectPublicKeyInfo>`,
//! honoured because chromate always launches with its own `--user-data-dir`); a Rust or Node
//! client trusts [`TlsCert::ca_pem`]. The fixture HTTP server serves HTTPS with
//! [`crate::FixtureServer::start_detached_tls_serving`]; anything else (a wss:// proxy, say)
//! wraps its own accept loop with [`serve`] or [`accept`].
//!
//! Test and bench support only: rcgen and rustls (on ring) are dependencies of this crate,
//! never of the `chromate` binary.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose, PublicKeyData,
};
use sha2::Digest;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::rustls;
pub use tokio_rustls::server::TlsStream;
pub use tokio_rustls::TlsAcceptor;

/// How long a client may take over its TLS handshake before the connection is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A test CA and a leaf it signed, for `127.0.0.1`, `::1` and `localhost`.
#[derive(Clone)]
pub struct TlsCert {
    /// The CA's certificate, PEM: what a client that checks the chain trusts.
    pub ca_pem: String,
    /// The leaf's certificate, PEM.
    pub cert_pem: String,
    /// The leaf's private key, PKCS#8 PEM.
    pub key_pem: String,
    /// The leaf's certificate, DER.
    pub cert_der: Vec<u8>,
    /// The CA's certificate, DER.
    pub ca_der: Vec<u8>,
    /// The leaf's private key, PKCS#8 DER.
    pub key_der: Vec<u8>,
    /// Base64 of the sha256 of the leaf's SubjectPublicKeyInfo (Chromium's SPKI pin).
    pub spki_sha256_base64: String,
}

impl std::fmt::Debug for TlsCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsCert")
            .field("spki_sha256_base64", &self.spki_sha256_base64)
            .finish_non_exhaustive()
    }
}

/// `der` as PEM with the `label` (RFC 7468): base64 in lines of 64.
fn pem(label: &str, der: &[u8]) -> String {
    let text = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in text.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

fn tls_error(what: &str, err: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("tls fixture: {what}: {err}"))
}

impl TlsCert {
    /// A fresh CA and leaf (ECDSA P-256), valid from now for as long as rcgen's default.
    pub fn generate() -> io::Result<TlsCert> {
        let ca_key = KeyPair::generate().map_err(|err| tls_error("CA key", err))?;
        let mut ca_params =
            CertificateParams::new(Vec::<String>::new()).map_err(|err| tls_error("CA", err))?;
        let mut ca_name = DistinguishedName::new();
        ca_name.push(DnType::CommonName, "chromate test CA");
        ca_params.distinguished_name = ca_name;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = CertifiedIssuer::self_signed(ca_params, ca_key)
            .map_err(|err| tls_error("CA certificate", err))?;

        let leaf_key = KeyPair::generate().map_err(|err| tls_error("leaf key", err))?;
        let mut leaf_params = CertificateParams::new(vec![
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
            "localhost".to_owned(),
        ])
        .map_err(|err| tls_error("leaf", err))?;
        let mut leaf_name = DistinguishedName::new();
        leaf_name.push(DnType::CommonName, "127.0.0.1");
        leaf_params.distinguished_name = leaf_name;
        leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        leaf_params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let leaf = leaf_params
            .signed_by(&leaf_key, &ca)
            .map_err(|err| tls_error("leaf certificate", err))?;

        let spki = sha2::Sha256::digest(leaf_key.subject_public_key_info());
        Ok(TlsCert {
            ca_pem: pem("CERTIFICATE", ca.der()),
            ca_der: ca.der().to_vec(),
            cert_pem: pem("CERTIFICATE", leaf.der()),
            cert_der: leaf.der().to_vec(),
            key_pem: pem("PRIVATE KEY", &leaf_key.serialize_der()),
            key_der: leaf_key.serialize_der(),
            spki_sha256_base64: base64::engine::general_purpose::STANDARD.encode(spki),
        })
    }

    /// The Chromium flag that makes a browser accept this leaf:
    /// `--ignore-certificate-errors-spki-list=<spki_sha256_base64>`.
    pub fn chromium_arg(&self) -> String {
        format!(
            "--ignore-certificate-errors-spki-list={}",
            self.spki_sha256_base64
        )
    }

    /// A rustls server configuration presenting the leaf and the CA (HTTP/1.1 by ALPN).
    pub fn server_config(&self) -> io::Result<rustls::ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = vec![
            rustls::pki_types::CertificateDer::from(self.cert_der.clone()),
            rustls::pki_types::CertificateDer::from(self.ca_der.clone()),
        ];
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(
            rustls::pki_types::PrivatePkcs8KeyDer::from(self.key_der.clone()),
        );
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|err| tls_error("protocol versions", err))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|err| tls_error("server certificate", err))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }

    /// The acceptor for [`accept`] and [`serve`].
    pub fn acceptor(&self) -> io::Result<TlsAcceptor> {
        Ok(TlsAcceptor::from(Arc::new(self.server_config()?)))
    }
}

/// The server side of a TLS handshake on an accepted connection, bounded by
/// [`HANDSHAKE_TIMEOUT`].
pub async fn accept(acceptor: &TlsAcceptor, stream: TcpStream) -> io::Result<TlsStream<TcpStream>> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(result) => result,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "tls fixture: the client did not finish its handshake",
        )),
    }
}

/// Accepts connections on `listener` until the returned task is aborted (or dropped with its
/// runtime), completes each one's TLS handshake and hands the stream to `handler`, every
/// connection in a task the loop owns (aborting the loop ends them all). A failed handshake
/// drops that connection only.
pub fn serve<F, Fut>(listener: TcpListener, acceptor: TlsAcceptor, handler: F) -> JoinHandle<()>
where
    F: Fn(TlsStream<TcpStream>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let handler = Arc::new(handler);
    tokio::spawn(async move {
        let mut connections = JoinSet::new();
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                Some(_) = connections.join_next() => continue,
            };
            let Ok((stream, _)) = accepted else {
                tokio::task::yield_now().await;
                continue;
            };
            let acceptor = acceptor.clone();
            let handler = Arc::clone(&handler);
            connections.spawn(async move {
                if let Ok(stream) = accept(&acceptor, stream).await {
                    handler(stream).await;
                }
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_rustls::rustls;

    use super::TlsCert;

    /// A client that trusts only the test CA gets the fixture page over HTTPS.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_client_trusting_the_ca_gets_a_page_over_https() {
        let cert = TlsCert::generate().expect("generate");
        assert_eq!(cert.spki_sha256_base64.len(), 44, "base64 of 32 bytes");
        assert!(cert.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(cert.key_pem.contains("PRIVATE KEY"));
        let server =
            crate::FixtureServer::start_detached_tls_serving(crate::server::pages_dir(), &cert)
                .expect("start");
        assert!(server.origin().starts_with("https://127.0.0.1:"));
        server.route("/hello", |_| crate::Response::text("hello over tls"));

        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(rustls::pki_types::CertificateDer::from(cert.ca_der.clone()))
            .expect("root");
        let mut tls = handshake(roots, server.port()).await.expect("handshake");
        tls.write_all(b"GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .await
            .expect("write");
        let mut answer = String::new();
        tls.read_to_string(&mut answer).await.expect("read");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("hello over tls"), "{answer}");
        assert_eq!(server.request_count("/hello"), 1);
    }

    /// A TLS client trusting only `roots`, connected to 127.0.0.1:`port`.
    async fn handshake(
        roots: rustls::RootCertStore,
        port: u16,
    ) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("name");
        connector.connect(name, tcp).await
    }

    /// A client without the CA is refused at the handshake: the leaf is not trusted by accident.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_client_without_the_ca_fails_the_handshake() {
        let cert = TlsCert::generate().expect("generate");
        let server =
            crate::FixtureServer::start_detached_tls_serving(crate::server::pages_dir(), &cert)
                .expect("start");
        assert!(handshake(rustls::RootCertStore::empty(), server.port())
            .await
            .is_err());
        assert_eq!(server.requests(), Vec::<String>::new());
    }
}
