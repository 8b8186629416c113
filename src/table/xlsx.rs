//! A minimal Office Open XML workbook (`.xlsx`) writer: one sheet per [`Table`], header row in
//! bold and frozen, numbers as numbers, text as inline strings.
//!
//! The ZIP container is written here (deflate by `miniz_oxide`, CRC-32 below), with a fixed
//! timestamp so the same tables give the same bytes. No file system access: the bytes are returned,
//! so the page (wasm) and the CLI share it. Excel's limits are respected: sheet names ≤ 31 characters
//! without `[]:*?/\`, ≤ 1,048,576 rows (extra rows are dropped and a note row says how many),
//! ≤ 32,767 characters per cell. Archives over 4 GiB (ZIP64) are not supported.

use super::{Cell, Table};
use std::fmt::Write;

/// Excel's row limit per sheet (header included).
pub const MAX_ROWS: usize = 1_048_576;
/// Excel's limit on characters per cell.
pub const MAX_CELL_CHARS: usize = 32_767;

/// Builds a workbook with one sheet per table, in order.
pub fn workbook(tables: &[Table]) -> Vec<u8> {
    let names = sheet_names(tables.iter().map(|t| t.name.as_str()));
    let mut zip = ZipWriter::default();
    zip.add("[Content_Types].xml", content_types(tables.len()).as_bytes());
    zip.add("_rels/.rels", ROOT_RELS.as_bytes());
    zip.add("xl/workbook.xml", workbook_xml(&names).as_bytes());
    zip.add("xl/_rels/workbook.xml.rels", workbook_rels(tables.len()).as_bytes());
    zip.add("xl/styles.xml", STYLES.as_bytes());
    for (i, t) in tables.iter().enumerate() {
        zip.add(&format!("xl/worksheets/sheet{}.xml", i + 1), sheet_xml(t).as_bytes());
    }
    zip.finish()
}

/// Valid, unique sheet names: forbidden characters become `_`, at most 31 characters.
pub fn sheet_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, n) in names.enumerate() {
        let clean: String = n.chars().map(|c| if "[]:*?/\\".contains(c) || c.is_control() { '_' } else { c }).collect();
        let clean = clean.trim_matches('\'').to_string();
        let mut base: String = clean.chars().take(31).collect();
        if base.is_empty() {
            base = format!("Sheet{}", i + 1);
        }
        let mut name = base.clone();
        let mut k = 2;
        while out.iter().any(|o| o.eq_ignore_ascii_case(&name)) {
            let suffix = format!("~{k}");
            name = base.chars().take(31 - suffix.len()).collect::<String>() + &suffix;
            k += 1;
        }
        out.push(name);
    }
    out
}

const ROOT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#;

const STYLES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>"#;

fn content_types(sheets: usize) -> String {
    let mut s = String::from(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>"#,
    );
    for i in 1..=sheets {
        let _ = write!(
            s,
            r#"<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>"#
        );
    }
    s.push_str("</Types>");
    s
}

