//! Ages as kubectl prints them (`duration.HumanDuration` in apimachinery): about two or three
//! significant figures, e.g. `45s`, `2m30s`, `3h`, `3d5h`, `45d`, `2y`.

use jiff::{SignedDuration, Timestamp};

/// The human form of an elapsed duration. Up to one second in the future counts as `0s`
/// (clock skew); anything further ahead is `<invalid>`.
pub fn human_duration(d: SignedDuration) -> String {
    let seconds = d.as_secs();
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        return if days == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{days}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// The age of an RFC 3339 timestamp at `now`: `<unknown>` when absent or empty (a zero time in
/// Go), `<invalid>` when it does not parse.
pub fn age(timestamp: Option<&str>, now: Timestamp) -> String {
    match timestamp.filter(|s| !s.is_empty()) {
        None => "<unknown>".to_owned(),
        Some(s) => match s.parse::<Timestamp>() {
            Ok(t) => human_duration(now.duration_since(t)),
            Err(_) => "<invalid>".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_match_kubectl() {
        let cases: &[(i64, &str)] = &[
            (-5, "<invalid>"),
            (-2, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (5, "5s"),
            (119, "119s"),
            (120, "2m"),
            (150, "2m30s"),
            (599, "9m59s"),
            (600, "10m"),
            (3 * 3600 - 1, "179m"),
            (3 * 3600, "3h"),
            (4 * 3600 + 30 * 60, "4h30m"),
            (8 * 3600, "8h"),
            (47 * 3600 + 59 * 60, "47h"),
            (48 * 3600, "2d"),
            (3 * 86400 + 5 * 3600, "3d5h"),
            (8 * 86400, "8d"),
            (45 * 86400, "45d"),
            (729 * 86400, "729d"),
            (730 * 86400, "2y"),
            (731 * 86400, "2y1d"),
            (10 * 365 * 86400, "10y"),
        ];
        for &(secs, want) in cases {
            assert_eq!(
                human_duration(SignedDuration::from_secs(secs)),
                want,
                "{secs}s"
            );
        }
        // Go truncates toward zero: 1.5s in the future is still "0s".
        assert_eq!(human_duration(SignedDuration::from_millis(-1500)), "0s");
    }

    #[test]
    fn ages_of_timestamps() {
        let now: Timestamp = "2024-05-01T12:00:00Z".parse().unwrap();
        assert_eq!(age(Some("2024-05-01T11:55:00Z"), now), "5m");
        assert_eq!(age(Some("2024-04-28T07:00:00Z"), now), "3d5h");
        assert_eq!(age(Some("2024-05-01T13:55:00+02:00"), now), "5m");
        assert_eq!(age(None, now), "<unknown>");
        assert_eq!(age(Some(""), now), "<unknown>");
        assert_eq!(age(Some("soon"), now), "<invalid>");
    }
}
