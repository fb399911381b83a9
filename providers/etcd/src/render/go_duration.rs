//! Go's duration syntax (`time.ParseDuration`: `"300ms"`, `"1.5h"`, `"2h45m"`), which etcd's
//! flags take but its configuration file does not: the file wants whole nanoseconds, so
//! ferroplane reads a duration option written the flag's way and writes it the file's way.

/// Nanoseconds of a non-negative Go duration, or `None` when `text` is not one (a sign of `-`,
/// a missing or unknown unit, more than `i64::MAX` nanoseconds: what etcd could not hold).
pub(crate) fn nanoseconds(text: &str) -> Option<i64> {
    let text = text.strip_prefix('+').unwrap_or(text);
    if text == "0" {
        return Some(0);
    }
    if text.is_empty() {
        return None;
    }
    let mut rest = text;
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let (whole, after) = split_digits(rest);
        let (fraction, after) = match after.strip_prefix('.') {
            Some(after) => split_digits(after),
            None => ("", after),
        };
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        let unit_len = after
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map_or(after.len(), |(at, _)| at);
        let (unit, after) = after.split_at(unit_len);
        let scale: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        total = total.checked_add(whole.checked_mul(scale)?)?;
        // Go truncates the fraction's nanoseconds; so does this.
        let mut place = scale;
        for digit in fraction.bytes() {
            place /= 10;
            total += u128::from(digit - b'0') * place;
        }
        rest = after;
    }
    i64::try_from(total).ok()
}

fn split_digits(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::nanoseconds;

    #[test]
    fn reads_what_go_reads() {
        assert_eq!(nanoseconds("0"), Some(0));
        assert_eq!(nanoseconds("20s"), Some(20_000_000_000));
        assert_eq!(nanoseconds("500ms"), Some(500_000_000));
        assert_eq!(nanoseconds("1m30s"), Some(90_000_000_000));
        assert_eq!(nanoseconds("1.5h"), Some(5_400_000_000_000));
        assert_eq!(nanoseconds(".5s"), Some(500_000_000));
        assert_eq!(nanoseconds("2h45m0.5s"), Some(9_900_500_000_000));
        assert_eq!(nanoseconds("10µs"), Some(10_000));
        assert_eq!(nanoseconds("+3ns"), Some(3));
    }

    #[test]
    fn refuses_what_go_refuses_and_negatives() {
        for bad in [
            "", "lots", "10", "10 s", "1d", "-5s", "s", ".s", "1.2.3s", "3000000h",
        ] {
            assert_eq!(nanoseconds(bad), None, "{bad:?}");
        }
    }
}
