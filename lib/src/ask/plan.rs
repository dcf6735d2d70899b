//! The QueryPlan: what a question in plain words becomes before anything
//! is searched (the seed's Librarian output), in snake_case as the seed
//! writes it, fitted to code search. One definition serves every surface:
//! `vecgrep --plan` prints it, `/v1/ask` and the MCP `ask` tool return it,
//! and a plan an LLM writes is read back through it, strictly (`check`):
//! whatever a planner sends, only a plan that passes reaches the search.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::answer::MAX_CONTEXT_HITS;
use crate::project::PrivacyMode;
use crate::search::{check_query, parse_when, FileFilter, MAX_QUERY_BYTES};

/// What the rules planner calls itself in `planner_model_id`; its number
/// moves when the same words would give another plan.
pub const RULES_PLANNER_ID: &str = "vecgrep-rules-2";

/// The one skill a plan may ask of L2 here: a chat model's answer from the
/// top hits (`answer`). The seed's document skills (PDF layout, OCR) have
/// no place in code search.
pub const ANSWER_SKILL: &str = "answer";

/// Most extensions or globs a plan may hold, each.
const MAX_GLOBS: usize = 32;
/// Longest glob or identifier accepted.
const MAX_GLOB_BYTES: usize = 200;

/// What a question asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// Code that does something: the default.
    Search,
    /// Where a named thing (an identifier) is defined.
    Locate,
    /// Which files: one hit per file.
    List,
    /// How or why something works: a chat model's answer is wanted
    /// whatever the judgement (`requires_l2`).
    Explain,
}

impl Intent {
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::Search => "search",
            Intent::Locate => "locate",
            Intent::List => "list",
            Intent::Explain => "explain",
        }
    }
}

/// The L0 tier: which files may answer, by what the index knows of them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct L0Filters {
    /// Only files with one of these extensions, each with its dot (`.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Only files under one of these, in gitignore syntax from the project
    /// root (`src/net/`, `**/tests/**`, `*_test.go`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_globs: Vec<String>,
    /// Leave out files matching these, in the same syntax.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_globs: Vec<String>,
    /// Only files modified at or after this, a UTC date and time
    /// (`2026-05-01T00:00:00Z`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_after: Option<String>,
    /// Only files modified before this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_before: Option<String>,
    /// Only files of at least this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_size: Option<u64>,
    /// Only files of at most this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<u64>,
}

impl L0Filters {
    pub fn is_empty(&self) -> bool {
        *self == L0Filters::default()
    }
}

/// A question made into a search: the seed's QueryPlan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct QueryPlan {
    pub intent: Intent,
    /// Which files may answer (the L0 tier).
    #[serde(default)]
    pub l0_filters: L0Filters,
    /// What is searched for (the L1 tier): the question without the words
    /// that became filters or that every question has.
    pub l1_query_text: String,
    /// The lowest score (cosine) a hit may have, -1 to 1.
    #[serde(serialize_with = "as_written")]
    pub l1_threshold: f32,
    /// Whether a chat model's answer is wanted whatever the judgement of the hits.
    pub requires_l2: bool,
    /// What L2 does: `answer`, or nothing.
    #[serde(default)]
    pub l2_skills: Vec<String>,
    /// How many of the best hits L2 is given, 1 to 20.
    pub l2_top_k: usize,
    /// What may leave the machine; always the mode in force, whoever planned.
    #[cfg_attr(feature = "mcp", schemars(with = "String"))]
    pub privacy_mode: PrivacyMode,
    /// The question as asked.
    pub raw_user_text: String,
    /// Who planned: `vecgrep-rules-2`, or the chat model's name.
    pub planner_model_id: String,
}

/// A plan as a record (`vg-ask --plan --json`): its fields after the
/// record's type (`plan`) and version.
#[derive(Clone, Debug, Serialize)]
pub struct PlanRecord {
    #[serde(rename = "type")]
    pub kind: String,
    pub v: u32,
    #[serde(flatten)]
    pub plan: QueryPlan,
}

impl PlanRecord {
    pub fn new(plan: QueryPlan) -> PlanRecord {
        PlanRecord { kind: "plan".into(), v: crate::records::CONTRACT_VERSION, plan }
    }
}

