//! The `*` patterns of name filters (`InstanceName`, `KeyPairName`).

/// `*` matches any run of characters; everything else literally.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = parts.collect();
    let Some((last, middle)) = pieces.split_last() else {
        return rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob() {
        assert!(glob_match("web", "web"));
        assert!(!glob_match("web", "web1"));
        assert!(glob_match("web*", "web-1"));
        assert!(glob_match("*-1", "web-1"));
        assert!(glob_match("w*b*1", "web-1"));
        assert!(!glob_match("w*x*1", "web-1"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("ab*ba", "aba"));
    }
}
