//! Rendering commit records (vg-log): a short block per commit for people,
//! one line per commit for pipes, the files they touched for `--files`.

use std::collections::HashMap;
use std::io::{self, Write};

use super::columns::shown_within_columns;
use super::{display_file, paint, painted_score, FormatOptions, OutputMode, DIM, LINE_NO, PATH};
use crate::records::{write_record, CommitRecord};

const SHA: &str = "\x1b[33m";
const BOLD: &str = "\x1b[1m";

/// Render `commits` to `out` in `opts.mode`.
/// What `--files` and `--count` cannot show of `commits`: those whose
/// records list fewer files than they touched (`MAX_COMMIT_PATHS`), as a
/// note for stderr; None when nothing was cut or the mode lists no files.
pub fn files_left_out(commits: &[CommitRecord], mode: OutputMode) -> Option<String> {
    if !matches!(mode, OutputMode::Files | OutputMode::Count) {
        return None;
    }
    let cut: Vec<&CommitRecord> = commits.iter().filter(|c| c.paths_total > c.paths.len()).collect();
    let first = cut.first()?;
    Some(format!(
        "{} of the commits touched more files than their records list (the first {}): git show --name-only {} lists them all",
        cut.len(),
        first.paths.len(),
        &first.sha[..first.sha.len().min(12)]
    ))
}

pub fn render_commits(out: &mut dyn Write, commits: &[CommitRecord], opts: &FormatOptions) -> io::Result<()> {
    match opts.mode {
        OutputMode::Json => commits.iter().try_for_each(|c| write_record(out, c)),
        OutputMode::Files => {
            for (path, _) in touched_files(commits, opts) {
                write!(out, "{}{}", paint(opts.color, PATH, &opts.shown_path(&path)), opts.after_path("\n"))?;
            }
            Ok(())
        }
        OutputMode::Count => {
            for (path, n) in touched_files(commits, opts) {
                // `-I`: the counts alone, as a search's are.
                if !opts.with_filename {
                    writeln!(out, "{n}")?;
                    continue;
                }
                writeln!(out, "{}{}{n}", paint(opts.color, PATH, &opts.shown_path(&path)), opts.after_path(":"))?;
            }
            Ok(())
        }
        OutputMode::Flat => commits.iter().try_for_each(|c| {
            let sha = paint(opts.color, SHA, &c.sha);
            let subject = shown_within_columns(&c.subject, opts, |subject| subject);
            writeln!(out, "{sha} {} {}: {subject}", opts.shown(day(&c.date)), opts.shown(&c.author))
        }),
        OutputMode::Pretty => {
            for (i, c) in commits.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                render_block(out, c, opts)?;
            }
            Ok(())
        }
    }
}

/// One commit for people: sha, date, author and score; the subject; the
/// lines that matched. What the repository wrote (author, subject, lines,
/// paths) has its control characters shown, not obeyed, as in `render`.
fn render_block(out: &mut dyn Write, c: &CommitRecord, opts: &FormatOptions) -> io::Result<()> {
    let color = opts.color;
    let short = c.sha.get(..12).unwrap_or(&c.sha);
    writeln!(
        out,
        "{} {} {} {}",
        paint(color, SHA, short),
        paint(color, DIM, &opts.shown(day(&c.date))),
        opts.shown(&c.author),
        painted_score(color, c.score, 2)
    )?;
    // A commit's subject is a line of its own under `-M`, as a hit's lines are.
    let subject = shown_within_columns(&c.subject, opts, |subject| paint(color, BOLD, &subject).into());
    writeln!(out, "    {subject}")?;
    let query = super::QueryTerms::of(&c.query);
    for line in c.lines.iter().take(opts.lines_per_hit.max(1)) {
        let text = shown_within_columns(&line.text, opts, |text| super::highlight(&text, &query, color).into());
        match (&line.path, line.line) {
            (Some(path), Some(n)) => {
                let path = display_file(Some(&c.root), path, &opts.cwd);
                let path = paint(color, PATH, &opts.shown_path(&path));
                let n = paint(color, LINE_NO, &n.to_string());
                // `-N`: no line number, as a search's lines under a heading;
                // `-I`: no path; `-0`: a NUL after the path, as a search's.
                match (opts.with_filename, opts.line_number) {
                    (true, true) => writeln!(out, "    {path}{}{n}: {text}", opts.after_path(":"))?,
                    (true, false) => writeln!(out, "    {path}{}{text}", opts.after_path(": "))?,
                    (false, true) => writeln!(out, "    {n}: {text}")?,
                    (false, false) => writeln!(out, "    {text}")?,
                }
            }
            _ => writeln!(out, "    {text}")?,
        }
    }
    Ok(())
}

