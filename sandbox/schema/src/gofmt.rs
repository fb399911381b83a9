//! Go's `fmt` renderings of JSON values, so that messages read exactly like kube-apiserver's.
//!
//! The apiserver formats a field error's bad value with `%v` for scalars, `%q` for strings and
//! `%#v` for maps and slices decoded from JSON; these helpers reproduce those three verbs for
//! `serde_json::Value`.

use serde_json::{Number, Value};
use std::fmt::Write as _;

/// Go's `strconv.Quote`: a double-quoted string with Go escapes.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                if (c as u32) <= 0xffff {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%v` of a float64 (`%g` with the shortest precision): exponent form when the decimal
/// exponent is below -4 or at least 6, e.g. `1e+06`, `1.5`, `123456`.
pub fn float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // Rust's `{:e}` gives the shortest round-trip digits, e.g. "1.5e3".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{exp_sign}{:02}", exp.abs());
    }
    let point = exp + 1; // position of the decimal point within `digits`
    if point <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!(
            "{sign}{digits}{}",
            "0".repeat(point as usize - digits.len())
        )
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{sign}{int}.{frac}")
    }
}

/// Go's `%v` of a JSON number as decoded by the apiserver (int64 when integral, else float64).
pub(crate) fn number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// The bad-value part of a field error: `%v` for numbers and booleans, `%q` for strings,
/// `"null"` for null, `%#v` for maps and slices.
pub(crate) fn bad_value(v: &Value) -> String {
    match v {
        Value::Null => quote("null"),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => quote(s),
        Value::Array(_) | Value::Object(_) => go_syntax(v),
    }
}

/// Go's `%#v` of a value decoded into `interface{}`.
pub(crate) fn go_syntax(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => quote(s),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(go_syntax).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        Value::Object(map) => {
            // Go's fmt prints map keys sorted; serde_json's map is already ordered by key
            // unless `preserve_order` is on, so sort explicitly.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", quote(k), go_syntax(v)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_like_go_percent_v() {
        let cases = [
            (9.0, "9"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (-2.25, "-2.25"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1e20, "1e+20"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
        ];
        for (f, want) in cases {
            assert_eq!(float(f), want, "float {f}");
        }
    }

    #[test]
    fn quotes_like_strconv_quote() {
        assert_eq!(quote("m5.large"), "\"m5.large\"");
        assert_eq!(quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(quote("\u{1}"), "\"\\x01\"");
        assert_eq!(quote("héllo"), "\"héllo\"");
    }

    #[test]
    fn bad_values() {
        assert_eq!(bad_value(&json!(12)), "12");
        assert_eq!(bad_value(&json!(true)), "true");
        assert_eq!(bad_value(&json!(null)), "\"null\"");
        assert_eq!(bad_value(&json!("x")), "\"x\"");
        assert_eq!(
            bad_value(&json!({"b": 1, "a": "x"})),
            "map[string]interface {}{\"a\":\"x\", \"b\":1}"
        );
        assert_eq!(
            bad_value(&json!(["a", 1, null])),
            "[]interface {}{\"a\", 1, interface {}(nil)}"
        );
    }
}
