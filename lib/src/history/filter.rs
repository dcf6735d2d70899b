//! Which commits a log search may return: by date (git's date forms), by
//! author, by the files they touched.

use anyhow::{anyhow, Result};

use crate::project::is_under;
use crate::store::CommitRow;

/// What a commit must be to be searched; the default admits every commit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommitFilter {
    /// Authored at or after this time (seconds since the epoch).
    pub since: Option<i64>,
    /// Authored at or before this time.
    pub until: Option<i64>,
    /// Lowercase; a part of the author's name or email.
    pub author: Option<String>,
    /// Root-relative files or directories; the commit touched one of them
    /// or something under one. Empty admits every commit.
    pub paths: Vec<String>,
    /// Only commits that touched a file under the root: set when the root
    /// is a subdirectory of its repository, whose other commits are not
    /// the project's.
    pub within_root: bool,
}

impl CommitFilter {
    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        *self == CommitFilter::default()
    }

    /// Whether `commit` passes.
    pub fn admits(&self, commit: &CommitRow) -> bool {
        self.since.is_none_or(|s| commit.time >= s)
            && self.until.is_none_or(|u| commit.time <= u)
            && self.author.as_ref().is_none_or(|a| {
                commit.author.to_lowercase().contains(a.as_str()) || commit.email.to_lowercase().contains(a.as_str())
            })
            && (self.paths.is_empty() || commit.paths.iter().any(|p| self.paths.iter().any(|f| is_under(p, f))))
            && !(self.within_root && commit.paths.is_empty())
    }
}

/// Whether root-relative `rel` lies in a `.git` directory, whose files no
/// commit can hold (git refuses the name): a log filtered to it finds none.
pub fn in_git_dir(rel: &str) -> bool {
    rel.split('/').any(|part| part == ".git")
}

/// Of `paths` (root-relative), those that no commit of `rows` touched,
/// neither the path itself nor anything under it: a PATH gone from the
/// working tree that the history never knew either is most likely a typo.
pub fn untouched_paths(paths: &[String], rows: &[CommitRow]) -> Vec<String> {
    paths.iter().filter(|f| !rows.iter().any(|c| c.paths.iter().any(|p| is_under(p, f)))).cloned().collect()
}

/// A time as `search::parse_when` reads it (git's forms, spans, dates in
/// UTC), as seconds since the epoch.
pub fn parse_date(text: &str) -> Result<i64> {
    let nanos = crate::search::parse_when(text, std::time::SystemTime::now()).map_err(|e| anyhow!(e))?;
    Ok(nanos.div_euclid(1_000_000_000))
}

/// `--until`'s time: as `parse_date`, but a bare day (`2024-05-01`) is
/// the end of that day, so that `--since D --until D` is day D and
/// `--until today's date` keeps today's commits (its start left them out).
pub fn parse_until(text: &str) -> Result<i64> {
    let start = parse_date(text)?;
    Ok(if is_bare_day(text) { start + 86_399 } else { start })
}

fn is_bare_day(text: &str) -> bool {
    let t = text.trim().as_bytes();
    t.len() == 10
        && t[4] == b'-'
        && t[7] == b'-'
        && t.iter().enumerate().all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(time: i64, author: &str, paths: &[&str]) -> CommitRow {
        CommitRow {
            sha: "0".repeat(40),
            time,
            offset: 0,
            author: author.into(),
            email: format!("{}@example.org", author.to_lowercase()),
            subject: "s".into(),
            body: String::new(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            diffs: false,
        }
    }

    #[test]
    fn each_filter_narrows_on_its_own_field() {
        let c = commit(1000, "Ada Lovelace", &["src/net/retry.rs", "README.md"]);
        assert!(CommitFilter::default().admits(&c));
        assert!(CommitFilter { since: Some(1000), until: Some(1000), ..Default::default() }.admits(&c));
        assert!(!CommitFilter { since: Some(1001), ..Default::default() }.admits(&c));
        assert!(!CommitFilter { until: Some(999), ..Default::default() }.admits(&c));
        assert!(CommitFilter { author: Some("lovelace".into()), ..Default::default() }.admits(&c));
        assert!(CommitFilter { author: Some("lovelace@example".into()), ..Default::default() }.admits(&c));
        assert!(!CommitFilter { author: Some("grace".into()), ..Default::default() }.admits(&c));
        assert!(CommitFilter { paths: vec!["src/net".into()], ..Default::default() }.admits(&c));
        assert!(!CommitFilter { paths: vec!["src/ne".into()], ..Default::default() }.admits(&c));
        let elsewhere = commit(1000, "Ada Lovelace", &[]);
        assert!(CommitFilter::default().admits(&elsewhere));
        assert!(!CommitFilter { within_root: true, ..Default::default() }.admits(&elsewhere));
        assert!(CommitFilter { within_root: true, ..Default::default() }.admits(&c));
    }

    #[test]
    fn a_path_is_touched_by_a_commit_of_it_or_of_something_under_it() {
        let rows = [commit(1, "Ada", &["src/net/retry.rs"]), commit(2, "Ada", &["gone.rs"])];
        let asked: Vec<String> = ["src", "src/net/retry.rs", "gone.rs", "src/ne", "nosuch"].map(String::from).into();
        assert_eq!(untouched_paths(&asked, &rows), ["src/ne", "nosuch"]);
        assert_eq!(untouched_paths(&asked[..1], &[]), ["src"]);
    }

    #[test]
    fn until_a_bare_day_is_until_its_end() {
        assert_eq!(parse_until("2024-05-01").unwrap(), 1_714_521_600 + 86_399);
        assert_eq!(parse_until("2024-05-01T12:00:00Z").unwrap(), parse_date("2024-05-01T12:00:00Z").unwrap());
        let day = CommitFilter {
            since: Some(parse_date("2024-05-01").unwrap()),
            until: Some(parse_until("2024-05-01").unwrap()),
            ..Default::default()
        };
        assert!(day.admits(&commit(1_714_521_600 + 13 * 3600, "Ada", &[])));
        assert!(!day.admits(&commit(1_714_521_600 + 86_400, "Ada", &[])));
    }

    #[test]
    fn git_date_forms_are_read_and_nonsense_is_an_error() {
        assert_eq!(parse_date("2024-05-01").unwrap(), 1_714_521_600);
        assert_eq!(parse_date("@1714521600").unwrap(), 1_714_521_600);
        let now = gix::date::Zoned::now().timestamp().as_second();
        let ago = parse_date("2 weeks ago").unwrap();
        assert!((now - 14 * 86_400 - ago).abs() < 5);
        assert!((now - 86_400 - parse_date("yesterday").unwrap()).abs() < 5);
        let err = parse_date("last blue moon").unwrap_err().to_string();
        assert!(err.contains("last blue moon"), "{err}");
    }
}
