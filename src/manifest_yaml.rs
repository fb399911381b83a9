//! Multi-document YAML as `kubectl apply -f` takes it, for manifests of any size: serde-saphyr's
//! default budget (1,024 documents, 250,000 nodes, 1,000,000 events) refuses a file of a few
//! thousand objects, such as `ferroplane import` writes for a large account. The counts are
//! allowed up to the input's length (each document, node and event takes at least one byte), so
//! a file is read whatever the number of its objects while the work stays linear in its size;
//! the limits on aliases and anchors, the way YAML amplifies a small input, stay as they are.

use serde_json::Value;

/// The documents of `text`, empty ones skipped.
pub fn documents(text: &str) -> Result<Vec<Value>, serde_saphyr::Error> {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_documents = budget.max_documents.max(text.len());
    budget.max_nodes = budget.max_nodes.max(text.len());
    budget.max_events = budget.max_events.max(text.len());
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    serde_saphyr::from_multiple_with_options(text, options)
}

#[cfg(test)]
mod tests {
    use super::documents;

    #[test]
    fn a_file_of_thousands_of_objects_is_read_whole() {
        let object = |n: usize| {
            let fields: String = (0..40).map(|f| format!("    f{f}: v{n}\n")).collect();
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c-{n}\ndata:\n{fields}")
        };
        let text: Vec<String> = (0..3000).map(object).collect();
        let docs = documents(&text.join("---\n")).expect("read");
        assert_eq!(docs.len(), 3000);
        assert_eq!(docs[2999]["data"]["f39"], "v2999");
        // Beyond serde-saphyr's default budget (1,024 documents).
        let default: Result<Vec<serde_json::Value>, _> =
            serde_saphyr::from_multiple(&text.join("---\n"));
        assert!(default.is_err());
    }
}
