//! Filters on a file's metadata and path (modified after or before, size at
//! least or at most, paths excluded, or only those matching), written as fd
//! takes them. They narrow
//! a search's scope to the index's files that pass, before anything is
//! ranked, so that a filtered search still returns k results whenever k
//! exist.

use std::path::Path;
use std::time::SystemTime;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::project::shown::{clipped, words_clipped};
use crate::store::{IndexReader, Scope, StoreError};

/// The most exclusion globs one search takes (`--exclude`, `exclude=`): far
/// above what a person writes, below what makes building their matcher a
/// request's cost (a 1 MiB MCP line holds a hundred thousand).
const MAX_EXCLUDED: usize = 1024;

/// The most bytes of globs one matcher is built from: its memory grows
/// with the globs' text (about 0.5 KB a byte of `**/*a*a…` globs, 560 MB
/// for a 1 MiB MCP line's), and a person's globs are far shorter.
const MAX_GLOB_BYTES: usize = 64 * 1024;

/// Which files a search may return, by what the index knows of them.
#[derive(Clone, Debug, Default)]
pub struct FileFilter {
    /// Modified at or after this instant, in nanoseconds since the epoch.
    pub modified_after: Option<i64>,
    /// Modified before this instant.
    pub modified_before: Option<i64>,
    /// At least this many bytes.
    pub min_size: Option<u64>,
    /// At most this many bytes.
    pub max_size: Option<u64>,
    /// Paths left out, in gitignore syntax, relative to the project root.
    exclude: Option<Gitignore>,
    /// The exclusion globs as given, for messages and tests.
    excluded: Vec<String>,
    /// Groups of globs (gitignore syntax) a path must match one of each
    /// of: a plan's extensions, its paths (`ask`).
    include: Vec<Gitignore>,
    /// The inclusion globs as given, group by group.
    included: Vec<Vec<String>>,
}

impl FileFilter {
    /// A search of a revision's or a label's index takes no time bounds:
    /// its files were written from git with the commit's time, so each
    /// bound read the commit's date as every file's (a file unchanged since
    /// 2020 was "changed within a week").
    pub fn check_for_history(&self) -> Result<(), String> {
        match self.modified_after.is_some() || self.modified_before.is_some() {
            true => Err("--changed-within and --changed-before (changed_within, changed_before) bound the working tree's file times; a revision's or a label's files have none of their own".into()),
            false => Ok(()),
        }
    }

    /// The filter the flags (or request parameters) ask for, times read
    /// against `now`: modified within `changed_within` and before
    /// `changed_before` (`parse_when`), the `sizes` bounds (`size`), and the
    /// `excluded` globs (`exclude`). Err says which value is wrong and why.
    pub fn from_flags(
        changed_within: Option<&str>,
        changed_before: Option<&str>,
        sizes: &[String],
        excluded: &[String],
        now: SystemTime,
    ) -> Result<FileFilter, String> {
        let mut filter = FileFilter {
            modified_after: changed_within.map(|w| parse_when(w, now)).transpose()?,
            modified_before: changed_before.map(|w| parse_when(w, now)).transpose()?,
            ..Default::default()
        };
        for bound in sizes {
            filter.size(bound)?;
        }
        if excluded.len() > MAX_EXCLUDED {
            return Err(format!("at most {MAX_EXCLUDED} exclusion globs, got {}", excluded.len()));
        }
        filter.exclude_all(excluded)?;
        Ok(filter)
    }

    /// No filter at all: every file passes.
    pub fn is_empty(&self) -> bool {
        self.modified_after.is_none()
            && self.modified_before.is_none()
            && self.min_size.is_none()
            && self.max_size.is_none()
            && self.excluded.is_empty()
            && self.included.is_empty()
    }

