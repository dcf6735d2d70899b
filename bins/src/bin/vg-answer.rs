//! vg-answer: copy a search stream through and end it with a chat model's
//! answer from its top hits, when the judgement says the hits fall short.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, Result};
use vecgrep::answer::{self, AskReason, ChatClient, ChatSettings, Decision};
use vecgrep::project::{root_named, select_root, ConfigValues, ProjectRoot, ResolvedConfig};
use vecgrep::records::{
    escape_what_terminals_obey, read_search_stream_with_lines, write_record, HitRecord, SearchStream,
};
use vecgrep_bins::app::{
    cli_config, note, resolve_config, resolve_config_unread, resolve_stream_root_config, run_main, EXIT_FOUND,
    EXIT_NOT_FOUND,
};
use vecgrep_bins::cli::AnswerCli;

const TOOL: &str = "vg-answer";

fn main() {
    let (cli, matches) = vecgrep_bins::app::parse_args::<AnswerCli>(TOOL);
    run_main(TOOL, || {
        // Read to the end first: a line that is not a record stops the tool before anything is sent.
        let stream = read_search_stream_with_lines(std::io::stdin().lock())?;
        let root = root_of(&stream.hits)?;
        // The porcelain's own search chose the root as the user asked.
        let users_own = run_by_vecgrep() || is_where_the_user_is(&root);
        if cli.answer.learn && !users_own {
            // Said before anything is sent: the hits' root is the stream's word, not the user's.
            answer::refuse_unless_project(&root)?;
        }
        let config = config_of(cli_config(&matches)?, &root, &stream, users_own)?;
        let quiet = config.as_ref().map_or(cli.quiet, |c| c.quiet);
        let decision = answer::decide(stream.judgement.as_ref(), stream.hits.len(), cli.answer.force_answer);
        // What makes asking impossible is said before the results pass
        // through: an error prints nothing on stdout. An endpoint is needed
        // whenever there are results, whatever the judgement says, so that
        // whether a configuration works does not hang on how good one
        // search's results look.
        let url = match &config {
            Some(config) if !stream.hits.is_empty() => Some((llm_url(config)?, config)),
            _ => None,
        };
        let asking = match (decision, url) {
            (Decision::Ask(reason), Some((url, config))) => Ok((reason, query_of(&stream)?, url, config)),
            (Decision::Ask(_), None) => Err("no results to answer from"),
            (Decision::Skip(why), _) => Err(why),
        };
        let mut out = vecgrep_bins::app::stdout();
        for line in &stream.lines {
            // The same records, written as every tool writes its own.
            writeln!(out, "{}", escape_what_terminals_obey(line.clone()))?;
        }
        out.flush()?;
        match asking {
            Ok((reason, query, url, config)) => ask(&cli, config, &root, &stream, (reason, &query, url), &mut out)?,
            // Under vecgrep, whose search always ends its stream with a
            // judgement, an empty stream is a search that failed and said so.
            Err(_) if stream.lines.is_empty() && run_by_vecgrep() => {}
            Err(why) => note(TOOL, quiet, why),
        }
        out.flush()?;
        Ok(if stream.hits.is_empty() { EXIT_NOT_FOUND } else { EXIT_FOUND })
    })
}

/// The config at `root`, as far as the stream's results need it. Not the
/// user's to trust when the stream named the root (it may send their key
/// and code elsewhere), unless this command line says so. Without results
/// nothing is asked, and the config (the current directory's) only says
/// whether to be quiet: one that cannot be read is the search's to say,
/// which may have read another (a catalog's): None.
fn config_of(
    asked: ConfigValues,
    root: &ProjectRoot,
    stream: &SearchStream,
    users_own: bool,
) -> Result<Option<ResolvedConfig>> {
    let config = match vecgrep_bins::app::catalog_of_hits(&stream.hits) {
        // The user's own catalog: its config, as the search before read it.
        Some(catalog) => resolve_config(TOOL, &catalog, asked),
        None => match (users_own, stream.hits.iter().any(|h| h.project.is_some())) {
            (false, _) => resolve_stream_root_config(TOOL, root, asked),
            // A project of no one catalog: the search before read another config.
            (true, true) => resolve_config_unread(TOOL, root, asked),
            (true, false) => resolve_config(TOOL, root, asked),
        },
    };
    match config {
        Err(_) if stream.hits.is_empty() => Ok(None),
        config => Ok(Some(config?)),
    }
}

fn run_by_vecgrep() -> bool {
    std::env::var(vecgrep_bins::app::RUN_BY_ENV).is_ok_and(|by| by == "vecgrep")
}

