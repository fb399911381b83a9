//! The JSONPath subset printer columns use (client-go's `jsonpath` with missing keys allowed):
//! `.a.b`, `['a.b']`, `.a[0]`, `.a[-1]`, `.a[1:3]`, `.a[*].b`, `.*`, `..name` and filters
//! such as `.status.conditions[?(@.type=="Ready")].status`.

use serde_json::Value;
use std::fmt;

/// A compiled path. Parse once per printer column, evaluate per row.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    source: String,
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Field(String),
    Recursive(String),
    Wildcard,
    Index(i64),
    Slice(Option<i64>, Option<i64>),
    Filter(Filter),
}

#[derive(Debug, Clone, PartialEq)]
struct Filter {
    left: Vec<Segment>,
    op: Option<(Op, Operand)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
enum Operand {
    Literal(Value),
    Path(Vec<Segment>),
}

/// Why a JSONPath did not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid JSONPath {path:?}: {message}")]
pub struct JsonPathError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl JsonPath {
    /// Parses a path such as `.status.conditions[?(@.type=="Ready")].status`; one pair of
    /// surrounding braces (`{.spec.x}`) is accepted too.
    pub fn parse(path: &str) -> Result<Self, JsonPathError> {
        let trimmed = path.trim();
        let inner = trimmed
            .strip_prefix('{')
            .and_then(|s| s.strip_suffix('}'))
            .unwrap_or(trimmed);
        let mut parser = Parser {
            src: inner,
            pos: 0,
            path,
        };
        let segments = parser.segments(false)?;
        if parser.pos < inner.len() {
            return Err(parser.error("unexpected character"));
        }
        Ok(Self {
            source: path.to_owned(),
            segments,
        })
    }

    /// Every value the path selects in `root`, in document order; missing keys select nothing.
    pub fn find<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        eval(&self.segments, vec![root])
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    path: &'a str,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> JsonPathError {
        JsonPathError {
            path: self.path.to_owned(),
            message: format!("{message} at offset {}", self.pos),
        }
    }

    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn skip_spaces(&mut self) {
        while self.rest().starts_with(' ') {
            self.pos += 1;
        }
    }

    /// Segments until the end, or (inside a filter) until an operator or `)`.
    fn segments(&mut self, in_filter: bool) -> Result<Vec<Segment>, JsonPathError> {
        let mut out = Vec::new();
        loop {
            if in_filter {
                let r = self.rest().trim_start();
                if r.is_empty()
                    || r.starts_with(')')
                    || ["==", "!=", "<", ">"].iter().any(|op| r.starts_with(op))
                {
                    return Ok(out);
                }
            } else if self.rest().is_empty() {
                return Ok(out);
            }
            if self.eat("..") {
                let name = self.name();
                if name.is_empty() {
                    return Err(self.error("expected a field name after '..'"));
                }
                out.push(Segment::Recursive(name));
            } else if self.eat(".") {
                if self.eat("*") {
                    out.push(Segment::Wildcard);
                    continue;
                }
                let name = self.name();
                if name.is_empty() {
                    // A lone "." (the whole object) selects the root.
                    if self.rest().is_empty() || self.rest().starts_with('[') {
                        continue;
                    }
                    return Err(self.error("expected a field name after '.'"));
                }
                out.push(Segment::Field(name));
            } else if self.eat("[") {
                out.push(self.bracket()?);
            } else if in_filter && self.eat("@") {
                continue;
            } else {
                return Err(self.error("expected '.' or '['"));
            }
        }
    }

