//! Screencasts: the frames a page's compositor produces, as JPEGs with their times, recorded
//! from `Page.startScreencast` until [`Screencast::stop`].
//!
//! A background task subscribes to `Page.screencastFrame` before the screencast starts, keeps
//! each frame (up to a byte budget, then counts the ones it drops) and acknowledges it, which
//! is what makes the browser send the next one. The browser sends a frame when the page
//! changes, so a page that holds still yields few. This module does not encode video: callers
//! turn the frames into a file (chromate's flows do it with ffmpeg).

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::oneshot;

use crate::cdp::page as cdp_page;
use crate::error::Result;
use crate::Page;

/// How to record a screencast.
///
/// ```
/// let options = chromate::capture::ScreencastOptions::default();
/// assert_eq!((options.max_width, options.max_height), (1280, 720));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreencastOptions {
    /// Largest frame width in pixels (frames are scaled down to fit).
    pub max_width: u32,
    /// Largest frame height in pixels.
    pub max_height: u32,
    /// JPEG quality, 0 to 100.
    pub quality: u8,
    /// The frames kept, in bytes; later frames are dropped and counted.
    pub max_bytes: usize,
}

impl Default for ScreencastOptions {
    fn default() -> Self {
        Self {
            max_width: 1280,
            max_height: 720,
            quality: 80,
            max_bytes: 256 * 1024 * 1024,
        }
    }
}

/// One recorded frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ScreencastFrame {
    /// The JPEG file's bytes.
    pub jpeg: Vec<u8>,
    /// When the browser drew it, in seconds since the recording started.
    pub at: f64,
}

/// A finished recording.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Recording {
    /// The frames, in order.
    pub frames: Vec<ScreencastFrame>,
    /// When the recording stopped, in seconds since it started (the last frame lasts until
    /// then).
    pub ended_at: f64,
    /// Frames dropped because the byte budget was spent.
    pub dropped: u64,
}

/// A screencast being recorded; [`Screencast::stop`] ends it.
#[derive(Debug)]
pub struct Screencast {
    page: Page,
    stop: Option<oneshot::Sender<()>>,
    done: oneshot::Receiver<Recording>,
}

impl Page {
    /// Starts recording the page's frames.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let screencast = page.start_screencast(Default::default()).await?;
    /// // ... drive the page ...
    /// let recording = screencast.stop().await;
    /// println!("{} frames", recording.frames.len());
    /// # Ok(()) }
    /// ```
    pub async fn start_screencast(&self, options: ScreencastOptions) -> Result<Screencast> {
        let mut frames = self.session.events::<cdp_page::EventScreencastFrame>();
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
        let (done_tx, done_rx) = oneshot::channel();
        let started = Instant::now();
        let epoch_start = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |since| since.as_secs_f64());
        let session = self.session.clone();
        crate::rt::spawn(async move {
            let mut recording = Recording::default();
            let mut bytes = 0usize;
            loop {
                tokio::select! {
                    _ = &mut stop_rx => break,
                    event = frames.recv() => {
                        let Some(event) = event else { break };
                        let Ok(frame) = event else { continue };
                        let ack = cdp_page::ScreencastFrameAckParams::new(frame.session_id);
                        let session = session.clone();
                        crate::rt::spawn(async move {
                            let _ = session.send(&ack).await;
                        });
                        let Some(jpeg) = frame.data.as_str().and_then(crate::screenshot::decode_base64) else {
                            continue;
                        };
                        if bytes + jpeg.len() > options.max_bytes {
                            recording.dropped += 1;
                            continue;
                        }
                        bytes += jpeg.len();
                        let at = frame
                            .metadata
                            .and_then(|metadata| metadata.timestamp)
                            .map(|timestamp| timestamp.0 - epoch_start)
                            .filter(|at| at.is_finite() && *at >= 0.0)
                            .unwrap_or_else(|| started.elapsed().as_secs_f64());
                        recording.frames.push(ScreencastFrame { jpeg, at });
                    }
                }
            }
            recording.ended_at = started.elapsed().as_secs_f64();
            let _ = done_tx.send(recording);
        });
        let params = cdp_page::StartScreencastParams::default()
            .format(cdp_page::StartScreencastParamsFormat::Jpeg)
            .quality(i64::from(options.quality.min(100)))
            .max_width(i64::from(options.max_width))
            .max_height(i64::from(options.max_height));
        let screencast = Screencast {
            page: self.clone(),
            stop: Some(stop_tx),
            done: done_rx,
        };
        self.session.send(&params).await?;
        Ok(screencast)
    }
}

impl Screencast {
    /// Stops recording and returns the frames. A page that went away ends the recording with
    /// the frames it had sent.
    pub async fn stop(mut self) -> Recording {
        if !self.page.is_closed() {
            let _ = self
                .page
                .within(
                    std::time::Duration::from_secs(5),
                    self.page
                        .session
                        .send(&cdp_page::StopScreencastParams::default()),
                )
                .await;
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        (&mut self.done).await.unwrap_or_default()
    }
}
