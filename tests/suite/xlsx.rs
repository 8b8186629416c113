//! The `.xlsx` workbook of a real fixture opens in a real reader (Python openpyxl) with one sheet
//! per table, the right header, the right row count and numbers stored as numbers. The ZIP
//! container is also checked here, entry by entry (CRC-32 of every inflated entry).
//!
//! openpyxl comes from `pip install openpyxl` (scripts/test-deps.sh). Without python3 or openpyxl the
//! reader half is skipped with a loud message; the container half always runs.

use std::process::Command;
use traceprism::report::{table_names, workbook, TABLES};
use traceprism::table::{xlsx, Cell};
use traceprism::{analyze_path, Analysis, Options};

fn load(name: &str) -> Analysis {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
    analyze_path(&path, Options::default()).expect("fixture loads")
}

fn u16_at(b: &[u8], i: usize) -> usize {
    u16::from_le_bytes([b[i], b[i + 1]]) as usize
}
fn u32_at(b: &[u8], i: usize) -> usize {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]) as usize
}

/// Reads every entry of a ZIP through its central directory: (name, inflated bytes), checking CRCs.
fn unzip(b: &[u8]) -> Vec<(String, Vec<u8>)> {
    let eocd = (0..b.len() - 21).rev().find(|&i| u32_at(b, i) == 0x0605_4b50).expect("end of central directory");
    let (n, mut p) = (u16_at(b, eocd + 10), u32_at(b, eocd + 16));
    let mut out = Vec::new();
    for _ in 0..n {
        assert_eq!(u32_at(b, p), 0x0201_4b50, "central directory signature");
        let (method, crc, csize, usize_) = (u16_at(b, p + 10), u32_at(b, p + 16) as u32, u32_at(b, p + 20), u32_at(b, p + 24));
        let (name_len, extra, comment, local) = (u16_at(b, p + 28), u16_at(b, p + 30), u16_at(b, p + 32), u32_at(b, p + 42));
        let name = String::from_utf8(b[p + 46..p + 46 + name_len].to_vec()).unwrap();
        assert_eq!(u32_at(b, local), 0x0403_4b50, "local header of {name}");
        let start = local + 30 + u16_at(b, local + 26) + u16_at(b, local + 28);
        let body = &b[start..start + csize];
        let data = match method {
            0 => body.to_vec(),
            8 => miniz_oxide::inflate::decompress_to_vec(body).expect("inflate"),
            m => panic!("method {m}"),
        };
        assert_eq!(data.len(), usize_, "size of {name}");
        assert_eq!(traceprism::support::crc32::crc32(&data), crc, "crc of {name}");
        out.push((name, data));
        p += 46 + name_len + extra + comment;
    }
    out
}

#[test]
fn workbook_container_is_valid_zip_with_every_sheet() {
    let a = load("vllm_moe_tp8_eager_b200.json.gz");
    let bytes = workbook(&a);
    assert_eq!(&bytes[..4], b"PK\x03\x04");
    let entries = unzip(&bytes);
    let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    for required in ["[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/_rels/workbook.xml.rels", "xl/styles.xml"] {
        assert!(names.contains(&required), "missing {required}");
    }
    assert_eq!(names.iter().filter(|n| n.starts_with("xl/worksheets/sheet")).count(), TABLES.len());
    let wb = String::from_utf8(entries.iter().find(|e| e.0 == "xl/workbook.xml").unwrap().1.clone()).unwrap();
    for t in table_names() {
        assert!(wb.contains(&format!("<sheet name=\"{t}\"")), "sheet {t} in workbook.xml");
    }
    // Same tables, same bytes (fixed timestamps). (Whole-analysis runs can differ: tables order
    // rows with equal times as their hash maps iterate.)
    let tables: Vec<_> = TABLES.iter().map(|def| (def.build)(&a)).collect();
    assert!(xlsx::workbook(&tables) == xlsx::workbook(&tables), "workbook bytes are reproducible");
}

