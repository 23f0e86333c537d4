//! The `--remote-debugging-pipe` transport: the browser reads commands from its fd 3 and
//! writes answers and events to its fd 4, each message followed by a NUL byte.

use std::os::fd::OwnedFd;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::sync::mpsc;

use super::Connection;

/// Our ends of the two pipes: we write commands to `to_browser`, read from `from_browser`.
pub(crate) struct PipeEnds {
    pub(crate) to_browser: OwnedFd,
    pub(crate) from_browser: OwnedFd,
}

pub(super) fn spawn(
    ends: PipeEnds,
    conn: Connection,
    mut outgoing: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    let writer = pipe::Sender::from_owned_fd(ends.to_browser);
    let reader = pipe::Receiver::from_owned_fd(ends.from_browser);
    let (mut writer, mut reader) = match (writer, reader) {
        (Ok(writer), Ok(reader)) => (writer, reader),
        (Err(err), _) | (_, Err(err)) => {
            conn.close(&format!("cannot use the browser pipes: {err}"));
            return;
        }
    };
    let write_conn = conn.clone();
    crate::rt::spawn(async move {
        while let Some(mut frame) = outgoing.recv().await {
            frame.push(0);
            if let Err(err) = writer.write_all(&frame).await {
                write_conn.close(&format!("writing to the browser pipe failed: {err}"));
                break;
            }
        }
    });
    crate::rt::spawn(async move {
        let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
        let mut chunk = vec![0u8; 64 * 1024];
        let mut scanned = 0;
        loop {
            let n_read = match reader.read(&mut chunk).await {
                Ok(0) => {
                    conn.close("the browser closed its pipe (process exited or crashed)");
                    break;
                }
                Ok(n) => n,
                Err(err) => {
                    conn.close(&format!("reading the browser pipe failed: {err}"));
                    break;
                }
            };
            buf.extend_from_slice(&chunk[..n_read]);
            let mut start = 0;
            while let Some(pos) = memchr(&buf[scanned..], 0) {
                let end = scanned + pos;
                conn.dispatch(&buf[start..end]);
                start = end + 1;
                scanned = start;
            }
            buf.drain(..start);
            scanned = buf.len();
        }
    });
}

fn memchr(haystack: &[u8], needle: u8) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}
