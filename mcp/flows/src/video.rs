//! A flow's video: its page's screencast frames (the engine's `Page::start_screencast`)
//! encoded with `ffmpeg` into `video.webm` (VP8) and `video.mp4` (H.264) in the flow
//! directory, each frame shown for as long as the page showed it.
//!
//! Owns: finding ffmpeg (`CHROMATE_FFMPEG`, else `ffmpeg` on PATH), the frames written to a
//! private scratch directory with an ffconcat list of their durations, the two encodings
//! (bounded in time, the encoder killed past it), and what the result says when there is no
//! video (ffmpeg missing, with how to install it; no frames). Does not own when recording
//! starts and stops (`run.rs`): a flow that fails or is stopped by a signal still gets its
//! video, since it is encoded after the browser closes.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a flow without ffmpeg says instead of a video path.
pub const INSTALL_HINT: &str = "ffmpeg is not on PATH, so no video was made (the flow ran without one): install it (apt-get install ffmpeg; brew install ffmpeg) or set CHROMATE_FFMPEG";

/// The longest one encoding may take.
const ENCODE_TIMEOUT: Duration = Duration::from_secs(180);

/// The frame rate of the files: frames are repeated to fill their time.
const FPS: u32 = 25;

/// The video files of a flow, or why there are none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VideoFiles {
    pub webm: Option<PathBuf>,
    pub mp4: Option<PathBuf>,
    pub note: Option<String>,
}

