//! Visual baselines: each PNG capture of a flow compared with the file of the same name in the
//! baseline directory (laid out as an output directory: `<baseline>/<flow>/<capture>.png`, so a
//! previous run's `--output-dir` can be the baseline), a difference image for each change, and
//! `--update-baseline` writing the captures there.
//!
//! Owns: decoding and encoding PNGs (the `png` crate), the pixel comparison and its
//! antialiasing tolerance — a port of pixelmatch's (<https://github.com/mapbox/pixelmatch>,
//! ISC licence, `index.js`: YIQ colour distance with its 0.1 threshold, and a pixel counted
//! as antialiasing when its neighbours have both a darker and a brighter one that each have
//! three equal neighbours of their own in both images) — the difference image (the baseline
//! faded to grey, differing pixels red, antialiasing yellow, outside the overlap of two sizes
//! red), and the changed / new / missing / same verdicts. `--threshold F` is the share of
//! pixels that may differ before a capture counts as changed (default 0: any). Does not own
//! when comparisons run or what a verdict does to the flow (`run.rs`).

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::capture::CaptureRecord;
use super::output;

/// pixelmatch's per-pixel colour threshold (0..1): smaller is stricter. A capture step's
/// `threshold` replaces it for that capture.
pub const COLOR_THRESHOLD: f64 = 0.1;

/// What a capture step of a flow file allows against its baseline, beyond the run's
/// `--threshold`: its own per-pixel colour threshold (YIQ distance, 0..1, as pixelmatch and
/// Playwright's `toHaveScreenshot`) and a number of pixels that may differ.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tolerance {
    /// Replaces [`COLOR_THRESHOLD`].
    pub threshold: Option<f64>,
    /// The capture is unchanged while at most this many pixels differ (or the run's
    /// `--threshold` share, whichever allows more).
    pub max_diff_pixels: Option<u64>,
}

/// How one capture compares with its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Same,
    Changed,
    /// No baseline file of that name.
    New,
    /// A baseline file no capture of this run matched.
    Missing,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Changed => "changed",
            Verdict::New => "new",
            Verdict::Missing => "missing",
        }
    }
}

/// One comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub name: String,
    pub verdict: Verdict,
    /// The baseline file (for new captures: where it would be).
    pub baseline: PathBuf,
    /// Pixels that differ (antialiasing not counted), and of how many.
    pub different_pixels: u64,
    pub total_pixels: u64,
    /// `<flow dir>/<name>.diff.png`, for a changed capture.
    pub diff: Option<PathBuf>,
    /// Why it could not be compared pixel by pixel (a baseline that is no PNG).
    pub note: Option<String>,
    /// The per-pixel colour threshold used.
    pub color_threshold: f64,
    /// The capture step's `max_diff_pixels`, if it had one.
    pub max_diff_pixels: Option<u64>,
}

impl Comparison {
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "verdict": self.verdict.as_str(),
            "baseline": self.baseline.display().to_string(),
            "different_pixels": self.different_pixels,
            "total_pixels": self.total_pixels,
            "diff": self.diff.as_ref().map(|path| path.display().to_string()),
            "note": self.note,
            "color_threshold": self.color_threshold,
            "max_diff_pixels": self.max_diff_pixels,
        })
    }
}

/// What `--baseline` asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct BaselineOptions {
    pub dir: PathBuf,
    /// The share of pixels (0..1) that may differ.
    pub threshold: f64,
    /// Write the captures into the baseline after comparing.
    pub update: bool,
}

