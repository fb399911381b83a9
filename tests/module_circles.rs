//! No import circles between the files of any crate of the workspace.
//!
//! A file depends on another when it names an item of it through `use`, or through a path that
//! starts with `crate::`, `super::` or `self::`. A name imported through a `pub use` re-export
//! counts as an edge to the file that defines it, so a `mod.rs` that re-exports its children and
//! a child that imports such a name from `super` is not a circle; a child that imports what its
//! `mod.rs` (or `lib.rs`) defines, while that file uses the child, is one. Circles are what make a
//! newcomer unable to tell which module is the ground floor: shared definitions belong in a module
//! that imports nothing of the modules using them.
//!
//! The reading is textual (comments and string literals are blanked first), which is exact
//! enough for this code base's plain `use` trees; `#[path]` attributes and macros that build
//! paths are not followed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

#[test]
fn no_crate_has_an_import_circle_between_its_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = workspace_crates(root);
    assert!(
        crates.len() >= 10,
        "found only {} crates under {}: the scan is broken",
        crates.len(),
        root.display()
    );
    let mut report = String::new();
    let mut files_read = 0;
    let mut edges_read = 0;
    for krate in &crates {
        let graph = CrateGraph::read(krate);
        files_read += graph.files.len();
        edges_read += graph.edges.values().map(BTreeSet::len).sum::<usize>();
        for circle in graph.circles() {
            report.push_str(&graph.describe(krate, root, &circle));
        }
    }
    assert!(
        files_read > 300 && edges_read > 300,
        "read {files_read} files and {edges_read} edges: the scan is broken"
    );
    assert!(
        report.is_empty(),
        "import circles between files (move what both sides use into a module of its own):\n{report}"
    );
}

/// The detector itself: a circle through a re-export is found, a re-export alone is not one.
#[test]
fn the_scan_finds_a_circle_and_follows_re_exports() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir_all(src.join("a")).unwrap();
    fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\n// use crate::b::Nothing;\npub use a::Thing;\n",
    )
    .unwrap();
    fs::write(
        src.join("a/mod.rs"),
        "mod child;\npub use child::Thing;\nconst S: &str = \"use crate::b::X;\";\n",
    )
    .unwrap();
    fs::write(src.join("a/child.rs"), "pub struct Thing;\n").unwrap();
    fs::write(
        src.join("b.rs"),
        "use crate::Thing;\nuse crate::a::{child::Thing as T};\n",
    )
    .unwrap();
    let graph = CrateGraph::read(dir.path());
    assert!(graph.circles().is_empty(), "{:?}", graph.edges);
    let b = vec!["b".to_owned()];
    let child = vec!["a".to_owned(), "child".to_owned()];
    assert_eq!(graph.edges[&b], BTreeSet::from([child.clone()]));

    fs::write(
        src.join("a/child.rs"),
        "pub struct Thing;\nfn f() { super::super::b::g() }\n",
    )
    .unwrap();
    fs::write(
        src.join("b.rs"),
        "use crate::{a::{Thing}};\npub fn g() {}\n",
    )
    .unwrap();
    let circles = CrateGraph::read(dir.path()).circles();
    assert_eq!(circles, vec![BTreeSet::from([b.clone(), child.clone()])]);

    // A grouped import with a trailing comma names its items, not the crate root: `lib.rs`
    // re-exports from `a`, so an edge to the root would close a false circle through it.
    fs::write(
        src.join("a/child.rs"),
        "use crate::{\n    b::g,\n};\npub struct Thing;\n",
    )
    .unwrap();
    fs::write(src.join("b.rs"), "pub fn g() {}\n").unwrap();
    let graph = CrateGraph::read(dir.path());
    assert!(graph.circles().is_empty(), "{:?}", graph.edges);
    assert_eq!(graph.edges[&child], BTreeSet::from([b]));
}

/// Every directory with a `Cargo.toml` and a `src/`, outside `target/` and hidden folders.
fn workspace_crates(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
            found.push(dir.clone());
        }
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let skip = name.starts_with('.') || name == "target" || name == "src";
            if !skip && entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

