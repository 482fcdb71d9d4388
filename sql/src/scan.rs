//! A small lexer over SQL text, enough to tell code from string literals, quoted
//! identifiers and comments — so placeholders are renumbered, nondeterministic functions
//! found and statements counted only where they are code. Not a SQL parser: SQLite prepares
//! every statement at load and is the judge of syntax.

/// A piece of SQL code outside literals and comments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// A word: keyword, identifier or function name (lowercased).
    Word(String),
    /// `$n`.
    Placeholder(u32),
    /// Any other character of code.
    Punct(char),
    /// A literal, a quoted identifier or a comment, kept verbatim (renderings copy it).
    Opaque(String),
    /// White space.
    Space(String),
}

/// The tokens of `sql`, in order; their texts concatenate back to `sql`, placeholders as
/// `$n`.
pub fn tokens(sql: &str) -> Vec<Token> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (token, next) = token_at(&chars, i);
        out.push(token);
        i = next;
    }
    out
}

fn token_at(chars: &[char], i: usize) -> (Token, usize) {
    let c = chars[i];
    let rest = |end: usize| chars[i..end].iter().collect::<String>();
    match c {
        '\'' | '"' | '`' => {
            let end = quoted_end(chars, i, c);
            (Token::Opaque(rest(end)), end)
        }
        '-' if chars.get(i + 1) == Some(&'-') => {
            let end = chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |p| i + p);
            (Token::Opaque(rest(end)), end)
        }
        '/' if chars.get(i + 1) == Some(&'*') => {
            let end = (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars[j] == '*' && chars[j + 1] == '/')
                .map_or(chars.len(), |j| j + 2);
            (Token::Opaque(rest(end)), end)
        }
        '$' if chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()) => {
            let end = (i + 1..chars.len()).find(|&j| !chars[j].is_ascii_digit()).unwrap_or(chars.len());
            let n = rest(end)[1..].parse().unwrap_or(u32::MAX);
            (Token::Placeholder(n), end)
        }
        c if c.is_whitespace() => {
            let end = (i..chars.len()).find(|&j| !chars[j].is_whitespace()).unwrap_or(chars.len());
            (Token::Space(rest(end)), end)
        }
        c if c.is_alphanumeric() || c == '_' => {
            let end =
                (i..chars.len()).find(|&j| !(chars[j].is_alphanumeric() || chars[j] == '_')).unwrap_or(chars.len());
            (Token::Word(rest(end).to_lowercase()), end)
        }
        c => (Token::Punct(c), i + 1),
    }
}

/// The index just past the literal opened by `quote` at `start` (a doubled quote inside
/// is an escaped one); the end of the text if it never closes (SQLite then says so).
fn quoted_end(chars: &[char], start: usize, quote: char) -> usize {
    let mut j = start + 1;
    while j < chars.len() {
        if chars[j] == quote {
            if chars.get(j + 1) == Some(&quote) {
                j += 2;
                continue;
            }
            return j + 1;
        }
        j += 1;
    }
    chars.len()
}

/// The words of code, in order, with whether each is followed (past white space) by `(`.
pub fn words_and_calls(tokens: &[Token]) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    for (k, t) in tokens.iter().enumerate() {
        if let Token::Word(w) = t {
            let called =
                tokens[k + 1..].iter().find(|t| !matches!(t, Token::Space(_))).is_some_and(|t| *t == Token::Punct('('));
            out.push((w.as_str(), called));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_inside_a_string_or_comment_is_not_one() {
        let t = tokens("SELECT '$1', \"$2\" -- $3\n, $4 /* $5 */");
        let found: Vec<u32> =
            t.iter().filter_map(|t| if let Token::Placeholder(n) = t { Some(*n) } else { None }).collect();
        assert_eq!(found, vec![4]);
    }

    #[test]
    fn a_doubled_quote_does_not_end_a_literal() {
        let t = tokens("'it''s $1' $2");
        assert_eq!(t[0], Token::Opaque("'it''s $1'".into()));
        assert_eq!(t[2], Token::Placeholder(2));
    }
}
