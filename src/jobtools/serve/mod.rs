//! `dj-job serve`: a live dashboard of every job under a work directory, local or `s3://`. One
//! page (embedded in the binary: no CDN, no build step) polls a small JSON API that reads only
//! the job directories, as `dj-job monitor` does: nothing is kept beside them, so the page
//! follows a job through kills, resumes and cluster runs.
//!
//! Security: loopback by default; any other address needs a token, which every request must then
//! carry. A stop is a POST with the page's CSRF token (and a same-origin `Origin`, when sent).

mod api;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};

/// What every request handler shares.
pub(super) struct Dashboard {
    /// The directory holding the job directories, or an `s3://` URL.
    work_dir: PathBuf,
    token: Option<String>,
    /// Required in the `X-CSRF-Token` header of a stop: only the page knows it.
    csrf: String,
}

/// `dj-job --work_dir D serve`: serves until Ctrl+C or SIGTERM.
pub(super) fn serve_main(work_dir: &Path, bind: &str, token: Option<String>) -> Result<()> {
    let addr: SocketAddr = bind
        .parse()
        .with_context(|| format!("--bind {bind:?}: expected an address like 127.0.0.1:8265"))?;
    if !addr.ip().is_loopback() && token.is_none() {
        bail!(
            "--bind {addr} is not a loopback address: give --token (or DJ_DASHBOARD_TOKEN), which \
             every request must then carry"
        );
    }
    if super::dir::remote_work_dir(work_dir).is_none() && !work_dir.is_dir() {
        bail!("work directory not found: {}", work_dir.display());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let local = listener.local_addr()?;
        let dashboard = Arc::new(Dashboard {
            work_dir: work_dir.to_path_buf(),
            token,
            csrf: random_hex(),
        });
        // Scripts (and the tests) read the address from this line.
        println!("dj-job serve: listening on http://{local}/");
        let shutdown = async {
            let term = async {
                use tokio::signal::unix::{SignalKind, signal};
                match signal(SignalKind::terminate()) {
                    Ok(mut t) => {
                        t.recv().await;
                    }
                    Err(_) => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term => {}
            }
        };
        axum::serve(listener, router(dashboard))
            .with_graceful_shutdown(shutdown)
            .await
            .context("the dashboard's server failed")
    })
}

fn router(dashboard: Arc<Dashboard>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/jobs", get(api::jobs))
        .route("/api/jobs/{id}", get(api::job))
        .route("/api/jobs/{id}/events", get(api::events))
        .route("/api/jobs/{id}/stop", post(api::stop))
        .layer(from_fn_with_state(dashboard.clone(), require_token))
        // A job of 100 partitions x 20 ops is about 1.4 MB of JSON, a tenth of that gzipped.
        .layer(tower_http::compression::CompressionLayer::new())
        .with_state(dashboard)
}

/// The page, with this server's CSRF token in it.
async fn page(State(d): State<Arc<Dashboard>>) -> Response {
    let html = include_str!("page.html").replace("{{CSRF}}", &d.csrf);
    let mut r = Html(html).into_response();
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, "no-store".parse().unwrap());
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
         img-src data:; connect-src 'self'; frame-ancestors 'none'"
            .parse()
            .unwrap(),
    );
    r
}

/// Refuses a request without the token, when the server has one.
async fn require_token(State(d): State<Arc<Dashboard>>, req: Request, next: Next) -> Response {
    if let Some(token) = &d.token
        && !carries_token(req.headers(), req.uri().query(), token)
    {
        tracing::warn!(
            path = req.uri().path(),
            "dj-job serve: refused a request without the dashboard token"
        );
        return api::error(StatusCode::UNAUTHORIZED, "this dashboard needs its token");
    }
    next.run(req).await
}

/// Whether the request carries `token`: `Authorization: Bearer TOKEN` or `token=TOKEN` in the
/// query. Compared in constant time.
fn carries_token(headers: &HeaderMap, query: Option<&str>, token: &str) -> bool {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let in_query = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|kv| kv.strip_prefix("token="));
    [bearer, in_query]
        .into_iter()
        .flatten()
        .any(|given| same_secret(&percent_decode(given), token))
}

fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// `%XX` escapes decoded (a token in a URL may carry them); anything malformed stays as it is.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|c| hex(*c)),
            b.get(i + 2).and_then(|c| hex(*c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// 128 random bits as hex, from the OS (the std hasher's random keys).
fn random_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    let word = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.finish()
    };
    format!("{:016x}{:016x}", word(), word())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_come_from_the_header_or_the_query() {
        let mut h = HeaderMap::new();
        assert!(!carries_token(&h, None, "s3cret"));
        assert!(carries_token(&h, Some("a=1&token=s3cret"), "s3cret"));
        assert!(!carries_token(&h, Some("token=s3cre"), "s3cret"));
        assert!(carries_token(&h, Some("token=a%2Bb"), "a+b"));
        h.insert(header::AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        assert!(carries_token(&h, None, "s3cret"));
        assert!(!carries_token(&h, None, "other"));
    }

    #[test]
    fn csrf_tokens_differ() {
        let (a, b) = (random_hex(), random_hex());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