impl QueryPlan {
    /// Whether the plan is one a search may run: every field within its
    /// bounds and of its form. Err says which field and why, in one line
    /// (a plan an LLM wrote may be anything).
    pub fn check(&self) -> Result<(), String> {
        check_query(&self.l1_query_text).map_err(|e| format!("l1_query_text: {e}"))?;
        plain("l1_query_text", &self.l1_query_text)?;
        if self.raw_user_text.len() > MAX_QUERY_BYTES {
            return Err(format!("raw_user_text is over {MAX_QUERY_BYTES} bytes"));
        }
        if !(self.l1_threshold.is_finite() && (-1.0..=1.0).contains(&self.l1_threshold)) {
            return Err(format!("l1_threshold must be from -1 to 1, got {}", self.l1_threshold));
        }
        if !(1..=MAX_CONTEXT_HITS).contains(&self.l2_top_k) {
            return Err(format!("l2_top_k must be from 1 to {MAX_CONTEXT_HITS}, got {}", self.l2_top_k));
        }
        if let Some(skill) = self.l2_skills.iter().find(|s| *s != ANSWER_SKILL) {
            return Err(format!("l2_skills: {skill:?} is not a skill here (only {ANSWER_SKILL:?})"));
        }
        // The spec's plan asks for the answer skill exactly when it requires L2.
        if self.l2_skills != if self.requires_l2 { vec![ANSWER_SKILL.to_string()] } else { Vec::new() } {
            return Err(format!(
                "l2_skills must be [{ANSWER_SKILL:?}] when requires_l2 is true, and [] when it is false"
            ));
        }
        if self.planner_model_id.len() > MAX_GLOB_BYTES {
            return Err("planner_model_id is too long".into());
        }
        plain("planner_model_id", &self.planner_model_id)?;
        self.l0_filters.check()?;
        self.to_filter().map(|_| ())
    }

    /// The file filter the L0 tier asks for.
    pub fn to_filter(&self) -> Result<FileFilter, String> {
        let f = &self.l0_filters;
        let mut filter = FileFilter::default();
        filter.modified_after = f.modified_after.as_deref().map(|d| date("modified_after", d)).transpose()?;
        filter.modified_before = f.modified_before.as_deref().map(|d| date("modified_before", d)).transpose()?;
        filter.min_size = f.min_size;
        filter.max_size = f.max_size;
        let extensions: Vec<String> = f.extensions.iter().map(|e| format!("*{e}")).collect();
        filter.include_any(&extensions)?;
        filter.include_any(&f.path_globs)?;
        filter.exclude_all(&f.exclude_globs)?;
        Ok(filter)
    }
}

impl L0Filters {
    /// The path and exclude globs `check_glob` refuses taken out, each with
    /// why; the rest of the filters stand.
    pub fn drop_bad_globs(&mut self) -> Vec<String> {
        let mut dropped = Vec::new();
        for (field, globs) in [("path_globs", &mut self.path_globs), ("exclude_globs", &mut self.exclude_globs)] {
            globs.retain(|glob| match check_glob(field, glob) {
                Ok(()) => true,
                Err(why) => {
                    dropped.push(why);
                    false
                }
            });
        }
        dropped
    }

    /// The pairs of bounds that contradict each other taken out, each with
    /// why (a size over its own maximum, a date after its own end): a
    /// question naming both asks for nothing, and the rest of its filters
    /// stand (a conflict left the plan without any filter, or, for dates,
    /// searched for nothing and said no more).
    pub fn drop_contradictions(&mut self) -> Vec<String> {
        let mut dropped = Vec::new();
        if let (Some(min), Some(max)) = (self.min_size, self.max_size) {
            if min > max {
                dropped.push(format!("min_size {min} is over max_size {max}"));
                (self.min_size, self.max_size) = (None, None);
            }
        }
        let bounds = (self.modified_after.as_deref(), self.modified_before.as_deref());
        if let (Some(after), Some(before)) = bounds {
            if let (Ok(from), Ok(until)) = (date("modified_after", after), date("modified_before", before)) {
                // The window takes its start, not its end: one of no width is empty too.
                if from >= until {
                    dropped.push(format!("modified_after {after} is not before modified_before {before}"));
                    (self.modified_after, self.modified_before) = (None, None);
                }
            }
        }
        dropped
    }

    fn check(&self) -> Result<(), String> {
        if self.extensions.len() > MAX_GLOBS
            || self.path_globs.len() > MAX_GLOBS
            || self.exclude_globs.len() > MAX_GLOBS
        {
            return Err(format!("l0_filters: at most {MAX_GLOBS} extensions and globs of each kind"));
        }
        for ext in &self.extensions {
            let name = ext.strip_prefix('.').unwrap_or_default();
            let ok = !name.is_empty()
                && name.len() <= 16
                && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-'));
            if !ok {
                return Err(format!("l0_filters.extensions: {ext:?} is not an extension like \".rs\""));
            }
        }
        for (field, globs) in [("path_globs", &self.path_globs), ("exclude_globs", &self.exclude_globs)] {
            for glob in globs {
                check_glob(field, glob)?;
            }
        }
        if let (Some(min), Some(max)) = (self.min_size, self.max_size) {
            if min > max {
                return Err(format!("l0_filters: min_size {min} is over max_size {max}"));
            }
        }
        let bounds = (self.modified_after.as_deref(), self.modified_before.as_deref());
        if let (Some(after), Some(before)) = bounds {
            if date("modified_after", after)? >= date("modified_before", before)? {
                return Err(format!("l0_filters: modified_after {after} is not before modified_before {before}"));
            }
        }
        Ok(())
    }
}