#[test]
fn workbook_opens_in_openpyxl() {
    let a = load("vllm_moe_tp8_eager_b200.json.gz");
    let bytes = workbook(&a);
    let dir = std::env::temp_dir().join(format!("traceprism-xlsx-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("report.xlsx");
    std::fs::write(&file, &bytes).unwrap();

    // What each sheet must hold: name, header, number of data rows, and the first numeric cell.
    let expect: Vec<serde_json::Value> = TABLES
        .iter()
        .map(|def| {
            let (name, t) = (def.name, (def.build)(&a));
            let first_number = t.rows.iter().enumerate().find_map(|(r, row)| {
                row.iter().enumerate().find_map(|(c, cell)| match cell {
                    Cell::Int(_) | Cell::Float(_) | Cell::Micros(_) => cell.as_f64().filter(|v| v.is_finite()).map(|v| (r, c, v)),
                    _ => None,
                })
            });
            serde_json::json!({"name": name, "columns": t.columns, "rows": t.rows.len(), "first_number": first_number})
        })
        .collect();
    let manifest = dir.join("expect.json");
    std::fs::write(&manifest, serde_json::to_string(&expect).unwrap()).unwrap();

    let script = r#"
import json, sys
try:
    import openpyxl
except ImportError:
    print("NO_OPENPYXL"); sys.exit(0)
wb = openpyxl.load_workbook(sys.argv[1], read_only=True)
expect = json.load(open(sys.argv[2]))
assert wb.sheetnames == [e["name"] for e in expect], (wb.sheetnames, [e["name"] for e in expect])
for e in expect:
    ws = wb[e["name"]]
    rows = list(ws.iter_rows(values_only=True))
    assert list(rows[0]) == e["columns"], (e["name"], rows[0], e["columns"])
    assert len(rows) - 1 == e["rows"], (e["name"], len(rows) - 1, e["rows"])
    if e["first_number"]:
        r, c, v = e["first_number"]
        got = rows[r + 1][c]
        assert isinstance(got, (int, float)) and not isinstance(got, bool), (e["name"], got)
        assert abs(got - v) <= 1e-9 * max(1.0, abs(v)), (e["name"], got, v)
print("OK", len(expect), "sheets")
"#;
    let out = match Command::new("python3").arg("-c").arg(script).arg(&file).arg(&manifest).output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!(
                "\n!!!!!!!! SKIPPED: python3 not runnable ({e}); install python3 + openpyxl (scripts/test-deps.sh) !!!!!!!!\n"
            );
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stdout.contains("NO_OPENPYXL") {
        eprintln!("\n!!!!!!!! SKIPPED: openpyxl missing; run `pip install openpyxl` (scripts/test-deps.sh) !!!!!!!!\n");
        return;
    }
    assert!(
        out.status.success() && stdout.starts_with("OK"),
        "openpyxl check failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_users_rules_are_the_last_sheet() {
    let rules = "# my rules\n[[rule]]\npattern = 'nvjet_'\ncategory = \"GEMM-cuBLAS\"\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/vllm_moe_tp8_eager_b200.json.gz");
    let a =
        analyze_path(&path, Options { category_rules: Some(rules.to_string()), ..Options::default() }).expect("loads with rules");
    let entries = unzip(&workbook(&a));
    assert_eq!(entries.iter().filter(|e| e.0.starts_with("xl/worksheets/sheet")).count(), TABLES.len() + 1);
    let wb = String::from_utf8(entries.iter().find(|e| e.0 == "xl/workbook.xml").unwrap().1.clone()).unwrap();
    assert!(wb.contains("<sheet name=\"category_rules\""));
    let t = traceprism::report::user_rules(&a).expect("a rules table");
    assert_eq!(t.rows.len(), rules.lines().count());
    assert_eq!(t.rows[2], vec![Cell::Int(3), Cell::Text("pattern = 'nvjet_'".into())]);
    // Without rules, no such sheet.
    assert!(traceprism::report::user_rules(&load("vllm_moe_tp8_eager_b200.json.gz")).is_none());
}

#[test]
fn cells_that_look_like_formulas_stay_text() {
    // Kernel names, file names and rules come from traces; a spreadsheet must never run them.
    let mut t = traceprism::table::Table::new("hostile", &["name", "value"]);
    for text in ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1:A2)", "<b>&amp;</b>"] {
        t.push(vec![Cell::from(text), Cell::Int(1)]);
    }
    let entries = unzip(&xlsx::workbook(&[t]));
    let sheet = String::from_utf8(entries.iter().find(|e| e.0 == "xl/worksheets/sheet1.xml").unwrap().1.clone()).unwrap();
    assert!(!sheet.contains("<f>") && !sheet.contains("<f "), "no formula element");
    for text in ["=HYPERLINK(&quot;http://x&quot;,&quot;y&quot;)", "+1+1", "-2+3", "@SUM(A1:A2)", "&lt;b&gt;&amp;amp;&lt;/b&gt;"]
    {
        assert!(
            sheet.contains(&format!("t=\"inlineStr\"><is><t xml:space=\"preserve\">{text}</t>")),
            "{text} as an inline string: {sheet}"
        );
    }
}
