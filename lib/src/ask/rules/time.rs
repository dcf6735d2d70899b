//! The rules that read spans of time ("this week", "between March and
//! May 2024", "3 days ago") into a plan's `modified_after`/`modified_before`.

use std::sync::LazyLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use regex::Regex;

use super::super::lexicon::{number, seconds_in, NUMBER, TIME_UNIT};
use super::super::plan::{utc, L0Filters};
use super::{re, Work, CHANGED, MARK};
use crate::search::parse_when;

/// A month's name as it begins.
const MONTH: &str = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)";

/// A date as a plan may be asked for it: a day, a month or a year, in
/// digits or with the month's name (`March 2026`, `March 1st, 2026`).
const DATE: &str = r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?Z?)?|\d{4}-\d{2}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?:\s+\d{1,2}(?:st|nd|rd|th)?,?)?\s+(?:19|20)\d{2}|(?:19|20)\d{2}";

/// What may bound a span besides a date: a day, the week past, a moment ago.
const RELATIVE_DAY: &str = r"today|yesterday|last\s+(?:week|month|year)";

/// `f`'s span made to begin no earlier than `at`: a second phrase of time
/// narrows the first ("this week in 2025" is no span, and is said so),
/// it does not replace it.
fn after(f: &mut L0Filters, at: String) {
    f.modified_after = Some(f.modified_after.take().filter(|had| *had > at).unwrap_or(at));
}