    /// Keep only the files one of `globs` matches (gitignore syntax:
    /// `*.rs`, `src/`, `**/net/**`), besides what every group given before
    /// asks: `*.rs` or `*.py`, and under `src/`. A glob that would turn a
    /// match around (`!x`) is refused, since it would let in what the
    /// others leave out; no globs asks nothing.
    pub fn include_any(&mut self, globs: &[String]) -> Result<(), String> {
        if let Some(glob) = globs.iter().find(|g| g.starts_with('!')) {
            return Err(format!("invalid inclusion glob '{}': a leading '!' is not taken here", clipped(glob, 200)));
        }
        if let Some(last) = globs.last() {
            self.include.push(gitignore(globs, last, "inclusion")?);
            self.included.push(globs.to_vec());
        }
        Ok(())
    }

    /// Leave out the files any of `globs` matches (gitignore syntax:
    /// `tests/`, `*_test.go`, `/vendor`), as `fd --exclude` does. One
    /// matcher is built for them all: built glob by glob, a request's
    /// thousand globs cost a million lines.
    pub fn exclude_all(&mut self, globs: &[String]) -> Result<(), String> {
        let Some(last) = globs.last() else { return Ok(()) };
        let mut excluded = self.excluded.clone();
        excluded.extend(globs.iter().cloned());
        // Before the glob-by-glob search for one at fault, which a long glob makes costly.
        within_glob_bytes(&excluded, "exclusion")?;
        let matcher = gitignore(&excluded, last, "exclusion").map_err(|e| {
            // Name the glob at fault, which the whole's build error may not.
            globs.iter().find_map(|g| gitignore(std::slice::from_ref(g), g, "exclusion").err()).unwrap_or(e)
        })?;
        (self.excluded, self.exclude) = (excluded, Some(matcher));
        Ok(())
    }

    /// A size bound as fd writes it: `+10k` at least, `-1M` at most.
    pub fn size(&mut self, bound: &str) -> Result<(), String> {
        let (at_least, amount) = match bound.as_bytes().first() {
            Some(b'+') => (true, &bound[1..]),
            Some(b'-') => (false, &bound[1..]),
            _ => {
                let bound = clipped(bound, 200);
                return Err(format!("size '{bound}' must start with + (at least) or - (at most), e.g. +10k or -1M"));
            }
        };
        let bytes = parse_size(amount).ok_or_else(|| {
            let bound = clipped(bound, 200);
            format!("size '{bound}' is not a size: a number and a unit (b, k, m, g, t, or ki, mi, gi, ti), e.g. +10k")
        })?;
        if at_least {
            self.min_size = Some(self.min_size.map_or(bytes, |m| m.max(bytes)));
        } else {
            self.max_size = Some(self.max_size.map_or(bytes, |m| m.min(bytes)));
        }
        Ok(())
    }

    /// Whether a file passes, given its root-relative path, size and modification time.
    pub fn admits(&self, path: &str, size: u64, mtime_ns: i64) -> bool {
        self.admits_named(&[path], size, mtime_ns)
    }

    /// As `admits`, for a file known by several paths: a glob that matches
    /// any of them matches the file, and an exclusion's `!` that takes any
    /// of them back keeps it (`-E '*.rs' -E '!src/keep.rs'` over a catalog
    /// left out `keep.rs`, which `*.rs` matched by its catalog path).
    fn admits_named(&self, paths: &[&str], size: u64, mtime_ns: i64) -> bool {
        let matched = |g: &Gitignore| paths.iter().any(|p| g.matched_path_or_any_parents(p, false).is_ignore());
        let excluded = |g: &Gitignore| {
            let each: Vec<_> = paths.iter().map(|p| g.matched_path_or_any_parents(p, false)).collect();
            each.iter().any(|m| m.is_ignore()) && !each.iter().any(|m| m.is_whitelist())
        };
        self.modified_after.is_none_or(|t| mtime_ns >= t)
            && self.modified_before.is_none_or(|t| mtime_ns < t)
            && self.min_size.is_none_or(|m| size >= m)
            && self.max_size.is_none_or(|m| size <= m)
            && !self.exclude.as_ref().is_some_and(excluded)
            && self.include.iter().all(matched)
    }