fn workbook_xml(names: &[String]) -> String {
    let mut s = String::from(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>"#,
    );
    for (i, n) in names.iter().enumerate() {
        let _ = write!(s, r#"<sheet name="{}" sheetId="{}" r:id="rId{}"/>"#, escape(n), i + 1, i + 1);
    }
    s.push_str("</sheets></workbook>");
    s
}

fn workbook_rels(sheets: usize) -> String {
    let mut s = String::from(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
    );
    for i in 1..=sheets {
        let _ = write!(
            s,
            r#"<Relationship Id="rId{i}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet{i}.xml"/>"#
        );
    }
    let _ = write!(
        s,
        r#"<Relationship Id="rId{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>"#,
        sheets + 1
    );
    s.push_str("</Relationships>");
    s
}

/// Column letters of a 0-based column index (`0` → `A`, `26` → `AA`).
pub fn column_letters(mut c: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'A' + (c % 26) as u8);
        if c < 26 {
            break;
        }
        c = c / 26 - 1;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

fn sheet_xml(t: &Table) -> String {
    let cols: Vec<String> = (0..t.columns.len().min(16_384)).map(column_letters).collect();
    let mut s = String::with_capacity(64 + t.rows.len() * t.columns.len() * 24);
    s.push_str(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><sheetData>"#);
    s.push_str(r#"<row r="1">"#);
    for (c, name) in cols.iter().zip(&t.columns) {
        let _ = write!(s, r#"<c r="{c}1" s="1" t="inlineStr"><is><t xml:space="preserve">{}</t></is></c>"#, escape(&clip(name)));
    }
    s.push_str("</row>");
    let room = MAX_ROWS - 1;
    let (kept, dropped) = if t.rows.len() > room { (room - 1, t.rows.len() - (room - 1)) } else { (t.rows.len(), 0) };
    for (r, row) in t.rows.iter().take(kept).enumerate() {
        let rn = r + 2;
        let _ = write!(s, r#"<row r="{rn}">"#);
        for (c, cell) in cols.iter().zip(row) {
            write_cell(&mut s, &format!("{c}{rn}"), cell);
        }
        s.push_str("</row>");
    }
    if dropped > 0 {
        let rn = kept + 2;
        let note = format!("{dropped} more rows not shown: Excel allows {MAX_ROWS} rows per sheet (use the CSV export)");
        let _ = write!(s, r#"<row r="{rn}"><c r="A{rn}" t="inlineStr"><is><t>{}</t></is></c></row>"#, escape(&note));
    }
    s.push_str("</sheetData></worksheet>");
    s
}

fn write_cell(s: &mut String, r: &str, cell: &Cell) {
    match cell {
        Cell::Empty => {}
        Cell::Int(v) => {
            let _ = write!(s, r#"<c r="{r}"><v>{v}</v></c>"#);
        }
        Cell::Float(v) if v.is_finite() => {
            let _ = write!(s, r#"<c r="{r}"><v>{v}</v></c>"#);
        }
        Cell::Float(_) => {}
        Cell::Micros(ns) => {
            let _ = write!(s, r#"<c r="{r}"><v>{}</v></c>"#, super::format_micros(*ns));
        }
        Cell::Bool(b) => {
            let _ = write!(s, r#"<c r="{r}" t="b"><v>{}</v></c>"#, u8::from(*b));
        }
        Cell::Text(t) => {
            let _ = write!(s, r#"<c r="{r}" t="inlineStr"><is><t xml:space="preserve">{}</t></is></c>"#, escape(&clip(t)));
        }
    }
}

/// Cuts text to Excel's per-cell limit.
fn clip(t: &str) -> std::borrow::Cow<'_, str> {
    if t.chars().count() <= MAX_CELL_CHARS {
        std::borrow::Cow::Borrowed(t)
    } else {
        std::borrow::Cow::Owned(t.chars().take(MAX_CELL_CHARS).collect())
    }
}

/// XML-escapes text (see [`super::markup::escape`]).
pub fn escape(t: &str) -> String {
    super::markup::escape(t)
}

use crate::support::crc32::crc32;

/// A ZIP archive built in memory (no data descriptors, no ZIP64).
#[derive(Default)]
struct ZipWriter {
    out: Vec<u8>,
    central: Vec<u8>,
    entries: u16,
}

/// DOS date of 1980-01-01 (the ZIP epoch), time 00:00: a fixed timestamp keeps output reproducible.
const DOS_DATE: u16 = (1 << 5) | 1;

impl ZipWriter {
    fn add(&mut self, name: &str, data: &[u8]) {
        let crc = crc32(data);
        let deflated = miniz_oxide::deflate::compress_to_vec(data, 6);
        let (method, body): (u16, &[u8]) = if deflated.len() < data.len() { (8, &deflated) } else { (0, data) };
        let offset = self.out.len() as u32;
        let put16 = |v: &mut Vec<u8>, x: u16| v.extend_from_slice(&x.to_le_bytes());
        let put32 = |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&x.to_le_bytes());
        // local file header
        put32(&mut self.out, 0x0403_4b50);
        put16(&mut self.out, 20);
        put16(&mut self.out, 0x0800); // bit 11: names are UTF-8
        put16(&mut self.out, method);
        put16(&mut self.out, 0);
        put16(&mut self.out, DOS_DATE);
        put32(&mut self.out, crc);
        put32(&mut self.out, body.len() as u32);
        put32(&mut self.out, data.len() as u32);
        put16(&mut self.out, name.len() as u16);
        put16(&mut self.out, 0);
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(body);
        // central directory entry
        let c = &mut self.central;
        put32(c, 0x0201_4b50);
        put16(c, 20);
        put16(c, 20);
        put16(c, 0x0800);
        put16(c, method);
        put16(c, 0);
        put16(c, DOS_DATE);
        put32(c, crc);
        put32(c, body.len() as u32);
        put32(c, data.len() as u32);
        put16(c, name.len() as u16);
        put16(c, 0);
        put16(c, 0);
        put16(c, 0);
        put16(c, 0);
        put32(c, 0);
        put32(c, offset);
        c.extend_from_slice(name.as_bytes());
        self.entries += 1;
    }

    fn finish(mut self) -> Vec<u8> {
        let cd_offset = self.out.len() as u32;
        let cd_size = self.central.len() as u32;
        self.out.extend_from_slice(&self.central);
        let o = &mut self.out;
        o.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        o.extend_from_slice(&[0, 0, 0, 0]);
        o.extend_from_slice(&self.entries.to_le_bytes());
        o.extend_from_slice(&self.entries.to_le_bytes());
        o.extend_from_slice(&cd_size.to_le_bytes());
        o.extend_from_slice(&cd_offset.to_le_bytes());
        o.extend_from_slice(&[0, 0]);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_letters_wrap() {
        assert_eq!(column_letters(0), "A");
        assert_eq!(column_letters(25), "Z");
        assert_eq!(column_letters(26), "AA");
        assert_eq!(column_letters(701), "ZZ");
        assert_eq!(column_letters(702), "AAA");
    }

    #[test]
    fn sheet_names_are_valid_and_unique() {
        let n = sheet_names(["a/b", "x".repeat(40).as_str(), &"x".repeat(35), ""].into_iter());
        assert_eq!(n[0], "a_b");
        assert_eq!(n[1].chars().count(), 31);
        assert_ne!(n[1], n[2]);
        assert!(n[2].chars().count() <= 31);
        assert_eq!(n[3], "Sheet4");
    }

    #[test]
    fn escapes_and_drops_control_chars() {
        assert_eq!(escape("a<b>&\"c\u{1}"), "a&lt;b&gt;&amp;&quot;c");
    }
}