    /// A field name up to the next delimiter; `\.` (and any other backslash escape) stands
    /// for the character itself, as in `.metadata.annotations.ferroplane\.io/external-name`.
    fn name(&mut self) -> String {
        let mut name = String::new();
        let mut chars = self.rest().char_indices();
        let mut consumed = self.rest().len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, escaped)) => name.push(escaped),
                    None => name.push(c),
                },
                '.' | '[' | ' ' | ')' | '=' | '!' | '<' | '>' => {
                    consumed = i;
                    break;
                }
                c => name.push(c),
            }
        }
        self.pos += consumed;
        name
    }

    fn bracket(&mut self) -> Result<Segment, JsonPathError> {
        self.skip_spaces();
        if self.eat("*") {
            self.expect("]")?;
            return Ok(Segment::Wildcard);
        }
        if self.rest().starts_with('\'') || self.rest().starts_with('"') {
            let key = self.quoted()?;
            self.skip_spaces();
            self.expect("]")?;
            return Ok(Segment::Field(key));
        }
        if self.eat("?(") {
            self.skip_spaces();
            let left = self.segments(true)?;
            self.skip_spaces();
            let op = if self.eat("==") {
                Some(Op::Eq)
            } else if self.eat("!=") {
                Some(Op::Ne)
            } else if self.eat("<=") {
                Some(Op::Le)
            } else if self.eat(">=") {
                Some(Op::Ge)
            } else if self.eat("<") {
                Some(Op::Lt)
            } else if self.eat(">") {
                Some(Op::Gt)
            } else {
                None
            };
            let op = match op {
                Some(op) => {
                    self.skip_spaces();
                    Some((op, self.operand()?))
                }
                None => None,
            };
            self.skip_spaces();
            self.expect(")")?;
            self.expect("]")?;
            return Ok(Segment::Filter(Filter { left, op }));
        }
        let end = self
            .rest()
            .find(']')
            .ok_or_else(|| self.error("unterminated '['"))?;
        let inner = self.rest()[..end].trim().to_owned();
        self.pos += end + 1;
        let number = |s: &str| -> Result<Option<i64>, JsonPathError> {
            let s = s.trim();
            if s.is_empty() {
                Ok(None)
            } else {
                s.parse()
                    .map(Some)
                    .map_err(|_| self.error(&format!("invalid array index {s:?}")))
            }
        };
        if let Some((start, rest)) = inner.split_once(':') {
            // A step ("[::2]") is accepted and ignored beyond 1, which printer columns never use.
            let end = rest.split(':').next().unwrap_or("");
            return Ok(Segment::Slice(number(start)?, number(end)?));
        }
        match number(&inner)? {
            Some(i) => Ok(Segment::Index(i)),
            None => Err(self.error("empty brackets")),
        }
    }

    fn quoted(&mut self) -> Result<String, JsonPathError> {
        let quote = self.rest().chars().next().unwrap_or('"');
        self.pos += 1;
        let end = self
            .rest()
            .find(quote)
            .ok_or_else(|| self.error("unterminated string"))?;
        let s = self.rest()[..end].to_owned();
        self.pos += end + 1;
        Ok(s)
    }

    fn operand(&mut self) -> Result<Operand, JsonPathError> {
        if self.rest().starts_with('\'') || self.rest().starts_with('"') {
            return Ok(Operand::Literal(Value::String(self.quoted()?)));
        }
        if self.rest().starts_with('@') {
            return Ok(Operand::Path(self.segments(true)?));
        }
        let end = self.rest().find([')', ' ']).unwrap_or(self.rest().len());
        let token = self.rest()[..end].to_owned();
        self.pos += end;
        let value = match token.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "nil" | "null" => Value::Null,
            t => serde_json::from_str::<serde_json::Number>(t)
                .map(Value::Number)
                .map_err(|_| self.error(&format!("invalid filter operand {t:?}")))?,
        };
        Ok(Operand::Literal(value))
    }

    fn expect(&mut self, s: &str) -> Result<(), JsonPathError> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.error(&format!("expected {s:?}")))
        }
    }
}

fn eval<'a>(segments: &[Segment], mut current: Vec<&'a Value>) -> Vec<&'a Value> {
    for seg in segments {
        let mut next = Vec::new();
        for v in current {
            step(seg, v, &mut next);
        }
        current = next;
    }
    current
}

fn step<'a>(seg: &Segment, v: &'a Value, out: &mut Vec<&'a Value>) {
    match seg {
        Segment::Field(name) => {
            if let Some(child) = v.get(name.as_str()) {
                out.push(child);
            }
        }
        Segment::Recursive(name) => recurse(name, v, out),
        Segment::Wildcard => match v {
            Value::Object(map) => out.extend(map.values()),
            Value::Array(items) => out.extend(items.iter()),
            _ => {}
        },
        Segment::Index(i) => {
            if let Value::Array(items) = v {
                let len = items.len() as i64;
                let idx = if *i < 0 { len + i } else { *i };
                if (0..len).contains(&idx) {
                    out.push(&items[idx as usize]);
                }
            }
        }
        Segment::Slice(start, end) => {
            if let Value::Array(items) = v {
                let len = items.len() as i64;
                let clamp = |x: i64| if x < 0 { (len + x).max(0) } else { x.min(len) };
                let s = clamp(start.unwrap_or(0));
                let e = clamp(end.unwrap_or(len));
                if s < e {
                    out.extend(items[s as usize..e as usize].iter());
                }
            }
        }
        Segment::Filter(filter) => {
            if let Value::Array(items) = v {
                out.extend(items.iter().filter(|item| matches(filter, item)));
            }
        }
    }
}

