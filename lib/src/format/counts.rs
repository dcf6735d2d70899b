//! `-c`: each file's number of results, counted as the hits are read, so
//! that an endless stream costs a file's count, not every hit it held
//! (audit 277: `yes HIT | vg-format -c` grew by 400 bytes a hit). A result
//! read twice (two saved streams joined) is one, as every other mode shows
//! it once.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::path::Path;

use super::{display_path, paint, FormatOptions, PATH};
use crate::records::HitRecord;

/// The results counted so far, per path as `-l` lists them (a revision's
/// hits count with the disk's), in the order the paths came.
#[derive(Default)]
pub(super) struct Counts {
    paths: Vec<String>,
    results: HashMap<String, HashSet<(Option<String>, usize, usize)>>,
}

impl Counts {
    /// Count `hit`, a result of the path it names from `cwd`.
    pub(super) fn add(&mut self, hit: &HitRecord, cwd: &Path) {
        let path = display_path(hit, cwd);
        let result = (hit.rev.clone(), hit.start_line, hit.end_line);
        match self.results.get_mut(&path) {
            Some(results) => {
                results.insert(result);
            }
            None => {
                self.results.insert(path.clone(), HashSet::from([result]));
                self.paths.push(path);
            }
        }
    }

    /// Write each path with its count, as `rg -c` does (`-I`: counts alone).
    pub(super) fn write(&self, out: &mut dyn Write, opts: &FormatOptions) -> io::Result<()> {
        for path in &self.paths {
            let count = self.results[path].len();
            if !opts.with_filename {
                writeln!(out, "{count}")?;
                continue;
            }
            writeln!(out, "{}{}{count}", paint(opts.color, PATH, &opts.shown_path(path)), opts.after_path(":"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(file: &str, start: usize, rev: Option<&str>) -> HitRecord {
        let json = serde_json::json!({"type": "hit", "root": "/r", "file": file, "start_line": start,
            "end_line": start + 1, "score": 0.5, "text": "x", "rev": rev});
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_result_read_twice_counts_once_and_files_keep_their_order() {
        let mut counts = Counts::default();
        let cwd = Path::new("/r");
        for h in [hit("b.rs", 1, None), hit("a.rs", 5, None), hit("b.rs", 1, None), hit("b.rs", 9, None)] {
            counts.add(&h, cwd);
        }
        counts.add(&hit("b.rs", 1, Some("0123456789012345678901234567890123456789")), cwd);
        let opts = super::super::tests::opts(super::super::OutputMode::Count, "/r");
        let mut out = Vec::new();
        counts.write(&mut out, &opts).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "b.rs:3\na.rs:1\n");
    }
}