struct SourceFile {
    path: PathBuf,
    /// The text with comments and literals blanked.
    code: String,
    /// `mod name { … }` blocks: byte range and name.
    inline_modules: Vec<(usize, usize, String)>,
    /// Names this file re-exports (`pub use`), with the path they name and where.
    re_exports: BTreeMap<String, (Vec<String>, usize)>,
}

struct CrateGraph {
    files: BTreeMap<ModPath, SourceFile>,
    edges: BTreeMap<ModPath, BTreeSet<ModPath>>,
}

impl CrateGraph {
    fn read(crate_dir: &Path) -> Self {
        let mut files = BTreeMap::new();
        for path in rust_files(&crate_dir.join("src")) {
            let relative = path.strip_prefix(crate_dir.join("src")).unwrap();
            let mut segments: Vec<String> = relative
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let last = segments.last().cloned().unwrap_or_default();
            if segments.len() == 1 && (last == "lib" || last == "main") {
                // A package with both has two crate roots; the library is the one others use.
                if last == "main" && crate_dir.join("src/lib.rs").is_file() {
                    continue;
                }
                segments.clear();
            } else if last == "mod" {
                segments.pop();
            }
            let code = blank_comments_and_literals(&fs::read_to_string(&path).unwrap());
            let inline_modules = inline_modules(&code);
            files.insert(
                segments,
                SourceFile {
                    path,
                    code,
                    inline_modules,
                    re_exports: BTreeMap::new(),
                },
            );
        }
        let mut graph = Self {
            files,
            edges: BTreeMap::new(),
        };
        graph.read_re_exports();
        graph.read_edges();
        graph
    }

    fn read_re_exports(&mut self) {
        let keys: Vec<ModPath> = self.files.keys().cloned().collect();
        for key in keys {
            let code = &self.files[&key].code;
            let mut re_exports = BTreeMap::new();
            for (start, tree) in use_statements(code, true) {
                for path in expand_use_tree(&tree) {
                    if let Some(name) = path.last() {
                        re_exports.insert(name.clone(), (path.clone(), start));
                    }
                }
            }
            self.files.get_mut(&key).unwrap().re_exports = re_exports;
        }
    }

    fn read_edges(&mut self) {
        let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for (module, file) in &self.files {
            let mut named: Vec<(Vec<String>, usize)> = Vec::new();
            let mut use_spans = Vec::new();
            for (start, tree) in use_statements(&file.code, false) {
                use_spans.push(start..start + 3 + tree.len());
                named.extend(expand_use_tree(&tree).into_iter().map(|p| (p, start)));
            }
            // Paths inside `use` trees were expanded above (`crate::a::{b::X}` names `a::b`,
            // not `a`).
            named.extend(
                relative_paths(&file.code)
                    .into_iter()
                    .filter(|(_, at)| !use_spans.iter().any(|span| span.contains(at))),
            );
            let targets = edges.entry(module.clone()).or_default();
            for (path, at) in named {
                let path: Vec<String> = path.into_iter().filter(|s| s != "*").collect();
                let Some(absolute) = self.absolute(&path, &self.module_at(module, at)) else {
                    continue;
                };
                if let Some(target) = self.defining_file(&absolute, 0)
                    && &target != module
                {
                    targets.insert(target);
                }
            }
        }
        self.edges = edges;
    }

    /// The module a byte offset of a file is in (the file's, or an inline `mod` inside it).
    fn module_at(&self, module: &ModPath, at: usize) -> ModPath {
        let mut path = module.clone();
        for (start, end, name) in &self.files[module].inline_modules {
            if *start < at && at < *end {
                path.push(name.clone());
            }
        }
        path
    }