/// Compares a flow's PNG captures with `<baseline>/<flow>/`, writing a difference image into
/// `flow_dir` for each changed one; baseline files no capture matched are `missing`. A capture
/// named in `tolerances` is compared under its own [`Tolerance`].
pub fn compare_flow(
    options: &BaselineOptions,
    flow: &str,
    captures: &[CaptureRecord],
    tolerances: &[(String, Tolerance)],
    flow_dir: &Path,
) -> Vec<Comparison> {
    let baseline_dir = options.dir.join(flow);
    let mut comparisons = Vec::new();
    for capture in captures.iter().filter(|capture| capture.format == "png") {
        let baseline = baseline_dir.join(format!("{}.png", capture.name));
        let tolerance = tolerances
            .iter()
            .find(|(name, _)| *name == capture.name)
            .map(|(_, tolerance)| *tolerance)
            .unwrap_or_default();
        comparisons.push(compare_one(
            options, tolerance, capture, &baseline, flow_dir,
        ));
    }
    let mut missing: Vec<String> = std::fs::read_dir(&baseline_dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".png")?.to_owned();
            let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
            (is_file
                && !stem.ends_with(".diff")
                && super::capture::name_is_valid(&stem)
                && !captures.iter().any(|capture| capture.name == stem))
            .then_some(stem)
        })
        .collect();
    missing.sort();
    for name in missing {
        comparisons.push(Comparison {
            baseline: baseline_dir.join(format!("{name}.png")),
            name,
            verdict: Verdict::Missing,
            different_pixels: 0,
            total_pixels: 0,
            diff: None,
            note: None,
            color_threshold: COLOR_THRESHOLD,
            max_diff_pixels: None,
        });
    }
    comparisons
}

fn compare_one(
    options: &BaselineOptions,
    tolerance: Tolerance,
    capture: &CaptureRecord,
    baseline: &Path,
    flow_dir: &Path,
) -> Comparison {
    let mut comparison = Comparison {
        name: capture.name.clone(),
        verdict: Verdict::New,
        baseline: baseline.to_path_buf(),
        different_pixels: 0,
        total_pixels: 0,
        diff: None,
        note: None,
        color_threshold: tolerance.threshold.unwrap_or(COLOR_THRESHOLD),
        max_diff_pixels: tolerance.max_diff_pixels,
    };
    let Ok(expected_png) = chromate_command::private_fs::read_file(baseline) else {
        return comparison;
    };
    let actual = chromate_command::private_fs::read_file(&capture.path)
        .map_err(|err| err.to_string())
        .and_then(|bytes| decode(&bytes));
    let expected = decode(&expected_png);
    let (actual, expected) = match (actual, expected) {
        (Ok(actual), Ok(expected)) => (actual, expected),
        (Err(why), _) | (_, Err(why)) => {
            comparison.verdict = Verdict::Changed;
            comparison.note = Some(format!("not compared pixel by pixel: {why}"));
            return comparison;
        }
    };
    let outcome = compare_at(&expected, &actual, comparison.color_threshold);
    comparison.different_pixels = outcome.different;
    comparison.total_pixels = outcome.image.width as u64 * outcome.image.height as u64;
    let share = if comparison.total_pixels == 0 {
        0.0
    } else {
        comparison.different_pixels as f64 / comparison.total_pixels as f64
    };
    let within_count = tolerance
        .max_diff_pixels
        .is_some_and(|allowed| comparison.different_pixels <= allowed);
    let changed = comparison.different_pixels > 0 && share > options.threshold && !within_count;
    comparison.verdict = if changed {
        Verdict::Changed
    } else {
        Verdict::Same
    };
    if comparison.different_pixels > 0 {
        let name = format!("{}.diff.png", capture.name);
        match encode(&outcome.image).and_then(|png| {
            output::replace_file(flow_dir, &name, &png).map_err(|err| err.to_string())
        }) {
            Ok(()) => comparison.diff = Some(flow_dir.join(name)),
            Err(why) => comparison.note = Some(format!("no difference image: {why}")),
        }
    }
    comparison
}