    /// `scope` narrowed to the index's files that pass. `per_project`: the
    /// index is a catalog's, its paths `project/path`, and a glob is
    /// matched both from each project's root, as `-g` is (matched against
    /// `project/…` alone, `-E src/x.rs` left out nothing), and from the
    /// catalog's, as vg-mcp and vg-ask show the paths (there `-E
    /// billing/src/x.rs`, the path shown, left out nothing).
    pub fn narrow(&self, scope: Scope, store: &dyn IndexReader, per_project: bool) -> Result<Scope, StoreError> {
        if self.is_empty() {
            return Ok(scope);
        }
        let admitted = |path: &str, size: u64, mtime_ns: i64| match path.split_once('/').filter(|_| per_project) {
            Some((_, in_project)) => self.admits_named(&[in_project, path], size, mtime_ns),
            None => self.admits(path, size, mtime_ns),
        };
        let files = store
            .files(false)?
            .into_iter()
            .filter(|(path, f)| scope.admits(path) && admitted(path, f.state.size, f.state.mtime_ns))
            .map(|(path, _)| path)
            .collect();
        Ok(Scope { prefixes: scope.prefixes, files: Some(files) })
    }
}

/// One matcher for `globs` (gitignore syntax, from the root); `last` is
/// the one just added, named when the whole cannot be built.
fn gitignore(globs: &[String], last: &str, what: &str) -> Result<Gitignore, String> {
    within_glob_bytes(globs, what)?;
    let mut builder = GitignoreBuilder::new(Path::new(""));
    for g in globs {
        builder.add_line(None, g).map_err(|e| glob_error(what, g, &e))?;
    }
    builder.build().map_err(|e| glob_error(what, last, &e))
}

/// An error when `globs` hold more than one matcher is built from.
fn within_glob_bytes(globs: &[String], what: &str) -> Result<(), String> {
    let bytes: usize = globs.iter().map(String::len).sum();
    match bytes > MAX_GLOB_BYTES {
        true => Err(format!("the {what} globs hold {bytes} bytes; at most {MAX_GLOB_BYTES} are taken")),
        false => Ok(()),
    }
}

/// Why `glob` is no glob, with at most 200 characters of it: the matcher's
/// own error quotes it again, in full.
fn glob_error(what: &str, glob: &str, e: &ignore::Error) -> String {
    // Its quote of the glob is taken out, or a long glob was repeated twice.
    let cause = words_clipped(&e.to_string().replace(&format!(" '{glob}'"), ""), 200, 400);
    format!("invalid {what} glob '{}': {cause}", clipped(glob, 200))
}

/// An amount of bytes as fd writes it: `512`, `10k` (1000), `10ki` (1024),
/// `2M`, `1g`, with `b` for plain bytes.
fn parse_size(text: &str) -> Option<u64> {
    let lower = text.trim().to_ascii_lowercase();
    let split = lower.find(|c: char| !c.is_ascii_digit()).unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let number: u64 = digits.parse().ok()?;
    let factor: u64 = match unit {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "ki" | "kib" => 1 << 10,
        "m" | "mb" => 1000 * 1000,
        "mi" | "mib" => 1 << 20,
        "g" | "gb" => 1000 * 1000 * 1000,
        "gi" | "gib" => 1 << 30,
        "t" | "tb" => 1000 * 1000 * 1000 * 1000,
        "ti" | "tib" => 1 << 40,
        _ => return None,
    };
    number.checked_mul(factor)
}

