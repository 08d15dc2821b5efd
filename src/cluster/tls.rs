//! Mutual TLS for the cluster: every connection between the client, the scheduler and the
//! executors is TLS 1.2+, and each side must show a certificate signed by the cluster's CA.
//! Ballista builds its own gRPC clients (they get an endpoint override that adds the identity);
//! its servers are served here through an acceptor that logs every connection it refuses.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use ballista_core::extension::EndpointOverrideFn;
use ballista_core::utils::{GrpcClientConfig, create_grpc_client_endpoint};
use futures::Stream;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

/// The name every member's certificate carries and every client verifies: membership in the
/// cluster is a certificate from its CA, whatever address a member is reached at.
pub(crate) const SERVER_NAME: &str = "dj-fusion-cluster";

/// How long a connection may take to complete its TLS handshake before it is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// One member's credentials: the directory `dj-cluster certs` writes for it (`ca.pem`,
/// `cert.pem`, `key.pem`).
pub(crate) struct ClusterTls {
    dir: PathBuf,
    /// Built once, at load: what this member serves with and calls with.
    server: Arc<rustls::ServerConfig>,
    client: ClientTlsConfig,
}

impl std::fmt::Debug for ClusterTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterTls")
            .field("dir", &self.dir)
            .finish()
    }
}

fn read_pem(dir: &Path, name: &str, what: &str) -> Result<String> {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("--tls {}: cannot read {}", dir.display(), path.display()))?;
    let found = match name {
        "key.pem" => PrivateKeyDer::from_pem_slice(text.as_bytes()).is_ok(),
        _ => CertificateDer::pem_slice_iter(text.as_bytes()).any(|c| c.is_ok()),
    };
    if !found {
        bail!("{} holds no PEM {what}", path.display());
    }
    Ok(text)
}

impl ClusterTls {
    /// Reads a member's credentials from `dir`, and checks that its certificate and key match.
    pub(crate) fn load(dir: &Path) -> Result<Self> {
        let ca = read_pem(dir, "ca.pem", "certificate (the cluster's CA)")?;
        let cert = read_pem(dir, "cert.pem", "certificate")?;
        let key = read_pem(dir, "key.pem", "private key")?;
        let server = server_config(dir, &ca, &cert, &key)?;
        let client = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(&ca))
            .identity(Identity::from_pem(&cert, &key))
            .domain_name(SERVER_NAME);
        Ok(ClusterTls {
            dir: dir.to_path_buf(),
            server,
            client,
        })
    }

    /// The server side: this member's certificate, and a client certificate from the CA
    /// required of every caller.
    pub(crate) fn server_config(&self) -> Arc<rustls::ServerConfig> {
        self.server.clone()
    }

    /// A TLS endpoint for `address` (`host:port`), with Ballista's default client settings.
    pub(crate) fn endpoint(&self, address: &str) -> Result<Endpoint> {
        let endpoint = create_grpc_client_endpoint(
            format!("https://{address}"),
            Some(&GrpcClientConfig::default()),
        )
        .with_context(|| format!("`{address}` is not an address"))?;
        Ok(endpoint.tls_config(self.client.clone())?)
    }

    /// Rewrites every endpoint Ballista makes (to the scheduler, to executors' Flight
    /// services) to TLS with this member's identity. Ballista writes `http://` URLs in places
    /// that ignore its `use_tls` setting, so the scheme is rewritten here.
    pub(crate) fn endpoint_override(self: &Arc<Self>) -> EndpointOverrideFn {
        let tls = self.clone();
        Arc::new(move |endpoint: Endpoint| {
            let uri = endpoint.uri();
            let authority = uri
                .authority()
                .ok_or_else(|| format!("endpoint `{uri}` has no host"))?;
            Ok(tls
                .endpoint(authority.as_str())
                .map_err(|e| format!("{e:#}"))?)
        })
    }
}

fn certs(pem: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .filter_map(|c| c.ok())
        .collect()
}

/// The server config of the member whose PEM texts (from `dir`) these are; errors name the
/// file at fault.
fn server_config(dir: &Path, ca: &str, cert: &str, key: &str) -> Result<Arc<rustls::ServerConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(ca.as_bytes()) {
        roots
            .add(ca?)
            .with_context(|| format!("{}/ca.pem: not a CA certificate", dir.display()))?;
    }
    let verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider.clone())
            .build()
            .with_context(|| format!("{}/ca.pem", dir.display()))?;
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes())
        .with_context(|| format!("{}/key.pem", dir.display()))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs(cert), key)
        .with_context(|| {
            format!(
                "{}: cert.pem and key.pem do not make an identity",
                dir.display()
            )
        })?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}