/// `f`'s span made to end no later than `at` (`after`'s twin).
fn before(f: &mut L0Filters, at: String) {
    f.modified_before = Some(f.modified_before.take().filter(|had| *had < at).unwrap_or(at));
}
impl Work {
    pub(super) fn times(&mut self) {
        static BETWEEN: LazyLock<Regex> = LazyLock::new(|| {
            let bound = format!(r"{DATE}|{RELATIVE_DAY}|(?:{NUMBER})\s+{TIME_UNIT}\s+ago");
            // The first may be a month whose year the second gives ("January and March 2024").
            let first = format!(r"{bound}|{MONTH}[a-z]*\.?(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?");
            re(&format!(
                r"\b(?:{CHANGED}\s+)?(?:between|from)\s+({first})\s+(?:and|to|until|till|through)\s+({bound})\b"
            ))
        });
        // "between A and B" before "from A" and "last week", which would leave "and B".
        // Each bound is a period, and the span runs from the earlier's start
        // to the later's end: "between January 2024 and March 2024" holds March,
        // and a span written backwards is the same span.
        self.take(&BETWEEN, |c, f, now| {
            let b = period(&c[2], now)?;
            let a = period(&c[1], now).or_else(|| first_without_year(&c[1], &c[2], b, now))?;
            after(f, utc(a.0.min(b.0)));
            before(f, utc(a.1.max(b.1)));
            Some(MARK.into())
        });
        // "before last month", "until 2 weeks ago", "older than yesterday":
        // the span ends there, on the side its word says ("until" holds the
        // day). Before LAST, AGO and TODAY, which read the bound as a start
        // and left "before" in the words.
        static UNTIL: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"\b(?:{CHANGED}\s+)?(before|until|till|prior\s+to|older\s+than)\s+({RELATIVE_DAY}|(?:{NUMBER})\s+{TIME_UNIT}\s+ago)\b"
            ))
        });
        self.take(&UNTIL, |c, f, now| {
            let (start, end) = period(&c[2], now)?;
            let holds_the_day = matches!(c[1].to_ascii_lowercase().as_str(), "until" | "till");
            before(f, utc(if holds_the_day { end } else { start }));
            Some(MARK.into())
        });
        // "after yesterday", "after last week": the span starts where the
        // bound ends (as "after 2025" starts in 2026).
        static AFTER: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(r"\b(?:{CHANGED}\s+)?after\s+({RELATIVE_DAY}|(?:{NUMBER})\s+{TIME_UNIT}\s+ago)\b"))
        });
        self.take(&AFTER, |c, f, now| {
            after(f, utc(period(&c[1], now)?.1));
            Some(MARK.into())
        });
        static LAST: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"\b(?:{CHANGED}\s+)?(?:(?:in|within|during|over|from|for)\s+)?(?:the\s+)?(?:last|past|previous)\s+(?:({NUMBER})\s+)?({TIME_UNIT})\b"
            ))
        });
        static THIS: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(r"\b(?:{CHANGED}\s+)?(?:(?:in|during|since)\s+)?(?:this|the\s+current)\s+(week|month|year)\b"))
        });
        static SINCE_LAST: LazyLock<Regex> =
            LazyLock::new(|| re(&format!(r"\b(?:{CHANGED}\s+)?since\s+last\s+(week|month|year)\b")));
        static OLDER: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"\b(?:(?:not\s+(?:been\s+)?{CHANGED}|unchanged|untouched|stale)\s+(?:in|for|since)\s+(?:the\s+)?(?:(?:last|past)\s+)?|older\s+than\s+|{CHANGED}\s+(?:more\s+than|over)\s+)(?:({NUMBER})\s+)?({TIME_UNIT})(?:\s+ago)?\b"
            ))
        });
        static AGO: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(r"\b(?:{CHANGED}\s+)?(?:(?:since|within)\s+)?({NUMBER})\s+({TIME_UNIT})\s+ago\b"))
        });
        let back = |n: Option<&str>, unit: &str, now: SystemTime| {
            let n = n.map_or(Some(1), number)?;
            now.checked_sub(Duration::from_secs(n.checked_mul(seconds_in(unit))?))
        };
        self.take(&OLDER, |c, f, now| {
            before(f, utc(back(c.get(1).map(|m| m.as_str()), &c[2], now)?));
            Some(MARK.into())
        });
        // "since last month" before "last month", which would leave "since".
        for rule in [&*SINCE_LAST, &*THIS] {
            self.take(rule, |c, f, now| {
                after(f, utc(period(&format!("last {}", &c[1]), now)?.0));
                Some(MARK.into())
            });
        }
        for rule in [&*LAST, &*AGO] {
            self.take(rule, |c, f, now| {
                after(f, utc(back(c.get(1).map(|m| m.as_str()), &c[2], now)?));
                Some(MARK.into())
            });
        }
        self.days_and_dates();
    }

    /// `today`, `yesterday`, `recently`, and dates: since, before, in a year.
    pub(super) fn days_and_dates(&mut self) {
        static TODAY: LazyLock<Regex> =
            LazyLock::new(|| re(&format!(r"\b(?:{CHANGED}\s+)?(since\s+)?(today|yesterday)\b")));
        static RECENTLY: LazyLock<Regex> =
            LazyLock::new(|| re(&format!(r"\b(?:recently\s+{CHANGED}|{CHANGED}\s+(?:recently|lately))\b")));
        static SINCE: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(r"\b(?:{CHANGED}\s+)?(since|after|from|before|until|till|prior\s+to)\s+({DATE})\b"))
        });
        static DURING: LazyLock<Regex> =
            LazyLock::new(|| re(&format!(r"\b(?:{CHANGED}\s+)?(?:in|during)\s+({DATE})\b")));
        self.take(&TODAY, |c, f, now| {
            let (start, end) = period(&c[2], now)?;
            after(f, utc(start));
            // "since yesterday" runs to now; "yesterday" is the day; "today" runs to now.
            if c[2].eq_ignore_ascii_case("yesterday") && c.get(1).is_none() {
                before(f, utc(end));
            }
            Some(MARK.into())
        });
        // "until March" holds March; "before March" does not. "since March"
        // holds it too; "after March" starts in April.
        self.take(&SINCE, |c, f, now| {
            let (start, end) = period(&c[2], now)?;
            match c[1].to_ascii_lowercase().as_str() {
                "since" | "from" => after(f, utc(start)),
                "after" => after(f, utc(end)),
                "until" | "till" => before(f, utc(end)),
                _ => before(f, utc(start)),
            }
            Some(MARK.into())
        });
        self.take(&RECENTLY, |_, f, now| {
            after(f, utc(now - Duration::from_secs(14 * 86_400)));
            Some(MARK.into())
        });
        self.take(&DURING, |c, f, now| {
            let (start, end) = period(&c[1], now)?;
            after(f, utc(start));
            before(f, utc(end));
            Some(MARK.into())
        });
        if self.filters.modified_after.is_some() || self.filters.modified_before.is_some() {
            // "changed rust files this week": the verb said only what the span says.
            static VERB: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"\b{CHANGED}\b")));
            self.take(&VERB, |_, _, _| Some(MARK.into()));
        }
    }
}