/// Writes the flow's PNG captures as its baseline (`--update-baseline`).
pub fn update(options: &BaselineOptions, flow: &str, captures: &[CaptureRecord]) -> io::Result<()> {
    let dir = options.dir.join(flow);
    std::fs::create_dir_all(&dir)
        .map_err(|err| io::Error::new(err.kind(), format!("{}: {err}", dir.display())))?;
    for capture in captures.iter().filter(|capture| capture.format == "png") {
        let bytes = chromate_command::private_fs::read_file(&capture.path)?;
        output::replace_file(&dir, &format!("{}.png", capture.name), &bytes)?;
    }
    Ok(())
}

/// An RGBA8 image.
#[derive(Debug, Clone, PartialEq)]
pub struct Rgba {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

impl Rgba {
    fn at(&self, x: u32, y: u32) -> usize {
        ((y * self.width + x) * 4) as usize
    }
}

/// A PNG of any colour type as RGBA8.
pub fn decode(bytes: &[u8]) -> Result<Rgba, String> {
    let mut decoder = png::Decoder::new(io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder
        .read_info()
        .map_err(|err| format!("not a png: {err}"))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| "the png is too large".to_owned())?;
    let mut buffer = vec![0; size];
    let info = reader
        .next_frame(&mut buffer)
        .map_err(|err| format!("a broken png: {err}"))?;
    buffer.truncate(info.buffer_size());
    let pixels = match info.color_type {
        png::ColorType::Rgba => buffer,
        png::ColorType::Rgb => buffer
            .chunks_exact(3)
            .flat_map(|rgb| [rgb[0], rgb[1], rgb[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => buffer
            .chunks_exact(2)
            .flat_map(|ga| [ga[0], ga[0], ga[0], ga[1]])
            .collect(),
        png::ColorType::Grayscale => buffer.iter().flat_map(|g| [*g, *g, *g, 255]).collect(),
        png::ColorType::Indexed => return Err("an indexed png was not expanded".to_owned()),
    };
    Ok(Rgba {
        width: info.width,
        height: info.height,
        pixels,
    })
}

/// An RGBA8 image as a PNG.
pub fn encode(image: &Rgba) -> Result<Vec<u8>, String> {
    let mut png_bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut png_bytes, image.width, image.height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|err| err.to_string())?;
        writer
            .write_image_data(&image.pixels)
            .map_err(|err| err.to_string())?;
        writer.finish().map_err(|err| err.to_string())?;
    }
    Ok(png_bytes)
}

/// What [`compare`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// Differing pixels, antialiasing not counted.
    pub different: u64,
    /// The difference image (the size of the larger of the two).
    pub image: Rgba,
}

const RED: [u8; 4] = [255, 0, 0, 255];
const YELLOW: [u8; 4] = [255, 255, 0, 255];

/// Compares `expected` and `actual` pixel by pixel (pixelmatch's algorithm, antialiasing not
/// counted); pixels outside the overlap of two different sizes all differ.
pub fn compare(expected: &Rgba, actual: &Rgba) -> Compared {
    compare_at(expected, actual, COLOR_THRESHOLD)
}

/// [`compare`] with the per-pixel colour threshold `color_threshold` (0..1: 0 counts any
/// change of colour, 1 almost none).
pub fn compare_at(expected: &Rgba, actual: &Rgba, color_threshold: f64) -> Compared {
    let width = expected.width.max(actual.width);
    let height = expected.height.max(actual.height);
    let mut image = Rgba {
        width,
        height,
        pixels: vec![0; (width * height * 4) as usize],
    };
    let max_delta = 35_215.0 * color_threshold * color_threshold;
    let same_size = expected.width == actual.width && expected.height == actual.height;
    let mut different = 0;
    for y in 0..height {
        for x in 0..width {
            let out = image.at(x, y);
            let inside =
                x < expected.width.min(actual.width) && y < expected.height.min(actual.height);
            if !inside {
                image.pixels[out..out + 4].copy_from_slice(&RED);
                different += 1;
                continue;
            }
            let (e, a) = (expected.at(x, y), actual.at(x, y));
            let delta = color_delta(expected, actual, e, a, false).abs();
            let color = if delta > max_delta {
                let antialiasing = same_size
                    && (antialiased(expected, x, y, actual) || antialiased(actual, x, y, expected));
                if antialiasing {
                    YELLOW
                } else {
                    different += 1;
                    RED
                }
            } else {
                let p = &expected.pixels[e..e + 4];
                let grey = blend(
                    rgb_to_y(p[0].into(), p[1].into(), p[2].into()),
                    0.1 * f64::from(p[3]) / 255.0,
                );
                let grey = grey.clamp(0.0, 255.0) as u8;
                [grey, grey, grey, 255]
            };
            image.pixels[out..out + 4].copy_from_slice(&color);
        }
    }
    Compared { different, image }
}

fn blend(c: f64, a: f64) -> f64 {
    255.0 + (c - 255.0) * a
}

fn rgb_to_y(r: f64, g: f64, b: f64) -> f64 {
    r * 0.298_895_31 + g * 0.586_622_47 + b * 0.114_482_23
}

fn rgb_to_i(r: f64, g: f64, b: f64) -> f64 {
    r * 0.595_977_99 - g * 0.274_176_10 - b * 0.321_801_89
}

fn rgb_to_q(r: f64, g: f64, b: f64) -> f64 {
    r * 0.211_470_17 - g * 0.522_617_11 + b * 0.311_146_94
}

/// pixelmatch's `colorDelta`: the YIQ distance of two pixels (or their brightness difference
/// only), its sign saying whether the second is lighter.
fn color_delta(img1: &Rgba, img2: &Rgba, k: usize, m: usize, y_only: bool) -> f64 {
    let p1 = &img1.pixels[k..k + 4];
    let p2 = &img2.pixels[m..m + 4];
    if p1 == p2 {
        return 0.0;
    }
    let channels = |p: &[u8]| {
        let (mut r, mut g, mut b) = (f64::from(p[0]), f64::from(p[1]), f64::from(p[2]));
        if p[3] < 255 {
            let a = f64::from(p[3]) / 255.0;
            r = blend(r, a);
            g = blend(g, a);
            b = blend(b, a);
        }
        (r, g, b)
    };
    let (r1, g1, b1) = channels(p1);
    let (r2, g2, b2) = channels(p2);
    let y1 = rgb_to_y(r1, g1, b1);
    let y2 = rgb_to_y(r2, g2, b2);
    let y = y1 - y2;
    if y_only {
        return y;
    }
    let i = rgb_to_i(r1, g1, b1) - rgb_to_i(r2, g2, b2);
    let q = rgb_to_q(r1, g1, b1) - rgb_to_q(r2, g2, b2);
    let delta = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q;
    if y1 > y2 {
        -delta
    } else {
        delta
    }
}

/// The 3×3 neighbourhood of (x, y), clipped to the image, and how many of the centre's
/// neighbours fall outside it (they count as equal).
fn neighbourhood(image: &Rgba, x: u32, y: u32) -> (u32, u32, u32, u32, u32) {
    let x0 = x.saturating_sub(1);
    let y0 = y.saturating_sub(1);
    let x2 = (x + 1).min(image.width - 1);
    let y2 = (y + 1).min(image.height - 1);
    let edge = u32::from(x == x0 || x == x2 || y == y0 || y == y2);
    (x0, y0, x2, y2, edge)
}

/// pixelmatch's `antialiased`: whether (x, y) of `image` looks like an antialiased edge pixel.
fn antialiased(image: &Rgba, x1: u32, y1: u32, other: &Rgba) -> bool {
    let (x0, y0, x2, y2, mut zeroes) = neighbourhood(image, x1, y1);
    let centre = image.at(x1, y1);
    let (mut min, mut max) = (0.0, 0.0);
    let (mut min_at, mut max_at) = ((0, 0), (0, 0));
    for x in x0..=x2 {
        for y in y0..=y2 {
            if x == x1 && y == y1 {
                continue;
            }
            let delta = color_delta(image, image, centre, image.at(x, y), true);
            if delta == 0.0 {
                zeroes += 1;
                if zeroes > 2 {
                    return false;
                }
            } else if delta < min {
                min = delta;
                min_at = (x, y);
            } else if delta > max {
                max = delta;
                max_at = (x, y);
            }
        }
    }
    if min == 0.0 || max == 0.0 {
        return false;
    }
    (has_many_siblings(image, min_at.0, min_at.1) && has_many_siblings(other, min_at.0, min_at.1))
        || (has_many_siblings(image, max_at.0, max_at.1)
            && has_many_siblings(other, max_at.0, max_at.1))
}

/// pixelmatch's `hasManySiblings`: three or more neighbours of exactly the same colour.
fn has_many_siblings(image: &Rgba, x1: u32, y1: u32) -> bool {
    let (x0, y0, x2, y2, mut zeroes) = neighbourhood(image, x1, y1);
    let centre = image.at(x1, y1);
    for x in x0..=x2 {
        for y in y0..=y2 {
            if x == x1 && y == y1 {
                continue;
            }
            let at = image.at(x, y);
            if image.pixels[centre..centre + 4] == image.pixels[at..at + 4] {
                zeroes += 1;
            }
            if zeroes > 2 {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(width: u32, height: u32, paint: impl Fn(u32, u32) -> [u8; 4]) -> Rgba {
        let mut pixels = Vec::new();
        for y in 0..height {
            for x in 0..width {
                pixels.extend_from_slice(&paint(x, y));
            }
        }
        Rgba {
            width,
            height,
            pixels,
        }
    }

    const WHITE: [u8; 4] = [255, 255, 255, 255];
    const BLACK: [u8; 4] = [0, 0, 0, 255];

    #[test]
    fn identical_images_have_no_difference_and_a_grey_difference_image() {
        let a = image(20, 10, |x, _| if x < 10 { WHITE } else { BLACK });
        let compared = compare(&a, &a.clone());
        assert_eq!(compared.different, 0);
        assert!(compared
            .image
            .pixels
            .chunks(4)
            .all(|p| p[0] == p[1] && p[1] == p[2]));
    }

    #[test]
    fn a_changed_block_is_counted_and_drawn_red() {
        let a = image(20, 20, |_, _| WHITE);
        let b = image(20, 20, |x, y| {
            if (5..9).contains(&x) && (5..9).contains(&y) {
                [200, 0, 0, 255]
            } else {
                WHITE
            }
        });
        let compared = compare(&a, &b);
        assert_eq!(compared.different, 16);
        let red = compared
            .image
            .pixels
            .chunks(4)
            .filter(|p| *p == RED)
            .count();
        assert_eq!(red, 16);
        let png = encode(&compared.image).unwrap();
        assert_eq!(
            decode(&png).unwrap(),
            compared.image,
            "the difference image round-trips"
        );
    }

    #[test]
    fn a_softened_edge_pixel_counts_as_antialiasing() {
        // A black half and a white half; the other image greys one pixel on the border, as a
        // renderer's antialiasing would.
        let a = image(10, 10, |x, _| if x < 5 { BLACK } else { WHITE });
        let b = image(10, 10, |x, y| match (x, y) {
            (5, 5) => [128, 128, 128, 255],
            (x, _) if x < 5 => BLACK,
            _ => WHITE,
        });
        let compared = compare(&a, &b);
        assert_eq!(compared.different, 0, "antialiasing is not a difference");
        assert!(compared.image.pixels.chunks(4).any(|p| p == YELLOW));
    }

    #[test]
    fn images_of_different_sizes_differ_outside_their_overlap() {
        let a = image(10, 10, |_, _| WHITE);
        let b = image(12, 10, |_, _| WHITE);
        let compared = compare(&a, &b);
        assert_eq!(compared.different, 20);
        assert_eq!((compared.image.width, compared.image.height), (12, 10));
    }
}