/// The date part of an ISO 8601 date: up to its `T`, so that an expanded
/// year (`+10000-01-01T…`) keeps its day.
fn day(date: &str) -> &str {
    date.split_once('T').map_or(date, |(day, _)| day)
}

/// The files the commits touched, as a person at `opts.cwd` would type
/// them, in order of the first commit that touched each, with how many did.
fn touched_files(commits: &[CommitRecord], opts: &FormatOptions) -> Vec<(String, usize)> {
    let mut order: Vec<(String, usize)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for c in commits {
        for path in &c.paths {
            let shown = display_file(Some(&c.root), path, &opts.cwd);
            match index.get(&shown) {
                Some(&i) => order[i].1 += 1,
                None => {
                    index.insert(shown.clone(), order.len());
                    order.push((shown, 1));
                }
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::CommitLineRecord;

    #[test]
    fn files_a_record_does_not_list_are_said_to_be_left_out() {
        let mut big = commit("0123456789abcdef", &["a.rs", "b.rs"]);
        big.paths_total = 302;
        let small = commit("fedcba9876543210", &["c.rs"]);
        let said = files_left_out(&[small.clone(), big], OutputMode::Files).unwrap();
        assert!(said.starts_with("1 of the commits touched more files") && said.contains("0123456789ab"), "{said}");
        assert_eq!(files_left_out(&[small], OutputMode::Files), None);
    }

    fn commit(sha: &str, paths: &[&str]) -> CommitRecord {
        CommitRecord {
            v: 1,
            root: "/p".into(),
            sha: sha.into(),
            date: "2024-05-01T14:03:00+02:00".into(),
            time: 1_714_564_980,
            author: "Ada".into(),
            email: "ada@example.org".into(),
            subject: "Retry failed uploads".into(),
            score: 0.61,
            matched: "diff".into(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            paths_total: paths.len(),
            lines: vec![CommitLineRecord {
                path: Some("src/up.rs".into()),
                line: Some(12),
                text: "+retry()".into(),
                later: Default::default(),
            }],
            query: "retry uploads".into(),
            later: Default::default(),
        }
    }

    fn opts(mode: OutputMode) -> FormatOptions {
        FormatOptions {
            mode,
            color: false,
            before: 0,
            after: 0,
            cwd: "/p".into(),
            lines_per_hit: 3,
            line_number: true,
            with_filename: true,
            terminal: false,
            null: false,
            max_columns: None,
            max_columns_preview: false,
        }
    }

    fn rendered(commits: &[CommitRecord], mode: OutputMode) -> String {
        let mut out = Vec::new();
        render_commits(&mut out, commits, &opts(mode)).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn people_see_sha_date_author_subject_and_the_matching_lines() {
        let text = rendered(&[commit("abcdef0123456789", &["src/up.rs"])], OutputMode::Pretty);
        assert_eq!(text, "abcdef012345 2024-05-01 Ada 0.61\n    Retry failed uploads\n    src/up.rs:12: +retry()\n");
    }

    /// `-N` and `-c -I` were passed over for commits, as a search's hits take them.
    #[test]
    fn no_line_numbers_and_counts_without_names_as_for_hits() {
        let commits = [commit("abcdef0123456789", &["src/up.rs"]), commit("0123456789abcdef", &["src/up.rs"])];
        let mut out = Vec::new();
        render_commits(&mut out, &commits[..1], &FormatOptions { line_number: false, ..opts(OutputMode::Pretty) })
            .unwrap();
        assert!(String::from_utf8(out).unwrap().ends_with("    src/up.rs: +retry()\n"));
        let mut out = Vec::new();
        render_commits(&mut out, &commits, &FormatOptions { with_filename: false, ..opts(OutputMode::Count) }).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "2\n");
    }

    /// `-0` puts a NUL after a diff line's path, as after a hit's: it was taken and passed over.
    #[test]
    fn null_follows_a_lines_path_as_a_hits() {
        let mut odd = commit("abcdef0123456789", &["src/up.rs"]);
        odd.lines[0].path = Some("src/u\np.rs".into());
        for (line_number, seen) in [(true, "    src/u\np.rs\x0012: +retry()\n"), (false, "    src/u\np.rs\0+retry()\n")]
        {
            let mut out = Vec::new();
            let opts = FormatOptions { null: true, line_number, ..opts(OutputMode::Pretty) };
            render_commits(&mut out, std::slice::from_ref(&odd), &opts).unwrap();
            assert!(String::from_utf8(out).unwrap().ends_with(seen), "{line_number}");
        }
    }

    #[test]
    fn pipes_get_a_line_per_commit_and_files_lists_touched_paths_once() {
        let commits = [commit("aaa", &["src/up.rs", "README.md"]), commit("bbb", &["src/up.rs"])];
        assert_eq!(
            rendered(&commits, OutputMode::Flat),
            "aaa 2024-05-01 Ada: Retry failed uploads\nbbb 2024-05-01 Ada: Retry failed uploads\n"
        );
        assert_eq!(rendered(&commits, OutputMode::Files), "src/up.rs\nREADME.md\n");
        assert_eq!(rendered(&commits, OutputMode::Count), "src/up.rs:2\nREADME.md:1\n");
    }

    #[test]
    fn on_a_terminal_what_the_repository_wrote_is_shown_not_obeyed() {
        let mut hostile = commit("aaa", &["src/\x1b]0;t\x07.rs"]);
        hostile.subject = "Fix \x1b[2J it".into();
        for (mode, seen) in [
            (OutputMode::Flat, "aaa 2024-05-01 Ada: Fix ^[[2J it\n"),
            (OutputMode::Files, "src/^[]0;t^G.rs\n"),
            (OutputMode::Count, "src/^[]0;t^G.rs:1\n"),
        ] {
            let mut out = Vec::new();
            render_commits(&mut out, std::slice::from_ref(&hostile), &FormatOptions { terminal: true, ..opts(mode) })
                .unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), seen);
        }
        assert_eq!(
            rendered(&[hostile.clone()], OutputMode::Flat),
            "aaa 2024-05-01 Ada: Fix \x1b[2J it\n",
            "raw in a pipe"
        );
        hostile.date = "\x1b[31mRED\x1b[0m".into();
        let mut out = Vec::new();
        render_commits(&mut out, &[hostile], &FormatOptions { terminal: true, ..opts(OutputMode::Pretty) }).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("aaa ^[[31mRED^[[0m Ada") && !out.contains('\x1b'), "{out}");
    }

    #[test]
    fn a_year_past_four_digits_keeps_its_whole_day() {
        let mut far = commit("aaa", &["a.rs"]);
        far.date = "+3170843-11-07T09:46:39+00:00".into();
        let mut early = commit("bbb", &["a.rs"]);
        early.date = "-1199-02-15T00:00:00+00:00".into();
        assert_eq!(
            rendered(&[far, early], OutputMode::Flat),
            "aaa +3170843-11-07 Ada: Retry failed uploads\nbbb -1199-02-15 Ada: Retry failed uploads\n"
        );
    }
}