/// The ffmpeg to use: `explicit` (from `CHROMATE_FFMPEG`) if it is a file, else `ffmpeg` on
/// `PATH`; `None` when there is none.
pub fn find_ffmpeg(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return path.is_file().then(|| path.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("ffmpeg"))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Encodes `recording` into `<dir>/video.webm` and `<dir>/video.mp4`.
pub async fn encode(
    recording: &chromate::capture::Recording,
    size: (u32, u32),
    dir: &Path,
    ffmpeg: &Path,
) -> VideoFiles {
    if recording.frames.is_empty() {
        return VideoFiles {
            note: Some("the page sent no screencast frames, so there is no video".to_owned()),
            ..VideoFiles::default()
        };
    }
    let scratch = dir.join(format!(
        ".video-frames-{}",
        chromate_command::private_fs::random_suffix()
    ));
    let outcome = encode_in(recording, size, dir, ffmpeg, &scratch).await;
    let _ = std::fs::remove_dir_all(&scratch);
    match outcome {
        Ok(mut files) => {
            if recording.dropped > 0 {
                files.note = Some(format!(
                    "{} frames past the recording's memory budget were dropped",
                    recording.dropped
                ));
            }
            files
        }
        Err(why) => VideoFiles {
            note: Some(format!("the video could not be encoded: {why}")),
            ..VideoFiles::default()
        },
    }
}

async fn encode_in(
    recording: &chromate::capture::Recording,
    (width, height): (u32, u32),
    dir: &Path,
    ffmpeg: &Path,
    scratch: &Path,
) -> Result<VideoFiles, String> {
    chromate_command::private_fs::create_dir(scratch).map_err(|err| err.to_string())?;
    let mut list = String::from("ffconcat version 1.0\n");
    let frames = &recording.frames;
    for (index, frame) in frames.iter().enumerate() {
        let name = format!("{index:06}.jpg");
        chromate_command::private_fs::write_new_file(&scratch.join(&name), &frame.jpeg)
            .map_err(|err| format!("{}: {err}", scratch.display()))?;
        // A frame lasts until the next one (the browser sends one per change, up to 60 a
        // second; the fps filter picks 25 of them); the last until the recording stopped.
        let duration = match frames.get(index + 1) {
            Some(next) => (next.at - frame.at).max(0.001),
            None => (recording.ended_at - frame.at).max(1.0 / f64::from(FPS)),
        };
        list.push_str(&format!("file '{name}'\nduration {duration:.6}\n"));
    }
    // The concat demuxer takes the last entry's duration only when the file is listed again.
    list.push_str(&format!("file '{:06}.jpg'\n", frames.len() - 1));
    let list_path = scratch.join("frames.ffconcat");
    chromate_command::private_fs::write_new_file(&list_path, list.as_bytes())
        .map_err(|err| err.to_string())?;
    // Every frame at the flow's viewport (even-sized, as the codecs need): the first frames
    // can still show the window's size from before the viewport was set, and a video takes
    // its size from its first frame. A frame of another shape is fitted in and centred.
    let (even_width, even_height) = (width.max(2).div_ceil(2) * 2, height.max(2).div_ceil(2) * 2);
    let filter = format!(
        "fps={FPS},scale={width}:{height}:force_original_aspect_ratio=decrease,\
         pad={even_width}:{even_height}:(ow-iw)/2:(oh-ih)/2,format=yuv420p"
    );
    let webm = dir.join("video.webm");
    let mp4 = dir.join("video.mp4");
    let input = |codec: &[&str], out: &Path| -> Vec<String> {
        let mut args: Vec<String> = [
            "-y",
            "-hide_banner",
            "-loglevel",
            "error",
            "-f",
            "concat",
            "-safe",
            "0",
            "-i",
        ]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect();
        args.push(list_path.display().to_string());
        // One encoder thread: a CI machine runs other jobs (and the browser) beside it.
        args.push("-threads".to_owned());
        args.push("1".to_owned());
        args.push("-vf".to_owned());
        args.push(filter.clone());
        args.extend(codec.iter().map(|arg| (*arg).to_owned()));
        args.push(out.display().to_string());
        args
    };
    run(
        ffmpeg,
        &input(
            &[
                "-c:v",
                "libvpx",
                "-b:v",
                "2M",
                "-deadline",
                "realtime",
                "-cpu-used",
                "8",
            ],
            &webm,
        ),
    )
    .await?;
    let h264 = run(
        ffmpeg,
        &input(
            &[
                "-c:v",
                "libx264",
                "-preset",
                "veryfast",
                "-movflags",
                "+faststart",
            ],
            &mp4,
        ),
    )
    .await;
    if h264.is_err() {
        // An ffmpeg built without libx264 still has its own MPEG-4 encoder.
        run(
            ffmpeg,
            &input(
                &["-c:v", "mpeg4", "-q:v", "4", "-movflags", "+faststart"],
                &mp4,
            ),
        )
        .await?;
    }
    for file in [&webm, &mp4] {
        private(file);
    }
    Ok(VideoFiles {
        webm: Some(webm),
        mp4: Some(mp4),
        note: None,
    })
}

/// Makes a file ffmpeg wrote 0600, as every file chromate writes.
#[cfg(unix)]
fn private(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
}

#[cfg(not(unix))]
fn private(_path: &Path) {}

/// Runs ffmpeg with `args`, killing it past [`ENCODE_TIMEOUT`].
async fn run(ffmpeg: &Path, args: &[String]) -> Result<(), String> {
    let child = tokio::process::Command::new(ffmpeg)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| format!("{}: {err}", ffmpeg.display()))?;
    match tokio::time::timeout(ENCODE_TIMEOUT, child.wait_with_output()).await {
        Err(_) => Err(format!(
            "ffmpeg took longer than {} s",
            ENCODE_TIMEOUT.as_secs()
        )),
        Ok(Err(err)) => Err(format!("ffmpeg: {err}")),
        Ok(Ok(output)) if output.status.success() => Ok(()),
        Ok(Ok(output)) => Err(format!(
            "ffmpeg failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-colour JPEG of `width`×`height`, drawn by ffmpeg itself.
    async fn jpeg(ffmpeg: &Path, dir: &Path, width: u32, height: u32) -> Vec<u8> {
        let path = dir.join(format!("{width}x{height}.jpg"));
        let args: Vec<String> = [
            "-y",
            "-hide_banner",
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            &format!("color=c=red:s={width}x{height}"),
            "-frames:v",
            "1",
        ]
        .iter()
        .map(|arg| (*arg).to_owned())
        .chain([path.display().to_string()])
        .collect();
        run(ffmpeg, &args).await.expect("ffmpeg draws a frame");
        std::fs::read(&path).expect("the frame")
    }

    /// The size ffprobe reads from a video's first stream, `WIDTHxHEIGHT`.
    fn probed_size(video: &Path) -> String {
        let output = std::process::Command::new("ffprobe")
            .args(["-v", "error", "-select_streams", "v:0"])
            .args(["-show_entries", "stream=width,height", "-of", "csv=p=0:s=x"])
            .arg(video)
            .output()
            .expect("ffprobe (bash .ci/setup.sh all installs ffmpeg)");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// Under load the first screencast frames can still be the window's 1280×800 fitted into
    /// 1280×720 (1152×720), from before the flow's viewport took effect: the video is the
    /// viewport's size all the same, not its first frame's.
    #[tokio::test]
    async fn the_video_is_the_viewports_size_whatever_its_first_frame() {
        let ffmpeg = find_ffmpeg(None).expect("ffmpeg on PATH (bash .ci/setup.sh all)");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let early = jpeg(&ffmpeg, dir.path(), 1152, 720).await;
        let frame = jpeg(&ffmpeg, dir.path(), 1280, 720).await;
        let mut recording = chromate::capture::Recording::default();
        recording.frames = vec![
            chromate::capture::ScreencastFrame {
                jpeg: early,
                at: 0.0,
            },
            chromate::capture::ScreencastFrame {
                jpeg: frame.clone(),
                at: 0.2,
            },
            chromate::capture::ScreencastFrame {
                jpeg: frame,
                at: 0.4,
            },
        ];
        recording.ended_at = 1.0;
        let out = dir.path().join("out");
        chromate_command::private_fs::create_dir(&out).expect("the output directory");
        let files = encode(&recording, (1280, 720), &out, &ffmpeg).await;
        assert_eq!(files.note, None);
        for video in [files.webm, files.mp4] {
            let video = video.expect("a video file");
            assert_eq!(probed_size(&video), "1280x720", "{}", video.display());
        }
    }
}
