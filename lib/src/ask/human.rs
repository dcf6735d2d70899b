//! A plan and an AskResponse as a person reads them on a terminal
//! (`vecgrep --plan`, `vecgrep --ask`); pipes get the JSON. Nothing from
//! the code or a model reaches the terminal as a control character: each
//! is shown escaped (`\u{1b}`), as vg-format shows them.

use std::fmt::Write;

use super::plan::QueryPlan;
use super::response::AskResponse;

/// Lines of each hit's excerpt shown under it.
const EXCERPT_LINES: usize = 3;

/// The plan, one field a line.
pub fn render_plan(plan: &QueryPlan) -> String {
    let f = &plan.l0_filters;
    let mut rows: Vec<(&str, String)> =
        vec![("intent", plan.intent.as_str().into()), ("search for", plan.l1_query_text.clone())];
    let list = |v: &[String]| v.join(", ");
    if !f.extensions.is_empty() {
        rows.push(("extensions", list(&f.extensions)));
    }
    if !f.path_globs.is_empty() {
        rows.push(("only paths", list(&f.path_globs)));
    }
    if !f.exclude_globs.is_empty() {
        rows.push(("leaving out", list(&f.exclude_globs)));
    }
    if let Some(at) = &f.modified_after {
        rows.push(("modified after", at.clone()));
    }
    if let Some(at) = &f.modified_before {
        rows.push(("modified before", at.clone()));
    }
    if let Some(n) = f.min_size {
        rows.push(("at least", format!("{n} bytes")));
    }
    if let Some(n) = f.max_size {
        rows.push(("at most", format!("{n} bytes")));
    }
    rows.push(("threshold", format!("{}", plan.l1_threshold)));
    let answer = if plan.requires_l2 { "always" } else { "when the hits look thin" };
    rows.push(("answer", format!("{answer}, from the top {}", plan.l2_top_k)));
    rows.push(("privacy", plan.privacy_mode.to_string()));
    rows.push(("planner", plan.planner_model_id.clone()));
    let mut out = String::new();
    for (key, value) in rows {
        let _ = writeln!(out, "{key:<16}{}", shown(&value));
    }
    out
}

/// The response: the plan in a line, warnings, each hit with its reasons
/// and first lines, the answer with its citations, and the run in a line.
/// `from_here` gives a root-relative path as the person at the terminal
/// types it (from the working directory; a catalog's file in its project,
/// not through the catalog's hidden links).
pub fn render_response(response: &AskResponse, from_here: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    let plan = &response.query_plan;
    let _ = writeln!(
        out,
        "{} \"{}\"{} · privacy {} · planned by {}",
        plan.intent.as_str(),
        shown(&plan.l1_query_text),
        filters_in_brief(plan),
        plan.privacy_mode,
        shown(&plan.planner_model_id)
    );
    for w in &response.warnings {
        let _ = writeln!(out, "warning: {}", shown(w));
    }
    for hit in &response.hits {
        let _ = writeln!(
            out,
            "\n{}:{}-{}  score {:.2}  {}",
            shown(&from_here(&hit.path)),
            hit.start_line,
            hit.end_line,
            hit.score,
            hit.tier
        );
        if !hit.reasoning.is_empty() {
            let _ = writeln!(out, "  why: {}", shown(&hit.reasoning));
        }
        for line in hit.excerpt.lines().filter(|l| !l.trim().is_empty()).take(EXCERPT_LINES) {
            let _ = writeln!(out, "  │ {}", shown(line));
        }
    }
    if let Some(answer) = &response.answer_summary {
        let model = response.stats.answer_model.as_deref().unwrap_or("the chat model");
        let _ = writeln!(out, "\nanswer ({}):\n{}", shown(model), shown_lines(answer));
        let cited: Vec<String> =
            response.citations.iter().map(|c| format!("{}:{}", shown(&from_here(&c.path)), c.line)).collect();
        if !cited.is_empty() {
            let _ = writeln!(out, "cites {}", cited.join(", "));
        }
    }
    // `--learn` changed the project: said, as `--answer --learn` says it.
    if !response.stats.concepts_learned.is_empty() {
        let learned: Vec<String> = response.stats.concepts_learned.iter().map(|c| shown(c)).collect();
        let file = from_here(".vecgrep/kg/learned.md");
        let _ = writeln!(out, "learned: {} (review {})", learned.join(", "), shown(&file));
    }
    let s = &response.stats;
    let _ = writeln!(
        out,
        "\n{} in {} · {} · {:.0} ms · {} of {} chunks' candidates · {}",
        counted(s.hits_returned as u64, "hit"),
        counted(s.unique_paths as u64, "file"),
        s.verdict,
        s.latency_ms,
        s.candidates_merged,
        s.chunks_indexed,
        s.mode
    );
    out
}

/// `n thing`, or `n things` when n is not 1.
fn counted(n: u64, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// The plan's filters as a few words, or nothing.
fn filters_in_brief(plan: &QueryPlan) -> String {
    let f = &plan.l0_filters;
    let mut parts = Vec::new();
    parts.extend(f.extensions.iter().cloned());
    parts.extend(f.path_globs.iter().map(|g| format!("in {g}")));
    parts.extend(f.exclude_globs.iter().map(|g| format!("not {g}")));
    parts.extend(f.modified_after.iter().map(|t| format!("after {t}")));
    parts.extend(f.modified_before.iter().map(|t| format!("before {t}")));
    parts.extend(f.min_size.iter().map(|n| format!(">= {n} B")));
    parts.extend(f.max_size.iter().map(|n| format!("<= {n} B")));
    if parts.is_empty() {
        String::new()
    } else {
        format!(" · {}", shown(&parts.join(", ")))
    }
}

/// One line with every control character escaped, and the bidirectional
/// overrides and isolates that would show a line in another order, as
/// vg-format shows them (`^[`, `<U+202E>`; this said `\u{1b}`).
fn shown(text: &str) -> String {
    crate::project::shown::escape_controls(text).into_owned()
}

/// Several lines, each `shown`.
fn shown_lines(text: &str) -> String {
    text.lines().map(shown).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ask::plan::{Intent, L0Filters, RULES_PLANNER_ID};
    use crate::project::PrivacyMode;

    #[test]
    fn a_plan_reads_one_field_a_line_and_escapes_what_a_terminal_would_obey() {
        let plan = QueryPlan {
            intent: Intent::Search,
            l0_filters: L0Filters { extensions: vec![".rs".into()], ..L0Filters::default() },
            l1_query_text: "retry\u{1b}[2J uploads \u{202e}won\u{2069}".into(),
            l1_threshold: 0.3,
            requires_l2: false,
            l2_skills: Vec::new(),
            l2_top_k: 5,
            privacy_mode: PrivacyMode::LocalOnly,
            raw_user_text: "q".into(),
            planner_model_id: RULES_PLANNER_ID.into(),
        };
        let text = render_plan(&plan);
        assert!(text.contains("extensions      .rs\n"), "{text}");
        // As vg-format shows them, and the README says.
        assert!(text.contains("retry^[[2J uploads") && !text.contains('\u{1b}'), "{text}");
        assert!(text.contains("<U+202E>won<U+2069>") && !text.contains('\u{202e}'), "{text}");
        assert!(text.contains("privacy         local_only"));
    }
}
