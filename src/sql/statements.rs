//! Cuts SQL text into statements with the SQL tokenizer DataFusion parses with, so quotes,
//! identifiers and both comment styles are understood exactly as the parser will.

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer, TokenizerError};

/// Splits `text` into complete `;`-terminated statements and the unterminated rest (what a
/// prompt keeps reading after). Statements holding only comments or blanks are dropped; the
/// rest is empty when it holds nothing but those.
pub(crate) fn split_statements(text: &str) -> (Vec<String>, String) {
    let (stmts, rest_start) = match cut_statements(text) {
        Ok((stmts, Some(rest_start))) => (stmts, rest_start),
        Ok((stmts, None)) => return (stmts, String::new()),
        Err(e) => {
            let at = LineStarts::of(text).offset(text, e.location.line, e.location.column);
            match cut_statements(&text[..at]) {
                // An unterminated quote: the complete statements before it, and the rest from
                // the end of the last one.
                Ok((stmts, rest_start)) if at < text.len() => (stmts, rest_start.unwrap_or(at)),
                // An unclosed block comment (reported at the end): nothing is complete yet.
                _ => (Vec::new(), 0),
            }
        }
    };
    (stmts, text[rest_start..].trim_start().to_string())
}

/// The statements ended by `;` tokens, cut from `text` itself at the tokens' positions so they
/// read exactly as typed, and where the rest starts if it holds more than blanks and comments.
fn cut_statements(text: &str) -> Result<(Vec<String>, Option<usize>), TokenizerError> {
    let tokens = Tokenizer::new(&GenericDialect {}, text).tokenize_with_location()?;
    let lines = LineStarts::of(text);
    let mut stmts = Vec::new();
    let mut start = 0;
    let mut meaningful = false;
    for t in &tokens {
        match t.token {
            Token::SemiColon => {
                let at = lines.offset(text, t.span.start.line, t.span.start.column);
                if meaningful {
                    stmts.push(text[start..at].trim().to_string());
                }
                start = at + 1;
                meaningful = false;
            }
            Token::Whitespace(_) | Token::EOF => {}
            _ => meaningful = true,
        }
    }
    Ok((stmts, meaningful.then_some(start)))
}

/// Byte offsets of line starts, to turn the tokenizer's 1-based (line, column in characters)
/// locations into byte offsets.
struct LineStarts(Vec<usize>);

impl LineStarts {
    fn of(text: &str) -> LineStarts {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineStarts(starts)
    }

    fn offset(&self, text: &str, line: u64, column: u64) -> usize {
        let Some(&line_start) = usize::try_from(line)
            .ok()
            .and_then(|l| l.checked_sub(1))
            .and_then(|l| self.0.get(l))
        else {
            return text.len();
        };
        let col = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
        text[line_start..]
            .char_indices()
            .nth(col)
            .map_or(text.len(), |(b, _)| line_start + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> (Vec<String>, String) {
        split_statements(text)
    }

    #[test]
    fn statements_split_on_semicolons_outside_quotes_and_comments() {
        let (s, rest) = split("SELECT 1; SELECT ';' AS x; -- a; comment\nSELECT 2");
        assert_eq!(s, ["SELECT 1", "SELECT ';' AS x"]);
        assert_eq!(rest.trim(), "-- a; comment\nSELECT 2");
        let (s, rest) = split("  ;  -- only a comment;\n ; ");
        assert!(s.is_empty() && rest.is_empty(), "{s:?} {rest:?}");
        let (s, _) = split("SELECT \"a;b\" FROM t;");
        assert_eq!(s, ["SELECT \"a;b\" FROM t"]);
    }

    #[test]
    fn block_comments_and_escaped_quotes_are_understood() {
        let (s, rest) = split("SELECT /* ; */ 'it''s;' AS x; SELECT 2;");
        assert_eq!(s, ["SELECT /* ; */ 'it''s;' AS x", "SELECT 2"]);
        assert_eq!(rest, "");
    }

    #[test]
    fn an_unterminated_quote_is_the_rest() {
        let (s, rest) = split("SELECT 1;\nSELECT 'abc; def");
        assert_eq!(s, ["SELECT 1"]);
        assert_eq!(rest, "SELECT 'abc; def");
        // Completed by the next line, it splits.
        let (s, rest) = split(&format!("{rest}';\n"));
        assert_eq!(s, ["SELECT 'abc; def'"]);
        assert_eq!(rest, "");
        let (s, rest) = split("SELECT 'x', 'é; y");
        assert!(s.is_empty());
        assert_eq!(rest, "SELECT 'x', 'é; y");
    }

    #[test]
    fn an_unclosed_block_comment_waits_for_more() {
        let (s, rest) = split("SELECT 1; /* open");
        assert!(s.is_empty());
        assert_eq!(rest, "SELECT 1; /* open");
    }
}
