//! What differs between two servers by nature, removed from kubectl's output before the
//! comparison: uids, resourceVersions, timestamps, ages (not quantities such as `cpu: 50m`),
//! cluster addresses, the random suffixes of generated names, and column widths (which follow
//! the widths of those values).

use std::sync::LazyLock;

use regex::Regex;

/// Rules applied in order, before ages are normalized (`ages`) and after.
type Rules = Vec<(Regex, &'static str)>;

fn compile(rules: &[(&str, &'static str)]) -> Rules {
    rules
        .iter()
        .map(|(pattern, replacement)| (Regex::new(pattern).expect("a valid rule"), *replacement))
        .collect()
}

static BEFORE_AGES: LazyLock<Rules> = LazyLock::new(|| {
    compile(&[
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
    ])
});

static AFTER_AGES: LazyLock<Rules> = LazyLock::new(|| {
    compile(&[
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
    ])
});

static AGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[0-9]+(\.[0-9]+)?(s|m|h|d)([0-9]+(s|m|h))?\b").expect("a valid rule")
});

/// Ages (`5s`, `2m3s`, `3d`) as kubectl prints them in tables and events, replaced by `<age>`.
/// A value after `:` or `"` is a field's value, not an age: quantities such as `cpu: 50m`
/// are kept, so a difference in them still shows.
fn ages(text: &str) -> String {
    AGE.replace_all(text, |found: &regex::Captures<'_>| {
        let whole = found.get(0).expect("the match");
        let before = text[..whole.start()].trim_end_matches([' ', '\t']);
        if before.ends_with([':', '"']) {
            whole.as_str().to_owned()
        } else {
            "<age>".to_owned()
        }
    })
    .into_owned()
}

fn apply(rules: &Rules, text: String) -> String {
    rules.iter().fold(text, |text, (rule, replacement)| {
        rule.replace_all(&text, *replacement).into_owned()
    })
}

/// stdout without what differs by nature.
pub fn output(text: &str, _namespace: &str) -> String {
    let text = apply(&BEFORE_AGES, text.to_owned());
    let text = apply(&AFTER_AGES, ages(&text));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_go_and_quantities_stay() {
        assert_eq!(
            output("web   1/1   0 (5s ago)   2m3s", "ns"),
            "web 1/1 0 (<age> ago) <age>"
        );
        assert_eq!(
            output("cpu: 50m\n  \"memory\": \"10m\"", "ns"),
            "cpu: 50m\n \"memory\": \"10m\""
        );
        assert_eq!(
            output(
                "web   Deployment/web   cpu: 50m/80%   1   3   1   10m",
                "ns"
            ),
            "web Deployment/web cpu: 50m/80% 1 3 1 <age>"
        );
    }
}
