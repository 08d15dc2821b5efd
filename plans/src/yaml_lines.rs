//! Maps YAML key paths (`["process", "1", "text_length_filter", "min_len"]`) to their line numbers,
//! so recipe errors can point at a line. serde YAML values carry no positions; this indentation
//! scan covers the block style recipes are written in and simply returns `None` for anything else.

use std::collections::HashMap;

pub(crate) struct YamlLines {
    lines: HashMap<String, usize>,
}

enum Frame {
    Key { indent: usize, name: String },
    Item { indent: usize, index: usize },
}

impl Frame {
    fn indent(&self) -> usize {
        match self {
            Frame::Key { indent, .. } | Frame::Item { indent, .. } => *indent,
        }
    }
    fn segment(&self) -> String {
        match self {
            Frame::Key { name, .. } => name.clone(),
            Frame::Item { index, .. } => index.to_string(),
        }
    }
}

impl YamlLines {
    pub fn new(text: &str) -> YamlLines {
        let mut lines = HashMap::new();
        let mut stack: Vec<Frame> = Vec::new();
        let mut item_counts: HashMap<String, usize> = HashMap::new();
        for (n, raw) in text.lines().enumerate() {
            let line_no = n + 1;
            let content = strip_comment(raw);
            if content.trim().is_empty() || content.trim_start().starts_with("---") {
                continue;
            }
            let mut indent = content.len() - content.trim_start().len();
            let mut rest = content.trim_start();
            // Sequence items, possibly several on one line ("- - x").
            while let Some(after) = rest
                .strip_prefix('-')
                .filter(|a| a.is_empty() || a.starts_with(' '))
            {
                while stack.last().is_some_and(|f| {
                    f.indent() > indent || (f.indent() == indent && matches!(f, Frame::Item { .. }))
                }) {
                    stack.pop();
                }
                let parent = path_of(&stack);
                let count = item_counts.entry(parent.clone()).or_insert(0);
                let index = *count;
                *count += 1;
                stack.push(Frame::Item { indent, index });
                lines.entry(path_of(&stack)).or_insert(line_no);
                let trimmed = after.trim_start();
                indent += 1 + (after.len() - trimmed.len());
                rest = trimmed;
            }
            if let Some(key) = key_of(rest) {
                while stack.last().is_some_and(|f| f.indent() >= indent) {
                    stack.pop();
                }
                stack.push(Frame::Key { indent, name: key });
                lines.entry(path_of(&stack)).or_insert(line_no);
                // Flow mappings on one line (`op: {a: 1}`): record their keys on this line too.
                let value = rest.split_once(':').map(|(_, v)| v.trim()).unwrap_or("");
                if let Some(inner) = value.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
                    let base = path_of(&stack);
                    for part in inner.split(',') {
                        if let Some(k) = key_of(part.trim()) {
                            lines.entry(format!("{base}\u{0}{k}")).or_insert(line_no);
                        }
                    }
                }
            }
        }
        YamlLines { lines }
    }

    /// 1-based line of the key path, if found.
    pub fn find(&self, path: &[&str]) -> Option<usize> {
        if path.is_empty() {
            return None;
        }
        self.lines.get(&path.join("\u{0}")).copied()
    }
}

fn path_of(stack: &[Frame]) -> String {
    stack
        .iter()
        .map(Frame::segment)
        .collect::<Vec<_>>()
        .join("\u{0}")
}

fn key_of(s: &str) -> Option<String> {
    let (key, _) = if let Some(q) = s.strip_prefix('"') {
        let end = q.find('"')?;
        let rest = &q[end + 1..];
        rest.strip_prefix(':')
            .filter(|r| r.is_empty() || r.starts_with(' '))?;
        return Some(q[..end].to_string());
    } else if let Some(q) = s.strip_prefix('\'') {
        let end = q.find('\'')?;
        let rest = &q[end + 1..];
        rest.strip_prefix(':')
            .filter(|r| r.is_empty() || r.starts_with(' '))?;
        return Some(q[..end].to_string());
    } else {
        let pos = s
            .char_indices()
            .find(|&(i, c)| c == ':' && s[i + 1..].chars().next().is_none_or(|n| n == ' '))?;
        s.split_at(pos.0)
    };
    let key = key.trim();
    if key.is_empty() || key.contains(['{', '[', '"', '\'']) {
        None
    } else {
        Some(key.to_string())
    }
}

fn strip_comment(line: &str) -> &str {
    let mut in_single = false;
    let mut in_double = false;
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !in_double => in_single = !in_single,
            '"' if !in_single => in_double = !in_double,
            '#' if !in_single && !in_double && prev_space => return &line[..i],
            _ => {}
        }
        prev_space = c == ' ' || c == '\t';
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys_and_items() {
        let y = YamlLines::new(
            "a: 1 # comment\nprocess:\n  - m1:\n  - f1:\n      min_len: 5 # x\n      max_len: 9\n- top\nprocess2:\n- x: {p: 1, q: 2}\n",
        );
        assert_eq!(y.find(&["a"]), Some(1));
        assert_eq!(y.find(&["process", "0", "m1"]), Some(3));
        assert_eq!(y.find(&["process", "1", "f1"]), Some(4));
        assert_eq!(y.find(&["process", "1", "f1", "max_len"]), Some(6));
        assert_eq!(y.find(&["process2", "0", "x", "q"]), Some(9));
        assert_eq!(y.find(&["missing"]), None);
    }
}