/// Connections accepted on `listener` that completed a TLS handshake with a certificate from
/// the CA. Handshakes run concurrently, so a slow or silent peer holds up no one; each refusal
/// is logged as a warning naming the peer and `role`.
pub(crate) fn incoming(
    listener: TcpListener,
    config: Arc<rustls::ServerConfig>,
    role: &'static str,
) -> impl Stream<Item = io::Result<TlsStream<TcpStream>>> {
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let acceptor = TlsAcceptor::from(config);
    tokio::spawn(async move {
        while !tx.is_closed() {
            let (tcp, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("{role}: cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let _ = tcp.set_nodelay(true);
            let (acceptor, tx) = (acceptor.clone(), tx.clone());
            tokio::spawn(async move {
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                    Ok(Ok(stream)) => {
                        let _ = tx.send(Ok(stream)).await;
                    }
                    Ok(Err(e)) => tracing::warn!(
                        %peer,
                        "{role}: refused a connection from {peer}: {} (the cluster requires TLS \
                         with a client certificate from its CA)",
                        refusal(&e)
                    ),
                    Err(_) => tracing::warn!(
                        %peer,
                        "{role}: refused a connection from {peer}: no TLS handshake within {} s",
                        HANDSHAKE_TIMEOUT.as_secs()
                    ),
                }
            });
        }
    });
    futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
}

/// Why a handshake failed, in the words a cluster operator needs.
fn refusal(e: &io::Error) -> String {
    let text = e.to_string();
    if text.contains("corrupt message") || text.contains("InvalidContentType") {
        "it does not speak TLS".to_string()
    } else if text.contains("handshake eof") {
        "it closed the connection before completing a TLS handshake".to_string()
    } else if text.contains("received fatal alert") {
        format!("it refused this member's certificate ({text}): it trusts another CA")
    } else if text.contains("no certificates") {
        "it showed no client certificate".to_string()
    } else if text.contains("UnknownIssuer") || text.contains("BadSignature") {
        "its certificate is not from this cluster's CA".to_string()
    } else {
        text
    }
}

/// Writes credentials to `out`: the CA (`ca.pem`, `ca.key`; made unless both exist, then
/// reused) and, for each name, `out/NAME/{ca.pem,cert.pem,key.pem}`, valid for `days` days.
/// Existing member directories are refused rather than overwritten.
pub(crate) fn generate(out: &Path, names: &[String], days: u32) -> Result<Vec<PathBuf>> {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
        KeyPair, KeyUsagePurpose,
    };
    if names.is_empty() {
        bail!("name at least one member (--name scheduler --name executor-1 --name client)");
    }
    for name in names {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
            || name.starts_with('.')
        {
            bail!("member name `{name}`: use letters, digits, '-', '_' and '.' only");
        }
        if out.join(name).exists() {
            bail!(
                "{} exists: refusing to overwrite a member's credentials",
                out.join(name).display()
            );
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let validity = |params: &mut CertificateParams| {
        use chrono::Datelike;
        let now = chrono::Utc::now().date_naive();
        let end = now + chrono::Days::new(u64::from(days));
        params.not_before = rcgen::date_time_ymd(now.year(), now.month() as u8, now.day() as u8);
        params.not_after = rcgen::date_time_ymd(end.year(), end.month() as u8, end.day() as u8);
    };
    // The CA's parameters are rebuilt the same way each time, so a reused CA issues
    // certificates with the same issuer name.
    let mut ca_params = CertificateParams::default();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "dj-fusion cluster CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    validity(&mut ca_params);
    let (ca_pem_path, ca_key_path) = (out.join("ca.pem"), out.join("ca.key"));
    let (ca_pem, ca_key) = if ca_pem_path.is_file() && ca_key_path.is_file() {
        let key = std::fs::read_to_string(&ca_key_path)
            .with_context(|| format!("cannot read {}", ca_key_path.display()))?;
        let key = KeyPair::from_pem(&key)
            .with_context(|| format!("{}: not a private key", ca_key_path.display()))?;
        let pem = std::fs::read_to_string(&ca_pem_path)
            .with_context(|| format!("cannot read {}", ca_pem_path.display()))?;
        (pem, key)
    } else {
        let key = KeyPair::generate()?;
        let cert = ca_params.self_signed(&key)?;
        write_private(&ca_key_path, &key.serialize_pem())?;
        crate::job::write_atomic(&ca_pem_path, cert.pem().as_bytes())?;
        (cert.pem(), key)
    };
    let issuer = Issuer::new(ca_params, ca_key);
    let mut written = Vec::new();
    for name in names {
        let mut params = CertificateParams::new(vec![SERVER_NAME.to_string(), name.clone()])?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        validity(&mut params);
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &issuer)?;
        let dir = out.join(name);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        crate::job::write_atomic(&dir.join("ca.pem"), ca_pem.as_bytes())?;
        crate::job::write_atomic(&dir.join("cert.pem"), cert.pem().as_bytes())?;
        write_private(&dir.join("key.pem"), &key.serialize_pem())?;
        written.push(dir);
    }
    Ok(written)
}

/// Writes a private key readable by its owner only, atomically (the temporary file is made
/// owner-only before the key goes in).
fn write_private(path: &Path, pem: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let write = || -> io::Result<()> {
        let (atomic, mut file) = dj_plans::atomic::AtomicFile::create(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(pem.as_bytes())?;
        atomic.commit(file)
    };
    write().with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pem(path: PathBuf) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    /// A TLS handshake in memory: the member whose credentials are in `client` (trusting the
    /// CA in `ca`) calls `server`.
    async fn handshake(server: &ClusterTls, client: &Path, ca: &Path) -> io::Result<()> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        for ca in CertificateDer::pem_slice_iter(pem(ca.join("ca.pem")).as_bytes()) {
            roots.add(ca.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_client_auth_cert(
                certs(&pem(client.join("cert.pem"))),
                PrivateKeyDer::from_pem_slice(pem(client.join("key.pem")).as_bytes()).unwrap(),
            )
            .unwrap();
        let (a, b) = tokio::io::duplex(1 << 16);
        let acceptor = TlsAcceptor::from(server.server_config());
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let name = rustls::pki_types::ServerName::try_from(SERVER_NAME).unwrap();
        let (served, called) = tokio::join!(acceptor.accept(a), connector.connect(name, b));
        // TLS 1.3 clients finish before the server has checked their certificate.
        served.map(|_| ()).and(called.map(|_| ()))
    }

    #[tokio::test]
    async fn members_of_one_ca_authenticate_each_other_and_strangers_fail() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours");
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        generate(&ours, &names(&["scheduler", "client"]), 30).unwrap();
        // A second batch reuses the CA: its members are members too.
        generate(&ours, &names(&["executor-1"]), 30).unwrap();
        let load = |d: &Path| ClusterTls::load(d).unwrap();
        let scheduler = load(&ours.join("scheduler"));
        let client = ours.join("client");
        handshake(&scheduler, &client, &client).await.unwrap();
        let scheduler_dir = ours.join("scheduler");
        handshake(
            &load(&ours.join("executor-1")),
            &scheduler_dir,
            &scheduler_dir,
        )
        .await
        .unwrap();
        // Another CA's member is refused, even knowing our CA's certificate.
        let theirs = dir.path().join("theirs");
        generate(&theirs, &names(&["stranger"]), 30).unwrap();
        let e = handshake(&scheduler, &theirs.join("stranger"), &client)
            .await
            .unwrap_err();
        assert_eq!(refusal(&e), "its certificate is not from this cluster's CA");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for key in [ours.join("ca.key"), ours.join("client/key.pem")] {
                let mode = std::fs::metadata(&key).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o600, "{}", key.display());
            }
        }
    }

    #[test]
    fn generating_refuses_overwrites_and_odd_names() {
        let dir = tempfile::tempdir().unwrap();
        let one = |n: &str| vec![n.to_string()];
        generate(dir.path(), &one("client"), 30).unwrap();
        let key = std::fs::read(dir.path().join("client/key.pem")).unwrap();
        let e = generate(dir.path(), &one("client"), 30).unwrap_err();
        assert!(e.to_string().contains("refusing to overwrite"), "{e}");
        assert_eq!(
            std::fs::read(dir.path().join("client/key.pem")).unwrap(),
            key
        );
        for bad in ["", "../x", "a/b", ".hidden", "has space"] {
            let e = generate(dir.path(), &one(bad), 30).unwrap_err();
            assert!(e.to_string().contains("member name"), "{bad}: {e}");
        }
        assert!(generate(dir.path(), &[], 30).is_err());
    }

    #[test]
    fn loading_names_the_file_at_fault() {
        let dir = tempfile::tempdir().unwrap();
        let names = vec!["a".to_string(), "b".to_string()];
        generate(dir.path(), &names, 30).unwrap();
        let a = dir.path().join("a");
        let err = |d: &Path| format!("{:#}", ClusterTls::load(d).unwrap_err());
        let missing = dir.path().join("nope");
        assert!(err(&missing).contains("nope/ca.pem"), "{}", err(&missing));
        std::fs::write(a.join("cert.pem"), "not a certificate").unwrap();
        assert!(
            err(&a).ends_with("a/cert.pem holds no PEM certificate"),
            "{}",
            err(&a)
        );
        // b's certificate with a's key.
        std::fs::copy(dir.path().join("b/cert.pem"), a.join("cert.pem")).unwrap();
        assert!(
            err(&a).contains("cert.pem and key.pem do not make an identity"),
            "{}",
            err(&a)
        );
    }
}
