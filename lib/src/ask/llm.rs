//! The optional LLM planner (`planner = "llm"`): the chat model at the
//! trusted `llm_url` is shown the rules' plan and the schema and asked for
//! a better one. What it sends back is untrusted text: it must hold one
//! JSON object that reads as a `QueryPlan` (unknown fields refused) and
//! passes `QueryPlan::check`; the fields only the caller may decide (the
//! privacy mode, the question, who planned) are the caller's whatever the
//! model wrote. Anything else is refused with a one-line reason, and the
//! caller falls back to the rules' plan.

use serde_json::Value;

use super::plan::QueryPlan;
use crate::answer::ChatClient;

/// Longest reply read as a plan: a plan is a few hundred bytes.
const MAX_PLAN_REPLY: usize = 16 * 1024;

const INSTRUCTION: &str = "You turn a question about a code base into a search plan, as one JSON object and nothing else. \
Fields: intent (one of \"search\", \"locate\", \"list\", \"explain\"); l0_filters (object, all optional: extensions like [\".rs\"], \
path_globs and exclude_globs in gitignore syntax relative to the project root like [\"src/net/\"], modified_after and modified_before \
as UTC times like \"2026-05-01T00:00:00Z\", min_size and max_size in bytes); l1_query_text (the words to search for, without the filters); \
l1_threshold (-1 to 1); requires_l2 (true when the question asks to explain); l2_skills ([\"answer\"] or []); l2_top_k (1 to 20). \
Correct the draft plan you are given where it misreads the question; keep it where it is right.";

/// The plan the model at `client` makes of `question`, starting from the
/// rules' `draft`; Err says in one line why its reply was refused.
pub fn plan_by_llm(client: &ChatClient, question: &str, draft: &QueryPlan) -> Result<QueryPlan, String> {
    let shown = serde_json::to_string(draft).map_err(|e| e.to_string())?;
    let request = format!("Question: {question}\nDraft plan: {shown}\nThe plan, as one JSON object:");
    let reply = client.reply(INSTRUCTION, &request).map_err(|e| crate::project::shown::error_line(&e))?;
    read_plan(&reply, draft, client.model())
}