/// A glob confined to the project: relative, no `..`, no `!`, no control
/// characters, of a sane length.
fn check_glob(field: &str, glob: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("l0_filters.{field}: {glob:?} {why}"));
    if glob.trim().is_empty() || glob.len() > MAX_GLOB_BYTES {
        return bad("is empty or too long");
    }
    if glob.chars().any(char::is_control) || glob.contains('\\') {
        return bad("holds control characters or backslashes");
    }
    if glob.starts_with('!') {
        return bad("may not start with '!'");
    }
    if glob.split('/').any(|part| part == "..") {
        return bad("reaches out of the project with '..'");
    }
    Ok(())
}

/// A field a person reads: no control characters (a terminal obeys them).
fn plain(field: &str, text: &str) -> Result<(), String> {
    match text.chars().find(|c| c.is_control()) {
        Some(c) => Err(format!("{field} holds the control character {:?}", c)),
        None => Ok(()),
    }
}

/// A plan's date (`2026-05-01`, `2026-05-01T00:00:00Z`) in nanoseconds
/// since the epoch; never a span, which would mean another moment each day.
fn date(field: &str, text: &str) -> Result<i64, String> {
    let looks_like_a_date =
        text.len() >= 10 && text.as_bytes()[4] == b'-' && text[..4].bytes().all(|b| b.is_ascii_digit());
    if !looks_like_a_date {
        return Err(format!("l0_filters.{field}: {text:?} is not a UTC date like 2026-05-01T00:00:00Z"));
    }
    parse_when(text, UNIX_EPOCH).map_err(|e| format!("l0_filters.{field}: {e}"))
}

