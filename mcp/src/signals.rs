//! The signals that end a long-running process (the MCP server, a session daemon):
//! SIGTERM, SIGINT and SIGHUP, watched together.
//!
//! Owns: [`Signals`]. Does not own what ending means (each front end's shutdown).

/// SIGTERM, SIGINT and SIGHUP (Ctrl-C elsewhere).
pub(crate) struct Signals {
    #[cfg(unix)]
    streams: Vec<tokio::signal::unix::Signal>,
}

impl Signals {
    pub(crate) fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let streams = [
                SignalKind::terminate(),
                SignalKind::interrupt(),
                SignalKind::hangup(),
            ]
            .into_iter()
            .filter_map(|kind| match signal(kind) {
                Ok(stream) => Some(stream),
                Err(err) => {
                    eprintln!("chromate: cannot watch a signal: {err}");
                    None
                }
            })
            .collect();
            Signals { streams }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    pub(crate) async fn recv(&mut self) {
        #[cfg(unix)]
        {
            if self.streams.is_empty() {
                return std::future::pending().await;
            }
            let futures: Vec<_> = self
                .streams
                .iter_mut()
                .map(|stream| Box::pin(stream.recv()))
                .collect();
            select_any(futures).await;
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Resolves when any of the futures resolves.
#[cfg(unix)]
async fn select_any<F: std::future::Future + Unpin>(mut futures: Vec<F>) {
    std::future::poll_fn(|cx| {
        for future in futures.iter_mut() {
            if std::pin::Pin::new(future).poll(cx).is_ready() {
                return std::task::Poll::Ready(());
            }
        }
        std::task::Poll::Pending
    })
    .await
}
