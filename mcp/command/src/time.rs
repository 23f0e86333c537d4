//! The one time format chromate reports (log entries, traces, artifact names): ISO-8601 UTC
//! with milliseconds, written without a date crate.

use std::time::SystemTime;

/// `time` as ISO-8601 UTC with milliseconds, `2026-01-02T03:04:05.678Z`: the form of every time
/// chromate reports (log entries, traces).
pub fn iso_time(time: SystemTime) -> String {
    let since_epoch = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since_epoch.as_secs();
    let millis = since_epoch.subsec_millis();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 → (year, month, day). Howard Hinnant's `civil_from_days`
/// (<http://howardhinnant.github.io/date_algorithms.html>).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::iso_time;

    #[test]
    fn times_are_iso_utc_with_milliseconds() {
        let time = SystemTime::UNIX_EPOCH + Duration::from_millis(1_767_323_045_678);
        assert_eq!(iso_time(time), "2026-01-02T03:04:05.678Z");
        assert_eq!(iso_time(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(iso_time(leap), "2000-02-29T00:00:00.000Z");
    }
}
