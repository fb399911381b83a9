//! The little XML OSS speaks back: error bodies (`<Error><Code>..</Code><Message>..</Message>
//! <RequestId>..</RequestId>..</Error>`) and ListObjects pages (`<ListBucketResult>` with one
//! `<Contents>` per object). OSS writes these flat, without attributes on the elements read
//! here, so elements are found by name; text is unescaped (the five predefined entities and
//! numeric references). Writing escapes the same way, for the mock.

/// The text of every `<tag>...</tag>` directly or deeply inside `xml`, in order.
pub fn all<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else {
            break;
        };
        out.push(&after[..end]);
        rest = &after[end + close.len()..];
    }
    out
}

/// The unescaped, trimmed text of the first `<tag>` in `xml`.
pub fn text(xml: &str, tag: &str) -> Option<String> {
    all(xml, tag).first().map(|t| unescape(t.trim()))
}

/// XML text with entities replaced.
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp..];
        let Some(semi) = after.find(';') else {
            out.push_str(after);
            return out;
        };
        let entity = &after[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => out.push(c),
            None => out.push_str(&after[..=semi]),
        }
        rest = &after[semi + 1..];
    }
    out.push_str(rest);
    out
}

/// Text escaped for an XML element.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_and_entities() {
        let xml = "<ListBucketResult><Contents><Key>a&amp;b</Key><Size>3</Size></Contents>\
                   <Contents><Key>c&#60;d</Key><Size>4</Size></Contents></ListBucketResult>";
        let contents = all(xml, "Contents");
        assert_eq!(contents.len(), 2);
        assert_eq!(text(contents[0], "Key").as_deref(), Some("a&b"));
        assert_eq!(text(contents[1], "Key").as_deref(), Some("c<d"));
        assert_eq!(text(xml, "Missing"), None);
        assert_eq!(unescape(&escape("<&'\">")), "<&'\">");
    }
}