/// A moment as a user writes it, in nanoseconds since the epoch: a span back
/// from now (`2w`, `3d`, `12h`, `30min`, `1y`), a date and time in UTC
/// (`2026-01-31`, `2026-01-31 14:30`, `2026-01-31T14:30:00Z`), or one of
/// git's forms (`2 weeks ago`, `yesterday`, `@1714521600`, RFC 2822). The
/// one reader of times for file filters, the Ask planner and vg-log.
pub fn parse_when(text: &str, now: SystemTime) -> Result<i64, String> {
    let text = text.trim();
    let now = jiff::Timestamp::try_from(now).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let moment = match parse_span(text) {
        Some(span) => Some(now.as_second().saturating_sub(span)).and_then(|s| jiff::Timestamp::from_second(s).ok()),
        None => parse_utc(text).or_else(|| parse_git_form(text, now)),
    };
    moment.map(|t| t.as_nanosecond().clamp(i64::MIN.into(), i64::MAX.into()) as i64).ok_or_else(|| {
        format!(
            "'{}' is not a time: a span back from now (2w, 3d, 12h, 30min), a date in UTC (2026-01-31, 2026-01-31 14:30) or a relative form (\"2 weeks ago\", yesterday, @1714521600)",
            clipped(text, 200)
        )
    })
}

/// Seconds in a span like `2w` or `90min`.
fn parse_span(text: &str) -> Option<i64> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = text.split_at(split);
    let number: i64 = digits.parse().ok()?;
    let seconds: i64 = match unit.trim() {
        "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hour" | "hours" => 3600,
        "d" | "day" | "days" => 86_400,
        "w" | "week" | "weeks" => 7 * 86_400,
        "mo" | "month" | "months" => 30 * 86_400,
        "y" | "year" | "years" => 365 * 86_400,
        _ => return None,
    };
    number.checked_mul(seconds)
}