/// The period a `DATE` or `RELATIVE_DAY` names, as [start, end): a day
/// (`2026-01-31`, `March 1st 2026`), a month (`2026-01`, `January 2026`),
/// a year; `today` up to now, `yesterday`; a moment (`2026-01-31 14:30`,
/// `3 days ago`, and `last week` as a bound: a week ago) starts and ends it.
fn period(text: &str, now: SystemTime) -> Option<(SystemTime, SystemTime)> {
    const DAY: Duration = Duration::from_secs(86_400);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase();
    let midnight = UNIX_EPOCH + DAY * u32::try_from(now.duration_since(UNIX_EPOCH).ok()?.as_secs() / 86_400).ok()?;
    let days_back = |days: u32| now.checked_sub(DAY * days).map(|at| (at, at));
    match text.as_str() {
        "today" => return Some((midnight, now)),
        "yesterday" => return Some((midnight.checked_sub(DAY)?, midnight)),
        "last week" => return days_back(7),
        "last month" => return days_back(30),
        "last year" => return days_back(365),
        _ => {}
    }
    if let Some(ago) = text.strip_suffix(" ago") {
        let (n, unit) = ago.rsplit_once(' ')?;
        let at = now.checked_sub(Duration::from_secs(number(n)?.checked_mul(seconds_in(unit))?))?;
        return Some((at, at));
    }
    let digits = named_month_as_digits(&text).unwrap_or(text);
    let (y, m, d) = (digits.get(..4)?.parse::<u32>().ok()?, digits.get(5..7), digits.get(8..10));
    let (start, end) = match (digits.len(), m.and_then(|m| m.parse::<u32>().ok())) {
        (4, _) => (format!("{y}-01-01"), format!("{}-01-01", y + 1)),
        (7, Some(12)) => (format!("{digits}-01"), format!("{}-01-01", y + 1)),
        (7, Some(m)) => (format!("{digits}-01"), format!("{y}-{:02}-01", m + 1)),
        (10, _) if d.is_some() => {
            let start = moment(&digits, now)?;
            return Some((start, start + DAY));
        }
        _ => {
            let at = moment(&digits, now)?;
            return Some((at, at));
        }
    };
    Some((moment(&start, now)?, moment(&end, now)?))
}

/// The year a date written with one ends with (`March 2024`, `2024-03-31`).
fn year_of(date: &str) -> Option<&str> {
    let year = date.get(..4).filter(|y| y.bytes().all(|b| b.is_ascii_digit()));
    year.or_else(|| date.get(date.len().checked_sub(4)?..).filter(|y| y.bytes().all(|b| b.is_ascii_digit())))
}

/// The period of `first` (a month or a day without its year) in the year
/// of `second` (the period `b`), or the year before where that makes the
/// shorter span: "between Dec and Jan 2026" runs from December 2025, while
/// "between Feb 10 and Feb 3, 2025" and "between March and January 2024"
/// are written backwards within their year.
fn first_without_year(
    first: &str,
    second: &str,
    b: (SystemTime, SystemTime),
    now: SystemTime,
) -> Option<(SystemTime, SystemTime)> {
    let year: u32 = year_of(second)?.parse().ok()?;
    let span = |a: (SystemTime, SystemTime)| a.1.max(b.1).duration_since(a.0.min(b.0)).unwrap_or_default();
    let same_year = period(&format!("{first} {year}"), now)?;
    match period(&format!("{first} {}", year.checked_sub(1)?), now) {
        Some(year_before) if span(year_before) < span(same_year) => Some(year_before),
        _ => Some(same_year),
    }
}

/// `March 2026` as `2026-03`, `March 1st, 2026` as `2026-03-01`.
fn named_month_as_digits(text: &str) -> Option<String> {
    const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let month = MONTHS.iter().position(|m| text.starts_with(m))? + 1;
    let words: Vec<&str> = text.split([' ', ',']).filter(|w| !w.is_empty()).skip(1).collect();
    let day = |w: &str| w.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<u32>().ok();
    match words.as_slice() {
        [year] => Some(format!("{year}-{month:02}")),
        [d, year] => Some(format!("{year}-{month:02}-{:02}", day(d).filter(|d| (1..=31).contains(d))?)),
        _ => None,
    }
}

/// A moment in UTC as `parse_when` reads it.
fn moment(text: &str, now: SystemTime) -> Option<SystemTime> {
    let ns = parse_when(text, now).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(ns / 1_000_000_000).ok()?))
}
