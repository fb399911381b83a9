//! What differs between two servers by nature, removed from kubectl's output before the
//! comparison: uids, resourceVersions, timestamps, ages, cluster addresses, the random suffixes
//! of generated names, and column widths (which follow the widths of those values).

use std::sync::LazyLock;

use regex::Regex;

static RULES: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "<uid>",
        ),
        (r#"("resourceVersion": ?)"[0-9]+""#, "$1<rv>"),
        (r"(resourceVersion: )'?[0-9]+'?", "$1<rv>"),
        (r"(ResourceVersion in record \()[0-9]+\)", "$1<rv>)"),
        (
            r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z",
            "<time>",
        ),
        (r"\b[0-9]+(\.[0-9]+)?(s|m|h|d)([0-9]+(s|m|h))?\b", "<age>"),
        (r"<invalid>", "<age>"),
        (
            r"\b[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\b",
            "<ip>",
        ),
        (r"\b(pvc-)<uid>", "$1<volume>"),
        (
            r"-[bcdfghjklmnpqrstvwxz2456789]{8,10}(-[bcdfghjklmnpqrstvwxz2456789]{5})?\b",
            "-<hash>",
        ),
        (r"-[bcdfghjklmnpqrstvwxz2456789]{5}\b", "-<suffix>"),
        (r"[ \t]+", " "),
    ]
    .into_iter()
    .map(|(pattern, replacement)| (Regex::new(pattern).expect("a valid rule"), replacement))
    .collect()
});

/// stdout without what differs by nature.
pub fn output(text: &str, _namespace: &str) -> String {
    let mut text = text.to_owned();
    for (rule, replacement) in RULES.iter() {
        text = rule.replace_all(&text, *replacement).into_owned();
    }
    // Progress lines of `rollout status` depend on when the controllers write.
    text.lines()
        .map(str::trim_end)
        .filter(|line| !line.starts_with("Waiting for "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The error kubectl printed: its `error:`/`Error from server` lines, normalized; warnings and
/// kubectl's hints are not the server's answer.
pub fn error(stderr: &str, namespace: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error") || l.starts_with("Error") || l.starts_with("The "))
        .collect();
    output(&lines.join("\n"), namespace)
}
