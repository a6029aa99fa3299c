//! Stage one: TOML text → a loosely typed tree where every key and value knows its 1-based
//! line:column. Built on `toml_edit::Document`, which keeps byte spans; nothing here judges the
//! content, so `validate` sees exactly what the user wrote.

use crate::error::Problem;

/// A 1-based line and column (columns count characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

impl Pos {
    pub const START: Pos = Pos { line: 1, column: 1 };

    pub fn problem(self, message: impl Into<String>) -> Problem {
        Problem {
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }
}

/// Converts byte offsets into line:column.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// Whether each line is pure ASCII (then a column is a byte offset: O(1) to locate).
    ascii: Vec<bool>,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let ascii = starts
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let end = starts.get(i + 1).copied().unwrap_or(text.len());
                text.as_bytes().get(s..end).is_some_and(|b| b.is_ascii())
            })
            .collect();
        Self {
            text,
            starts,
            ascii,
        }
    }

    pub fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        if self.ascii.get(line - 1).copied().unwrap_or(false) {
            return Pos {
                line,
                column: offset.saturating_sub(start) + 1,
            };
        }
        // Count characters up to the offset; an offset inside a character counts that character.
        let column = self
            .text
            .get(start..)
            .unwrap_or("")
            .char_indices()
            .take_while(|(i, _)| start + i < offset)
            .count()
            + 1;
        Pos { line, column }
    }

    fn span_pos(&self, span: Option<std::ops::Range<usize>>, fallback: Pos) -> Pos {
        span.map_or(fallback, |s| self.pos(s.start))
    }
}

/// A value as written, with where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub kind: Kind,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// Dates and times: valid TOML, never valid in a scenario.
    Datetime(String),
    Array(Vec<Value>),
    Table(Table),
    /// `[[x]]` blocks.
    Tables(Vec<Table>),
}

impl Kind {
    /// "a string", "an integer", ... for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Str(_) => "a string",
            Kind::Int(_) => "an integer",
            Kind::Float(_) => "a float",
            Kind::Bool(_) => "a boolean",
            Kind::Datetime(_) => "a date-time",
            Kind::Array(_) => "an array",
            Kind::Table(_) => "a table",
            Kind::Tables(_) => "an array of tables",
        }
    }
}

/// One `key = value` (or sub-table) of a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_pos: Pos,
    pub value: Value,
}

/// A table in the order it was written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// The `[header]` (or `{` of an inline table, or the key of a dotted table).
    pub pos: Pos,
    pub entries: Vec<Entry>,
}

impl Table {
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }
}

/// Parses TOML; a syntax error becomes one located problem.
pub fn parse(text: &str) -> Result<Table, Problem> {
    let lines = Lines::new(text);
    match toml_edit::Document::parse(text) {
        Ok(doc) => Ok(convert_table(&lines, doc.as_table(), Pos::START)),
        Err(e) => {
            let pos = lines.span_pos(e.span(), Pos::START);
            let msg = e.message().trim().replace('\n', " ");
            Err(pos.problem(format!("TOML syntax error: {msg}")))
        }
    }
}

fn convert_table(lines: &Lines<'_>, t: &toml_edit::Table, fallback: Pos) -> Table {
    let pos = lines.span_pos(t.span(), fallback);
    let mut entries = Vec::new();
    for (k, item) in t.iter() {
        let key_pos = lines.span_pos(t.key(k).and_then(|k| k.span()), pos);
        if let Some(value) = convert_item(lines, item, key_pos) {
            entries.push(Entry {
                key: k.to_string(),
                key_pos,
                value,
            });
        }
    }
    Table { pos, entries }
}

fn convert_item(lines: &Lines<'_>, item: &toml_edit::Item, key_pos: Pos) -> Option<Value> {
    match item {
        toml_edit::Item::None => None,
        toml_edit::Item::Value(v) => Some(convert_value(lines, v, key_pos)),
        toml_edit::Item::Table(t) => {
            let table = convert_table(lines, t, key_pos);
            Some(Value {
                pos: table.pos,
                kind: Kind::Table(table),
            })
        }
        toml_edit::Item::ArrayOfTables(a) => {
            let tables: Vec<Table> = a.iter().map(|t| convert_table(lines, t, key_pos)).collect();
            let pos = tables.first().map_or(key_pos, |t| t.pos);
            Some(Value {
                pos,
                kind: Kind::Tables(tables),
            })
        }
    }
}

fn convert_value(lines: &Lines<'_>, v: &toml_edit::Value, fallback: Pos) -> Value {
    use toml_edit::Value as V;
    let pos = lines.span_pos(v.span(), fallback);
    let kind = match v {
        V::String(s) => Kind::Str(s.value().clone()),
        V::Integer(i) => Kind::Int(*i.value()),
        V::Float(f) => Kind::Float(*f.value()),
        V::Boolean(b) => Kind::Bool(*b.value()),
        V::Datetime(d) => Kind::Datetime(d.value().to_string()),
        V::Array(a) => Kind::Array(a.iter().map(|x| convert_value(lines, x, pos)).collect()),
        V::InlineTable(t) => {
            let mut entries = Vec::new();
            for (k, x) in t.iter() {
                let key_pos = lines.span_pos(t.key(k).and_then(|k| k.span()), pos);
                entries.push(Entry {
                    key: k.to_string(),
                    key_pos,
                    value: convert_value(lines, x, key_pos),
                });
            }
            Kind::Table(Table { pos, entries })
        }
    };
    Value { kind, pos }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_characters() {
        let l = Lines::new("ab\nçd = 1\n");
        assert_eq!(l.pos(0), Pos { line: 1, column: 1 });
        assert_eq!(l.pos(3), Pos { line: 2, column: 1 });
        // `d` is after a two-byte character: byte 5, column 2.
        assert_eq!(l.pos(5), Pos { line: 2, column: 2 });
        assert_eq!(l.pos(999), Pos { line: 3, column: 1 });
    }

    #[test]
    fn keys_values_and_headers_are_located() {
        let t = parse("name = \"x\"\n\n[[case]]\nlabel = \"a\"\nmeasure.batch = 3\n")
            .unwrap_or_default();
        let name = t.get("name").map(|e| (e.key_pos, e.value.pos));
        assert_eq!(
            name,
            Some((Pos { line: 1, column: 1 }, Pos { line: 1, column: 8 }))
        );
        let Some(Kind::Tables(cases)) = t.get("case").map(|e| &e.value.kind) else {
            panic!("no cases");
        };
        assert_eq!(cases.len(), 1);
        let case = &cases[0];
        assert_eq!(case.pos, Pos { line: 3, column: 1 });
        assert_eq!(
            case.get("label").map(|e| e.key_pos),
            Some(Pos { line: 4, column: 1 })
        );
        let m = case.get("measure").map(|e| e.key_pos);
        assert_eq!(m, Some(Pos { line: 5, column: 1 }));
    }

    #[test]
    fn syntax_errors_are_located() {
        let p = parse("name = \"x\"\nsize = = 3\n").err();
        let p = p.map(|p| (p.line, p.message.starts_with("TOML syntax error")));
        assert_eq!(p, Some((2, true)));
    }
}