    /// A path as written in module `here`, from the crate root; `None` for other crates'.
    fn absolute(&self, path: &[String], here: &ModPath) -> Option<ModPath> {
        let first = path.first()?;
        match first.as_str() {
            "crate" => Some(path[1..].to_vec()),
            "self" | "super" => {
                let mut current = here.clone();
                let mut rest = path;
                while let Some(head) = rest.first() {
                    match head.as_str() {
                        "super" => {
                            current.pop()?;
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
                current.extend(rest.iter().cloned());
                Some(current)
            }
            _ => {
                let mut child = here.clone();
                child.push(first.clone());
                self.files.contains_key(&child).then(|| {
                    let mut full = here.clone();
                    full.extend(path.iter().cloned());
                    full
                })
            }
        }
    }

    /// The file that defines what an absolute path names, through `pub use` re-exports.
    fn defining_file(&self, path: &[String], depth: usize) -> Option<ModPath> {
        for len in (0..=path.len()).rev() {
            let module = path[..len].to_vec();
            let Some(file) = self.files.get(&module) else {
                continue;
            };
            let rest = &path[len..];
            if depth < 8
                && let Some(name) = rest.first()
                && let Some((target, at)) = file.re_exports.get(name)
                && let Some(mut absolute) = self.absolute(target, &self.module_at(&module, *at))
            {
                absolute.extend(rest[1..].iter().cloned());
                return self.defining_file(&absolute, depth + 1);
            }
            return Some(module);
        }
        None
    }

    /// Strongly connected sets of more than one file (Tarjan's algorithm).
    fn circles(&self) -> Vec<BTreeSet<ModPath>> {
        struct Walk<'a> {
            edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
            index: BTreeMap<&'a ModPath, usize>,
            low: BTreeMap<&'a ModPath, usize>,
            stack: Vec<&'a ModPath>,
            circles: Vec<BTreeSet<ModPath>>,
        }
        impl<'a> Walk<'a> {
            fn visit(&mut self, node: &'a ModPath) {
                let n = self.index.len();
                self.index.insert(node, n);
                self.low.insert(node, n);
                self.stack.push(node);
                for next in self.edges.get(node).into_iter().flatten() {
                    if !self.index.contains_key(next) {
                        self.visit(next);
                        let low = self.low[node].min(self.low[next]);
                        self.low.insert(node, low);
                    } else if self.stack.contains(&next) {
                        let low = self.low[node].min(self.index[next]);
                        self.low.insert(node, low);
                    }
                }
                if self.low[node] == self.index[node] {
                    let mut members = BTreeSet::new();
                    while let Some(top) = self.stack.pop() {
                        members.insert(top.clone());
                        if top == node {
                            break;
                        }
                    }
                    if members.len() > 1 {
                        self.circles.push(members);
                    }
                }
            }
        }
        let mut walk = Walk {
            edges: &self.edges,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            circles: Vec::new(),
        };
        for node in self.edges.keys() {
            if !walk.index.contains_key(node) {
                walk.visit(node);
            }
        }
        walk.circles
    }

    fn describe(&self, crate_dir: &Path, root: &Path, circle: &BTreeSet<ModPath>) -> String {
        let name = |m: &ModPath| {
            self.files[m]
                .path
                .strip_prefix(root)
                .unwrap_or(&self.files[m].path)
                .display()
                .to_string()
        };
        let mut text = format!(
            "{}: {} files in a circle\n",
            crate_dir.strip_prefix(root).unwrap_or(crate_dir).display(),
            circle.len()
        );
        for from in circle {
            for to in self.edges[from].intersection(circle) {
                text.push_str(&format!("    {} -> {}\n", name(from), name(to)));
            }
        }
        text
    }
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// The code with comments, string and character literals replaced by spaces (offsets kept).
fn blank_comments_and_literals(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = bytes.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to.min(bytes.len())] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let after_ident = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < bytes.len() && depth > 0 {
                if bytes[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if bytes[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !after_ident && (rest.starts_with(b"r\"") || rest.starts_with(b"r#")) {
            let hashes = rest[1..].iter().take_while(|&&b| b == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let mut closing = vec![b'"'];
            closing.extend(std::iter::repeat_n(b'#', hashes));
            let body = i + 2 + hashes;
            let end = bytes[body..]
                .windows(closing.len())
                .position(|w| w == closing.as_slice())
                .map_or(bytes.len(), |p| body + p + closing.len());
            blank(&mut out, i, end);
            i = end;
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\''), not a lifetime ('a).
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&b| b == b'\'').map(|p| p + 3)
            } else {
                let ch = source[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(ch + 2)
            };
            match len {
                Some(len) => {
                    blank(&mut out, i, i + len);
                    i += len;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether `word` stands at `at` as a whole word.
fn word_at(code: &str, at: usize, word: &str) -> bool {
    let bytes = code.as_bytes();
    code[at..].starts_with(word)
        && (at == 0 || !is_ident_byte(bytes[at - 1]))
        && bytes
            .get(at + word.len())
            .is_none_or(|&b| !is_ident_byte(b))
}

/// `use` statements (only `pub use` ones when `public_only`): where each starts and its tree.
fn use_statements(code: &str, public_only: bool) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("use") {
        if !word_at(code, at, "use") {
            continue;
        }
        let before = code[..at].trim_end();
        let public = before.ends_with("pub")
            || before.ends_with(')') && {
                let open = before.rfind('(').unwrap_or(0);
                before[..open].trim_end().ends_with("pub")
            };
        if public_only && !public {
            continue;
        }
        if let Some(end) = code[at..].find(';') {
            found.push((at, code[at + 3..at + end].to_owned()));
        }
    }
    found
}

/// A use tree (`a::{b, c::{d as e, *}}`) as the paths it names.
fn expand_use_tree(tree: &str) -> Vec<Vec<String>> {
    let compact: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut paths = Vec::new();
    expand_into(&compact, Vec::new(), &mut paths);
    paths
}

fn expand_into(tree: &str, prefix: Vec<String>, paths: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    // The empty item after a trailing comma (`use crate::{a, b,};`) names nothing, not the
    // group's prefix.
    if tree.is_empty() {
        return;
    }
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_into(&inner[start..i], prefix.clone(), paths);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_into(&inner[start..], prefix, paths);
        return;
    }
    if let Some(open) = tree.find("::{") {
        let mut prefix = prefix;
        prefix.extend(split_path(&tree[..open]));
        expand_into(&tree[open + 2..], prefix, paths);
        return;
    }
    let without_alias = tree.split(" as ").next().unwrap_or(tree);
    let mut path = prefix;
    path.extend(split_path(without_alias));
    if !path.is_empty() {
        paths.push(path);
    }
}

fn split_path(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Paths in code starting with `crate::`, `super::` or `self::`, with where each starts.
fn relative_paths(code: &str) -> Vec<(Vec<String>, usize)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for head in ["crate", "super", "self"] {
        for (at, _) in code.match_indices(head) {
            if !word_at(code, at, head) || (at > 0 && bytes[at - 1] == b':') {
                continue;
            }
            let mut end = at;
            let mut segments = Vec::new();
            loop {
                let ident_len = code[end..]
                    .bytes()
                    .take_while(|&b| is_ident_byte(b))
                    .count();
                if ident_len == 0 {
                    break;
                }
                segments.push(code[end..end + ident_len].to_owned());
                end += ident_len;
                let spaces = code[end..]
                    .bytes()
                    .take_while(|b| b.is_ascii_whitespace())
                    .count();
                if !code[end + spaces..].starts_with("::") {
                    break;
                }
                end += spaces + 2;
                end += code[end..]
                    .bytes()
                    .take_while(|b| b.is_ascii_whitespace())
                    .count();
            }
            if segments.len() > 1 {
                found.push((segments, at));
            }
        }
    }
    found
}

/// `mod name {` blocks: their byte range and name.
fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for (at, _) in code.match_indices("mod") {
        if !word_at(code, at, "mod") {
            continue;
        }
        let rest = &code[at + 3..];
        let name_start = rest.len() - rest.trim_start().len();
        let name: String = rest[name_start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let after = rest[name_start + name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = at + 3 + (rest.len() - after.len());
        let mut depth = 0;
        let mut end = bytes.len();
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        found.push((open, end, name));
    }
    found
}
