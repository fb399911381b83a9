//! Object names for imported resources: DNS-1123 labels (lower case letters, digits and `-`, at
//! most 63 characters, starting and ending with a letter or digit), derived from the cloud name
//! when there is one and from the ID otherwise. Names are unique per kind: a cloud name that
//! several resources of a kind share becomes `<name>-<id>` for each of them, so the name of a
//! resource does not depend on the order in which the cloud lists them. Pure.

use std::collections::{BTreeMap, BTreeSet};

/// The longest name given (a DNS-1123 label).
const MAX_LEN: usize = 63;

/// `raw` as a DNS-1123 label, or `None` when nothing of it is left.
pub fn dns_label(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && (out.is_empty() || out.ends_with('-'))) {
            out.push(c);
        }
    }
    out.truncate(MAX_LEN);
    let trimmed = out.trim_end_matches('-');
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// `name-id`, shortened from the name's end so that the ID stays whole.
fn with_id(name: &str, id: &str) -> String {
    let id = dns_label(id).unwrap_or_else(|| "x".into());
    let room = MAX_LEN.saturating_sub(id.len() + 1);
    let head: String = name.chars().take(room).collect();
    match dns_label(&head) {
        Some(head) => format!("{head}-{id}"),
        None => id,
    }
}

/// The object names of one kind's resources, by resource ID.
#[derive(Debug, Default, Clone)]
pub struct Names {
    by_id: BTreeMap<String, String>,
}

impl Names {
    /// Names for `(id, cloud name)` pairs.
    pub fn assign<'a>(resources: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let resources: Vec<(&str, Option<String>)> = resources
            .into_iter()
            .map(|(id, name)| (id, dns_label(name)))
            .collect();
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, name) in &resources {
            if let Some(name) = name {
                *seen.entry(name.as_str()).or_default() += 1;
            }
        }
        let mut taken = BTreeSet::new();
        let mut by_id = BTreeMap::new();
        for (id, name) in &resources {
            let mut chosen = match name {
                Some(n) if seen[n.as_str()] == 1 => n.clone(),
                Some(n) => with_id(n, id),
                None => dns_label(id).unwrap_or_else(|| "imported".into()),
            };
            // A name equal to another's `<name>-<id>` or ID: rare, settled by a counter.
            let base = chosen.clone();
            let mut n = 2;
            while taken.contains(&chosen) {
                chosen = with_id(&base, &n.to_string());
                n += 1;
            }
            taken.insert(chosen.clone());
            by_id.insert((*id).to_owned(), chosen);
        }
        Self { by_id }
    }

    /// The object name of the resource `id`, if it is imported.
    pub fn get(&self, id: &str) -> Option<&str> {
        self.by_id.get(id).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_labels_and_unique() {
        assert_eq!(dns_label("Web_Server 01").as_deref(), Some("web-server-01"));
        assert_eq!(dns_label("--").as_deref(), None);
        assert_eq!(dns_label(&"a".repeat(80)).unwrap().len(), MAX_LEN);
        let names = Names::assign([
            ("i-1", "web"),
            ("i-2", "web"),
            ("i-3", "db"),
            ("i-4", ""),
            ("i-5", "i-4"),
        ]);
        assert_eq!(names.get("i-1"), Some("web-i-1"));
        assert_eq!(names.get("i-2"), Some("web-i-2"));
        assert_eq!(names.get("i-3"), Some("db"));
        assert_eq!(names.get("i-4"), Some("i-4"));
        assert_eq!(names.get("i-5"), Some("i-4-2"));
        let long = Names::assign([("i-abc", &*"x".repeat(70)), ("i-abd", &*"x".repeat(70))]);
        let name = long.get("i-abc").unwrap();
        assert!(name.len() <= MAX_LEN && name.ends_with("-i-abc"), "{name}");
    }
}
