//! The crate's layers as ARCHITECTURE.md draws them, held by reading the sources: the operations
//! use nothing of the crate above them, the model nothing but the operations, and no view of the
//! page calls another view (they share `web::app` and are wired by `web::page`).
// Native only: in a browser (`wasm-pack test`) the suite is tests/browser/main.rs.
#![cfg(not(target_family = "wasm"))]

use std::fs;
use std::path::{Path, PathBuf};

fn sources(folder: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![PathBuf::from(folder)];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).unwrap_or_else(|error| panic!("{}: {error}", folder.display())) {
            let path = entry.expect("a readable folder").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push(path);
            }
        }
    }
    assert!(!files.is_empty(), "{folder} has sources");
    files
}

/// Every `crate::<module>` a file names, with its line.
fn crate_paths(path: &Path) -> Vec<(usize, String)> {
    let text = fs::read_to_string(path).expect("a readable source");
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices("crate::") {
            let module: String = line[at + 7..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            found.push((number + 1, module));
        }
    }
    found
}

fn assert_uses_only(folder: &str, allowed: &[&str], exempt: &[&str]) {
    for path in sources(folder) {
        if exempt.iter().any(|name| path.ends_with(name)) {
            continue;
        }
        for (line, module) in crate_paths(&path) {
            assert!(allowed.contains(&module.as_str()), "{}:{line} uses crate::{module}", path.display());
        }
    }
}

#[test]
fn the_operations_use_nothing_above_them() {
    // ops/testing.rs is test code: it borrows the data layer's seeded generator.
    assert_uses_only("src/ops", &["ops"], &["ops/testing.rs"]);
}

#[test]
fn the_model_uses_only_the_operations() {
    assert_uses_only("src/model", &["ops"], &[]);
}

#[test]
fn no_view_calls_another() {
    for path in sources("src/web/views") {
        if path.ends_with("mod.rs") {
            continue;
        }
        let text = fs::read_to_string(&path).expect("a readable source");
        for (number, line) in text.lines().enumerate() {
            let names_a_view = line.contains("views::") || line.trim_start().starts_with("use super::");
            assert!(!names_a_view, "{}:{} reaches another view: {line}", path.display(), number + 1);
        }
    }
}