/// `at` as the plan writes a moment: UTC, to the second.
pub fn utc(at: SystemTime) -> String {
    let secs = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest / 60 % 60, rest % 60)
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// An f32 as its shortest decimal, as a number that stays so: a plan
/// turned into a JSON value (HTTP, MCP) held 0.3 as 0.30000001192092896,
/// where the command line wrote 0.3 (ask.md: the same object everywhere).
fn as_written<S: serde::Serializer>(value: &f32, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(value.to_string().parse().unwrap_or(f64::from(*value)))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    pub(crate) fn plan(query: &str) -> QueryPlan {
        QueryPlan {
            intent: Intent::Search,
            l0_filters: L0Filters::default(),
            l1_query_text: query.into(),
            l1_threshold: 0.3,
            requires_l2: false,
            l2_skills: Vec::new(),
            l2_top_k: 5,
            privacy_mode: PrivacyMode::LocalOnly,
            raw_user_text: query.into(),
            planner_model_id: RULES_PLANNER_ID.into(),
        }
    }

    #[test]
    fn moments_are_written_in_utc_and_read_back() {
        let at = UNIX_EPOCH + Duration::from_secs(1_769_869_805);
        assert_eq!(utc(at), "2026-01-31T14:30:05Z");
        assert_eq!(date("x", &utc(at)).unwrap(), 1_769_869_805 * 1_000_000_000);
        assert!(date("x", "2w").is_err(), "a span is not a date");
        assert!(date("x", "2026-02-30").is_err());
    }

    #[test]
    fn bounds_that_contradict_each_other_leave_alone_the_rest() {
        let mut f = L0Filters {
            extensions: vec![".py".into()],
            min_size: Some(10_000_000),
            max_size: Some(1000),
            modified_after: Some("2026-03-01T00:00:00Z".into()),
            modified_before: Some("2026-02-01T00:00:00Z".into()),
            ..L0Filters::default()
        };
        assert!(f.check().unwrap_err().contains("min_size"));
        let dropped = f.drop_contradictions();
        assert_eq!(dropped.len(), 2, "{dropped:?}");
        assert_eq!(
            (f.min_size, f.modified_after.as_deref(), f.extensions.as_slice()),
            (None, None, &[".py".into()][..])
        );
        f.check().unwrap();
        let mut dates = L0Filters {
            modified_after: Some("2026-03-01".into()),
            modified_before: Some("2026-02-01".into()),
            ..L0Filters::default()
        };
        assert!(dates.check().unwrap_err().contains("not before"), "a date after its own end is refused too");
        assert_eq!(dates.drop_contradictions().len(), 1);
        let mut none_wide = L0Filters {
            modified_after: Some("2026-03-01".into()),
            modified_before: Some("2026-03-01".into()),
            ..L0Filters::default()
        };
        assert_eq!(none_wide.drop_contradictions().len(), 1, "a window of no width admits nothing");
    }

    #[test]
    fn a_plan_outside_its_bounds_is_refused_naming_the_field() {
        let refused = |edit: &dyn Fn(&mut QueryPlan)| {
            let mut p = plan("retry uploads");
            edit(&mut p);
            p.check().unwrap_err()
        };
        assert!(plan("retry uploads").check().is_ok());
        assert!(refused(&|p| p.l1_query_text = " ".into()).starts_with("l1_query_text"));
        assert!(refused(&|p| p.requires_l2 = !p.requires_l2).starts_with("l2_skills must be"));
        let twice = |p: &mut QueryPlan| {
            p.requires_l2 = true;
            p.l2_skills = vec![ANSWER_SKILL.into(), ANSWER_SKILL.into()];
        };
        assert!(refused(&twice).starts_with("l2_skills must be"));
        assert!(refused(&|p| p.l1_query_text = "a\u{1b}[2Jb".into()).contains("control"));
        assert!(refused(&|p| p.l1_threshold = 7.0).starts_with("l1_threshold"));
        assert!(refused(&|p| p.l1_threshold = f32::NAN).starts_with("l1_threshold"));
        assert!(refused(&|p| p.l2_top_k = 0).starts_with("l2_top_k"));
        assert!(refused(&|p| p.l2_skills = vec!["shell".into()]).starts_with("l2_skills"));
        assert!(refused(&|p| p.l0_filters.extensions = vec!["rs".into()]).contains("extensions"));
        assert!(refused(&|p| p.l0_filters.extensions = vec![".r/s".into()]).contains("extensions"));
        assert!(refused(&|p| p.l0_filters.path_globs = vec!["../../etc/**".into()]).contains("'..'"));
        assert!(refused(&|p| p.l0_filters.path_globs = vec!["!src".into()]).contains("'!'"));
        assert!(refused(&|p| p.l0_filters.exclude_globs = vec!["a\nb".into()]).contains("control"));
        assert!(refused(&|p| p.l0_filters.modified_after = Some("last week".into())).contains("modified_after"));
        assert!(refused(&|p| {
            p.l0_filters.min_size = Some(10);
            p.l0_filters.max_size = Some(5);
        })
        .contains("min_size"));
        assert!(refused(&|p| p.l0_filters.path_globs = vec!["x".into(); 33]).contains("at most"));
    }

    #[test]
    fn unknown_fields_and_intents_are_refused_when_read() {
        let mut v = serde_json::to_value(plan("retry")).unwrap();
        assert!(serde_json::from_value::<QueryPlan>(v.clone()).is_ok());
        // As a value (HTTP, MCP) the threshold is written as on the command line.
        assert_eq!(v["l1_threshold"].to_string(), "0.3");
        v["shell"] = "rm -rf /".into();
        assert!(serde_json::from_value::<QueryPlan>(v.clone()).is_err());
        v.as_object_mut().unwrap().remove("shell");
        v["intent"] = "delete".into();
        assert!(serde_json::from_value::<QueryPlan>(v).is_err());
    }

    #[test]
    fn the_filters_become_a_file_filter() {
        let mut p = plan("retry");
        p.l0_filters = L0Filters {
            extensions: vec![".rs".into()],
            path_globs: vec!["src/".into()],
            exclude_globs: vec!["src/gen/".into()],
            modified_after: Some("2026-01-01T00:00:00Z".into()),
            min_size: Some(10),
            ..L0Filters::default()
        };
        let f = p.to_filter().unwrap();
        let jan2 = 1_767_312_000 * 1_000_000_000;
        assert!(f.admits("src/net/up.rs", 100, jan2));
        assert!(!f.admits("src/net/up.py", 100, jan2), "another extension");
        assert!(!f.admits("lib/up.rs", 100, jan2), "outside src/");
        assert!(!f.admits("src/gen/up.rs", 100, jan2), "excluded");
        assert!(!f.admits("src/up.rs", 5, jan2), "too small");
        assert!(!f.admits("src/up.rs", 100, jan2 - 2 * 86_400 * 1_000_000_000), "too old");
    }
}