/// The root the hits name, else the one of the current directory.
fn root_of(hits: &[HitRecord]) -> Result<ProjectRoot> {
    match hits.iter().find_map(|h| h.root.as_deref()) {
        Some(root) => Ok(root_named(Path::new(root))?),
        None => {
            let cwd = vecgrep_bins::app::current_dir()?;
            Ok(select_root(&cwd, &[])?)
        }
    }
}

/// Whether `root` is the one the current directory selects: chosen by the
/// user, not by the stream.
fn is_where_the_user_is(root: &ProjectRoot) -> bool {
    // A current directory since removed is no project of the user's.
    let cwd = vecgrep_bins::app::current_dir();
    cwd.is_ok_and(|cwd| select_root(&cwd, &[]).is_ok_and(|here| here.path == root.path))
}

/// The query the stream answers: its judgement's, else its hits'.
fn query_of(stream: &SearchStream) -> Result<String> {
    stream
        .judgement
        .as_ref()
        .map(|j| j.query.clone())
        .or_else(|| stream.hits.iter().find_map(|h| h.query.clone()))
        .ok_or_else(|| anyhow!("the hits carry no query to answer (vg-query writes one in each hit)"))
}

/// The chat endpoint the answer may be asked of: set, and allowed by the
/// privacy mode in force (a model off this machine needs
/// `cloud_reasoning_ok`, since the top results go to it).
fn llm_url(config: &ResolvedConfig) -> Result<&str> {
    let url = config.llm_url.as_deref().ok_or_else(|| {
        anyhow!("an answer needs llm_url, an OpenAI-compatible chat endpoint (pass --llm-url or set it in your global config)")
    })?;
    match vecgrep::ask::chat_refused(config.privacy_mode, url) {
        Some(why) => Err(anyhow!("{why}; nothing was sent")),
        None => Ok(url),
    }
}

fn ask(
    cli: &AnswerCli,
    config: &ResolvedConfig,
    root: &ProjectRoot,
    stream: &SearchStream,
    (reason, query, url): (AskReason, &str, &str),
    out: &mut dyn Write,
) -> Result<()> {
    let settings = ChatSettings::new(url, config.llm_model.as_deref(), Duration::from_secs_f64(config.llm_timeout));
    let client = ChatClient::connect(&settings)?;
    let given = cli.answer.context_hits.min(stream.hits.len());
    note(
        TOOL,
        config.quiet,
        &format!(
            "asking {} at {} about the top {} ({})",
            client.model(),
            client.endpoint(),
            if given == 1 { "result".to_string() } else { format!("{given} results") },
            why(reason)
        ),
    );
    let answer = answer::answer(&client, query, &stream.hits, cli.answer.context_hits)?;
    // An answer the model gave is written whatever becomes of learning
    // from it (a full or unwritable learned.md): that failure is the
    // run's error, said after it.
    let (learned, failed) = match cli.answer.learn.then(|| learn(config, root, query, stream, &answer)) {
        Some(Ok(names)) => (names, None),
        Some(Err(e)) => (Vec::new(), Some(e)),
        None => (Vec::new(), None),
    };
    write_record(out, &answer.record(query, reason, learned))?;
    match failed {
        Some(e) => Err(e.context("the answer is written, but nothing was learned from it")),
        None => Ok(()),
    }
}

fn why(reason: AskReason) -> &'static str {
    match reason {
        AskReason::Insufficient => "they may not answer the query",
        AskReason::Forced => "--force-answer",
        AskReason::Unjudged => "the stream has no judgement",
    }
}

/// `--learn`: write the concepts the answer bridges; their names.
fn learn(
    config: &ResolvedConfig,
    root: &ProjectRoot,
    query: &str,
    stream: &SearchStream,
    answer: &answer::Answer,
) -> Result<Vec<String>> {
    let missing = match &stream.judgement {
        Some(j) => j.missing.clone(),
        None => answer::judge_records(query, &stream.hits).missing,
    };
    let (known, _) = vecgrep::concepts::load(root);
    let given = &stream.hits[..answer.given];
    let learned = answer::concepts_bridged(query, &missing, &answer.cited.text, given, &known);
    if learned.is_empty() {
        note(
            TOOL,
            config.quiet,
            "nothing to learn: the answer bridges none of the query's missing words to the code's",
        );
        return Ok(Vec::new());
    }
    let path = answer::append_learned(root, &learned, query, &answer.model)?;
    let names: Vec<String> = learned.iter().map(|c| c.name.clone()).collect();
    note(TOOL, config.quiet, &format!("learned {}: review {}", names.join(", "), path.display()));
    Ok(names)
}