fn recurse<'a>(name: &str, v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(map) => {
            if let Some(child) = map.get(name) {
                out.push(child);
            }
            for child in map.values() {
                recurse(name, child, out);
            }
        }
        Value::Array(items) => {
            for child in items {
                recurse(name, child, out);
            }
        }
        _ => {}
    }
}

fn matches(filter: &Filter, item: &Value) -> bool {
    let lefts = eval(&filter.left, vec![item]);
    let Some((op, operand)) = &filter.op else {
        return !lefts.is_empty();
    };
    let rights: Vec<&Value> = match operand {
        Operand::Literal(v) => vec![v],
        Operand::Path(p) => eval(p, vec![item]),
    };
    lefts
        .iter()
        .any(|l| rights.iter().any(|r| compare(*op, l, r)))
}

fn compare(op: Op, left: &Value, right: &Value) -> bool {
    let ordering = match (left, right) {
        (Value::Number(a), Value::Number(b)) => a.as_f64().partial_cmp(&b.as_f64()),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Bool(a), Value::Bool(b)) if matches!(op, Op::Eq | Op::Ne) => Some(a.cmp(b)),
        (Value::Null, Value::Null) => Some(std::cmp::Ordering::Equal),
        _ => None,
    };
    match (op, ordering) {
        (Op::Eq, Some(o)) => o.is_eq(),
        (Op::Ne, Some(o)) => o.is_ne(),
        (Op::Ne, None) => true,
        (Op::Lt, Some(o)) => o.is_lt(),
        (Op::Le, Some(o)) => o.is_le(),
        (Op::Gt, Some(o)) => o.is_gt(),
        (Op::Ge, Some(o)) => o.is_ge(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "metadata": {"name": "web-1", "labels": {"app.kubernetes.io/name": "web"}},
            "spec": {"replicas": 3, "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]},
            "status": {"conditions": [
                {"type": "Synced", "status": "True"},
                {"type": "Ready", "status": "False", "reason": "Creating"}
            ]}
        })
    }

    #[test]
    fn paths() {
        let d = doc();
        let cases: &[(&str, Vec<Value>)] = &[
            (".metadata.name", vec![json!("web-1")]),
            ("{.metadata.name}", vec![json!("web-1")]),
            (
                ".metadata.labels['app.kubernetes.io/name']",
                vec![json!("web")],
            ),
            (
                r".metadata.labels.app\.kubernetes\.io/name",
                vec![json!("web")],
            ),
            (".spec.ports[0].port", vec![json!(80)]),
            (".spec.ports[-1].name", vec![json!("https")]),
            (".spec.ports[*].port", vec![json!(80), json!(443)]),
            (".spec.ports[0:1].name", vec![json!("http")]),
            (
                ".status.conditions[?(@.type==\"Ready\")].status",
                vec![json!("False")],
            ),
            (
                ".status.conditions[?(@.type=='Synced')].status",
                vec![json!("True")],
            ),
            (
                ".status.conditions[?(@.type != \"Synced\")].reason",
                vec![json!("Creating")],
            ),
            (".status.conditions[?(@.reason)].type", vec![json!("Ready")]),
            (".spec.ports[?(@.port > 100)].name", vec![json!("https")]),
            ("..port", vec![json!(80), json!(443)]),
            (".spec.missing", vec![]),
            (".spec.ports[5].port", vec![]),
            (".status.conditions[?(@.type==\"Nope\")].status", vec![]),
        ];
        for (p, want) in cases {
            let path = JsonPath::parse(p).unwrap_or_else(|e| panic!("{p}: {e}"));
            let got: Vec<Value> = path.find(&d).into_iter().cloned().collect();
            assert_eq!(&got, want, "{p}");
        }
    }

    #[test]
    fn parse_errors() {
        for p in [".spec.[", ".a[?(@.x==)]", ".a[abc]", "spec", ".a['b"] {
            assert!(JsonPath::parse(p).is_err(), "{p} must not parse");
        }
    }
}