/// `YYYY-MM-DD`, optionally followed (after a space or `T`) by `HH:MM` or
/// `HH:MM:SS` and a `Z`, read in UTC: the server's clock is not the
/// client's, so a date means the same wherever it is read.
fn parse_utc(text: &str) -> Option<jiff::Timestamp> {
    let text = text.strip_suffix('Z').unwrap_or(text);
    let (date, time) = match text.split_once([' ', 'T']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    // jiff reads more forms than these (week dates, fractions, offsets):
    // the shapes are checked here so that `12` or `2026-1` stay errors.
    let date_shape = date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-';
    let time_shape =
        time.is_none_or(|t| matches!(t.len(), 5 | 8) && t.bytes().all(|b| b.is_ascii_digit() || b == b':'));
    if !date_shape || !time_shape {
        return None;
    }
    let date: jiff::civil::Date = date.parse().ok()?;
    let time: jiff::civil::Time = time.map_or(Some(jiff::civil::Time::midnight()), |t| t.parse().ok())?;
    // The last hours of 9999-12-31 are past what a timestamp holds: the
    // latest one stands for them ("before 9999-12-31" is a time).
    match date.to_datetime(time).to_zoned(jiff::tz::TimeZone::UTC) {
        Ok(zoned) => Some(zoned.timestamp()),
        Err(_) if date.year() == 9999 => Some(jiff::Timestamp::MAX),
        Err(_) => None,
    }
}

/// One of git's date forms, as gix reads them, relative to `now`: only
/// texts with a letter or an `@`, so that a bare number is no date.
fn parse_git_form(text: &str, now: jiff::Timestamp) -> Option<jiff::Timestamp> {
    if !text.contains(|c: char| c.is_alphabetic() || c == '@') {
        return None;
    }
    let now = now.to_zoned(jiff::tz::TimeZone::UTC);
    let text = match text {
        "now" => return Some(now.timestamp()),
        "yesterday" => "1 day ago",
        other => other,
    };
    let time = gix::date::parse(text, Some(now)).ok()?;
    jiff::Timestamp::from_second(time.seconds).ok()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    const SECOND: i64 = 1_000_000_000;

    #[test]
    fn dates_are_read_in_utc() {
        let at = |s: &str| parse_when(s, UNIX_EPOCH).unwrap() / SECOND;
        assert_eq!(at("1970-01-01"), 0);
        assert_eq!(at("1970-01-02"), 86_400);
        assert_eq!(at("2000-03-01"), 951_868_800);
        assert_eq!(at("2026-01-31"), 1_769_817_600);
        assert_eq!(at("2026-01-31 14:30"), 1_769_817_600 + 14 * 3600 + 30 * 60);
        assert_eq!(at("2026-01-31T14:30:05Z"), 1_769_817_600 + 14 * 3600 + 30 * 60 + 5);
        assert_eq!(at("2024-02-29"), 1_709_164_800);
        for bad in ["2023-02-29", "2026-13-01", "2026-01-32", "2026-1", "someday", "2026-01-31 25:00", "", "12"] {
            assert!(parse_when(bad, UNIX_EPOCH).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn spans_count_back_from_now() {
        let now = UNIX_EPOCH + Duration::from_secs(10 * 86_400);
        assert_eq!(parse_when("2w", now).unwrap(), -4 * 86_400 * SECOND);
        assert_eq!(parse_when("3d", now).unwrap(), 7 * 86_400 * SECOND);
        assert_eq!(parse_when("90min", now).unwrap(), (10 * 86_400 - 5400) * SECOND);
        assert_eq!(parse_when("12h", now).unwrap(), (10 * 86_400 - 12 * 3600) * SECOND);
        assert!(parse_when("5 parsecs", now).is_err());
    }

    #[test]
    fn gits_forms_are_read_too() {
        let now = UNIX_EPOCH + Duration::from_secs(10 * 86_400);
        assert_eq!(parse_when("yesterday", now).unwrap(), 9 * 86_400 * SECOND);
        assert_eq!(parse_when("2 weeks ago", now).unwrap(), -4 * 86_400 * SECOND);
        assert_eq!(parse_when("@1714521600", now).unwrap(), 1_714_521_600 * SECOND);
        assert_eq!(parse_when("now", now).unwrap(), 10 * 86_400 * SECOND);
    }

    #[test]
    fn sizes_are_read_as_fd_reads_them() {
        let mut f = FileFilter::default();
        f.size("+10k").unwrap();
        f.size("-1Mi").unwrap();
        assert_eq!((f.min_size, f.max_size), (Some(10_000), Some(1 << 20)));
        f.size("+20k").unwrap();
        f.size("-5m").unwrap();
        assert_eq!((f.min_size, f.max_size), (Some(20_000), Some(1 << 20)), "the tighter bound wins");
        for bad in ["10k", "+", "+10q", "-k", "+1.5m"] {
            assert!(FileFilter::default().size(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("3b"), Some(3));
        assert_eq!(parse_size("99999999999999t"), None, "overflow is an error, not a wrap");
    }

    #[test]
    fn a_file_passes_at_its_bounds_and_not_past_them() {
        let mut f = FileFilter { modified_after: Some(100), modified_before: Some(200), ..Default::default() };
        f.size("+10").unwrap();
        f.size("-20").unwrap();
        assert!(f.admits("a.rs", 10, 100) && f.admits("a.rs", 20, 199));
        assert!(!f.admits("a.rs", 9, 150) && !f.admits("a.rs", 21, 150));
        assert!(!f.admits("a.rs", 15, 99) && !f.admits("a.rs", 15, 200), "after is inclusive, before is not");
    }

    #[test]
    fn the_last_day_a_date_can_name_is_a_time() {
        let now = SystemTime::now();
        // Past 2262 every moment is the latest nanosecond a file's time holds.
        let last = parse_when("9999-12-31", now).expect("a date");
        assert_eq!((parse_when("3000-01-01", now), last), (Ok(i64::MAX), i64::MAX));
        assert_eq!(parse_when("9999-12-31 23:59", now), Ok(last));
        assert!(parse_when("9999-13-01", now).is_err() && parse_when("10000-01-01", now).is_err());
    }

    #[test]
    fn excluded_paths_follow_gitignore_syntax() {
        let mut f = FileFilter::default();
        f.exclude_all(&["tests/".into()]).unwrap();
        f.exclude_all(&["*_test.go".into()]).unwrap();
        f.exclude_all(&["/vendor".into()]).unwrap();
        assert!(!f.is_empty());
        for out in ["tests/a.rs", "src/tests/b.rs", "pkg/x_test.go", "vendor/lib.c"] {
            assert!(!f.admits(out, 1, 1), "{out} is excluded");
        }
        for kept in ["src/a.rs", "pkg/x.go", "src/vendor/lib.c", "testsuite.rs"] {
            assert!(f.admits(kept, 1, 1), "{kept} is kept");
        }
        assert!(FileFilter::default().exclude_all(&["src/{a,b".into()]).is_err());
        // Many globs are one matcher, and a bound.
        let many: Vec<String> = (0..MAX_EXCLUDED).map(|i| format!("**/a{i}/**")).collect();
        let f = FileFilter::from_flags(None, None, &[], &many, SystemTime::now()).unwrap();
        assert!(!f.admits("src/a7/x.rs", 1, 0) && f.admits("src/b7/x.rs", 1, 0));
        let more: Vec<String> = (0..=MAX_EXCLUDED).map(|i| format!("a{i}")).collect();
        let e = FileFilter::from_flags(None, None, &[], &more, SystemTime::now()).unwrap_err();
        assert_eq!(e, format!("at most {MAX_EXCLUDED} exclusion globs, got {}", MAX_EXCLUDED + 1));
        let bad = ["ok/".to_string(), "src/{a,b".to_string(), "fine".to_string()];
        let e = FileFilter::from_flags(None, None, &[], &bad, SystemTime::now()).unwrap_err();
        assert!(e.starts_with("invalid exclusion glob 'src/{a,b'"), "{e}");
        // A long one is repeated once, in part.
        let long = [format!("{{{}", "x".repeat(5000))];
        let e = FileFilter::from_flags(None, None, &[], &long, SystemTime::now()).unwrap_err();
        assert!(e.matches('x').count() <= 200 && e.contains("unclosed"), "{e}");
        assert!(FileFilter::default().is_empty());
        // Globs whose matcher would cost hundreds of MB are refused unbuilt.
        let long: Vec<String> = (0..1000).map(|i| format!("**/{}{i}", "*a".repeat(490))).collect();
        let e = FileFilter::from_flags(None, None, &[], &long, SystemTime::now()).unwrap_err();
        assert_eq!(e, "the exclusion globs hold 985890 bytes; at most 65536 are taken");
        let e = FileFilter::default().include_any(&long).unwrap_err();
        assert!(e.starts_with("the inclusion globs hold"), "{e}");
    }

    #[test]
    fn included_paths_match_one_glob_of_each_group() {
        let globs = |g: &[&str]| g.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut f = FileFilter::default();
        f.include_any(&globs(&["*.rs", "*.py"])).unwrap();
        assert!(!f.is_empty());
        for kept in ["a.rs", "src/deep/b.rs", "x/c.py"] {
            assert!(f.admits(kept, 1, 1), "{kept} is kept");
        }
        assert!(!f.admits("a.go", 1, 1) && !f.admits("rs/a.txt", 1, 1));
        f.include_any(&globs(&["src/", "**/lib/**"])).unwrap();
        for kept in ["src/deep/b.rs", "pkg/lib/c.py"] {
            assert!(f.admits(kept, 1, 1), "{kept} is kept");
        }
        for out in ["a.rs", "src/a.go", "mysrc/a.rs"] {
            assert!(!f.admits(out, 1, 1), "{out} is left out");
        }
        f.exclude_all(&["src/deep/".into()]).unwrap();
        assert!(!f.admits("src/deep/b.rs", 1, 1), "an exclusion still wins");
        assert!(FileFilter::default().include_any(&globs(&["!*.rs"])).is_err(), "no turning a match around");
        let mut none = FileFilter::default();
        none.include_any(&[]).unwrap();
        assert!(none.is_empty());
    }
}