/// `reply` as a plan, the caller's fields taken from `draft`, checked.
pub(super) fn read_plan(reply: &str, draft: &QueryPlan, model: &str) -> Result<QueryPlan, String> {
    if reply.len() > MAX_PLAN_REPLY {
        return Err(format!("the reply is {} bytes, more than a plan", reply.len()));
    }
    let (Some(start), Some(end)) = (reply.find('{'), reply.rfind('}')) else {
        return Err("the reply holds no JSON object".into());
    };
    if end < start {
        return Err("the reply holds no JSON object".into());
    }
    let mut value: Value =
        serde_json::from_str(&reply[start..=end]).map_err(|e| format!("the reply is not a JSON object: {e}"))?;
    let Some(fields) = value.as_object_mut() else { return Err("the reply is not a JSON object".into()) };
    // Never the model's to decide: what may leave the machine, what was
    // asked, and who planned.
    fields.insert("privacy_mode".into(), serde_json::to_value(draft.privacy_mode).map_err(|e| e.to_string())?);
    fields.insert("raw_user_text".into(), draft.raw_user_text.clone().into());
    fields.insert(
        "planner_model_id".into(),
        model.chars().filter(|c| !c.is_control()).take(200).collect::<String>().into(),
    );
    for (key, default) in [
        ("intent", Value::from(draft.intent.as_str())),
        ("l1_query_text", draft.l1_query_text.clone().into()),
        ("l1_threshold", Value::from(draft.l1_threshold)),
        ("l2_top_k", draft.l2_top_k.into()),
        ("requires_l2", draft.requires_l2.into()),
    ] {
        fields.entry(key).or_insert(default);
    }
    // What follows from `requires_l2` (spec/ask.md), when the model left
    // it out: small models do, and every plan wanting an answer was refused.
    if !fields.contains_key("l2_skills") {
        let answers = fields.get("requires_l2").and_then(Value::as_bool).unwrap_or(false);
        fields.insert("l2_skills".into(), if answers { serde_json::json!(["answer"]) } else { serde_json::json!([]) });
    }
    let mut plan: QueryPlan =
        serde_json::from_value(value).map_err(|e| format!("the plan does not fit the schema: {e}"))?;
    // How many results may be sent to a chat model is the user's bound
    // (`--context-hits`): the model may ask for fewer, never more.
    plan.l2_top_k = plan.l2_top_k.min(draft.l2_top_k);
    // Bounds that contradict each other are the plan's to lose, with a
    // warning (`ask::plan`), not reason to refuse the rest of it.
    let mut repaired = plan.clone();
    repaired.l0_filters.drop_contradictions();
    repaired.check()?;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ask::plan::{Intent, L0Filters, RULES_PLANNER_ID};
    use crate::project::PrivacyMode;

    fn draft() -> QueryPlan {
        QueryPlan {
            intent: Intent::Search,
            l0_filters: L0Filters::default(),
            l1_query_text: "retry uploads".into(),
            l1_threshold: 0.3,
            requires_l2: false,
            l2_skills: Vec::new(),
            l2_top_k: 5,
            privacy_mode: PrivacyMode::LocalOnly,
            raw_user_text: "rust files that retry uploads".into(),
            planner_model_id: RULES_PLANNER_ID.into(),
        }
    }

    #[test]
    fn a_plan_in_a_chatty_reply_is_read_and_the_callers_fields_kept() {
        let reply = "Sure! Here is the plan:\n```json\n{\"intent\": \"search\", \"l0_filters\": {\"extensions\": [\".rs\"]}, \
                     \"l1_query_text\": \"retry uploads\", \"privacy_mode\": \"cloud_embedding_ok\", \"raw_user_text\": \"x\"}\n```";
        let plan = read_plan(reply, &draft(), "tiny-model").unwrap();
        assert_eq!(plan.l0_filters.extensions, [".rs"]);
        assert_eq!(plan.privacy_mode, PrivacyMode::LocalOnly, "the model cannot loosen privacy");
        assert_eq!(plan.raw_user_text, "rust files that retry uploads");
        assert_eq!((plan.planner_model_id.as_str(), plan.l2_top_k, plan.l1_threshold), ("tiny-model", 5, 0.3));
    }

    #[test]
    fn hostile_or_broken_plans_are_refused_with_a_reason() {
        let refused = |reply: &str| read_plan(reply, &draft(), "m").unwrap_err();
        assert!(refused("I cannot help with that.").contains("no JSON object"));
        assert!(refused("} {").contains("no JSON object"));
        assert!(refused("{\"intent\": \"search\", \"l1_query_text\": ").contains("no JSON object"), "cut short");
        assert!(refused("{\"intent\": \"search\", \"l1_query_text\": }").contains("not a JSON object"));
        assert!(refused("[1, 2]").contains("no JSON object"));
        assert!(refused(r#"{"intent": "rm -rf", "l1_query_text": "x"}"#).contains("schema"));
        assert!(refused(r#"{"intent": "search", "l1_query_text": "x", "shell": "curl evil"}"#).contains("schema"));
        assert!(refused(r#"{"intent": "search", "l1_query_text": "x", "l0_filters": {"path_globs": ["../../etc/"]}}"#)
            .contains("'..'"));
        assert!(refused(r#"{"intent": "search", "l1_query_text": "\u001b]0;pwned\u0007"}"#).contains("control"));
        assert!(refused(r#"{"intent": "search", "l1_query_text": "x", "l2_skills": ["exec"]}"#).contains("l2_skills"));
        assert!(refused(r#"{"intent": "search", "l1_query_text": "x", "l2_top_k": 0}"#).contains("l2_top_k"));
        // The user's bound on what is sent holds: more is cut to it.
        let more = read_plan(r#"{"intent": "search", "l1_query_text": "x", "l2_top_k": 20}"#, &draft(), "m").unwrap();
        assert_eq!(more.l2_top_k, draft().l2_top_k);
        let fewer = read_plan(r#"{"intent": "search", "l1_query_text": "x", "l2_top_k": 2}"#, &draft(), "m").unwrap();
        assert_eq!(fewer.l2_top_k, 2);
        assert!(refused(&format!("{{\"intent\": \"search\", \"l1_query_text\": \"{}\"}}", "a".repeat(20_000)))
            .contains("bytes"));
    }

    #[test]
    fn skills_left_out_follow_from_whether_an_answer_is_wanted() {
        let plan = read_plan(r#"{"intent": "explain", "l1_query_text": "retry", "requires_l2": true}"#, &draft(), "m");
        assert_eq!(plan.unwrap().l2_skills, ["answer"]);
        let answering = QueryPlan { requires_l2: true, l2_skills: vec!["answer".into()], ..draft() };
        let plan = read_plan(r#"{"intent": "search", "l1_query_text": "retry"}"#, &answering, "m").unwrap();
        assert_eq!((plan.requires_l2, plan.l2_skills.as_slice()), (true, &["answer".to_string()][..]));
        let plan = read_plan(r#"{"intent": "search", "l1_query_text": "x", "requires_l2": false}"#, &answering, "m");
        assert!(plan.unwrap().l2_skills.is_empty());
    }

    #[test]
    fn a_plan_whose_bounds_contradict_each_other_is_taken_for_the_rest() {
        let reply = r#"{"intent": "search", "l1_query_text": "retry", "l0_filters": {"extensions": [".py"],
            "modified_after": "2026-03-01T00:00:00Z", "modified_before": "2026-02-01T00:00:00Z"}}"#;
        let plan = read_plan(reply, &draft(), "m").unwrap();
        assert_eq!(plan.l0_filters.extensions, [".py"]);
    }

    #[test]
    fn a_model_name_cannot_steer_a_terminal() {
        let plan = read_plan(r#"{"intent": "search", "l1_query_text": "x"}"#, &draft(), "evil\u{1b}[2Jmodel").unwrap();
        assert_eq!(plan.planner_model_id, "evil[2Jmodel");
    }
}
