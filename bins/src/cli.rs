//! One clap definition per binary. `--help`, `man/*.1` and `completions/`
//! are all generated from these, so a flag exists in all three or in none.

use std::path::PathBuf;

use clap::builder::PossibleValuesParser;
use clap::{Args, CommandFactory, Parser, ValueEnum};
use vecgrep::project::{EmbedderSource, Planner, PrivacyMode, SearchMode};

/// A PATH as given, any bytes, but not the empty one, which names no file:
/// clap's own parser of paths called it missing ("a value is required ...
/// but none was supplied", audit 244), and a path joined to the current
/// directory would search all of it.
fn any_path() -> impl clap::builder::TypedValueParser<Value = PathBuf> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().try_map(|path| match path.is_empty() {
        true => Err("an empty path names no file"),
        false => Ok(PathBuf::from(path)),
    })
}

/// Filters that decide which files are walked, as in ripgrep.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Filter options")]
pub struct WalkArgs {
    /// Only index and search files of TYPE (e.g. rust, py, js); repeatable. See `rg --type-list`.
    #[arg(short = 't', long = "type", value_name = "TYPE")]
    pub types: Vec<String>,
    /// Leave out files of TYPE; repeatable.
    #[arg(short = 'T', long = "type-not", value_name = "TYPE")]
    pub types_not: Vec<String>,
    /// Include files matching GLOB, or exclude them with a leading '!'; repeatable. A glob with a '/' is matched from the project root, as -E's are (rg matches from the current directory).
    #[arg(short = 'g', long = "glob", value_name = "GLOB", allow_hyphen_values = true)]
    pub globs: Vec<String>,
    /// Descend at most NUM levels below each path, as rg: 1 takes only the files directly in a directory, 2 those in its subdirectories too, 0 only the paths that are files themselves.
    #[arg(long, value_name = "NUM", value_parser = parse_count, allow_negative_numbers = true)]
    pub max_depth: Option<usize>,
    /// Follow symbolic links, but only to targets inside the paths walked (the PATHs given, else the current directory; for a server, the paths it serves), never into .git, .hg, .jj or .vecgrep: a link out of them is skipped, a linked directory never walked.
    #[arg(short = 'L', long)]
    pub follow: bool,
    /// Include hidden files and directories.
    #[arg(long)]
    pub hidden: bool,
    /// Do not respect .gitignore, .ignore or .vecgrepignore files.
    #[arg(long)]
    pub no_ignore: bool,
    /// Also read ignore rules from PATH (gitignore syntax); repeatable.
    #[arg(long, value_name = "PATH", value_parser = any_path(), allow_hyphen_values = true)]
    pub ignore_file: Vec<PathBuf>,
    /// Skip files larger than SIZE: bytes, or with K, M or G (KiB, MiB, GiB) as ripgrep reads it: 512K, 10M.
    #[arg(long, value_name = "SIZE", value_parser = parse_byte_size, allow_hyphen_values = true)]
    pub max_filesize: Option<String>,
    /// Also index lock files (Cargo.lock, package-lock.json, ...), minified bundles (*.min.js, very long lines) and generated code (*.pb.go, "DO NOT EDIT"/"@generated" headers), which are skipped by default.
    #[arg(long)]
    pub include_generated: bool,
}

/// Filters on a file's metadata and path at search time, as fd writes them;
/// they narrow the candidates before ranking, so k results come back
/// whenever k pass.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Filter options")]
pub struct FileFilterArgs {
    /// Only files modified within WHEN: a span back from now (2w, 3d, 12h, 30min), since a date in UTC (2026-01-31, '2026-01-31 14:30') or a relative form ('2 weeks ago', yesterday, @1714521600).
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    pub changed_within: Option<String>,
    /// Only files modified before WHEN: a span back from now (2w, 3d), a date in UTC (2026-01-31) or a relative form ('2 weeks ago', yesterday).
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    pub changed_before: Option<String>,
    /// Only files of at least (+SIZE) or at most (-SIZE) bytes, e.g. +10k, -1M (k, m, g: powers of 1000; ki, mi, gi: of 1024); repeatable. As fd's -S, not ripgrep's --smart-case: matching by meaning and by words ignores case already.
    #[arg(short = 'S', long, value_name = "SIZE", allow_hyphen_values = true, value_parser = parse_size)]
    pub size: Vec<String>,
    /// Leave files matching GLOB out of the results (gitignore syntax, from the root: tests/, *_test.go, /vendor); repeatable, up to 1024 times and 64 KiB in all. Unlike -g, they stay indexed.
    #[arg(short = 'E', long, value_name = "GLOB", allow_hyphen_values = true)]
    pub exclude: Vec<String>,
}

/// `--package`: a search kept to one package's files.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Filter options")]
pub struct PackageArgs {
    /// Only files of package NAME: those whose nearest package manifest above them (package.json, Cargo.toml, pyproject.toml, setup.cfg, go.mod, composer.json, pom.xml, *.gemspec, mix.exs, pubspec.yaml, *.cabal) names NAME; an unknown NAME is an error listing the packages there are. Reads the working tree, so not with --rev or --label.
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub package: Option<String>,
}

impl FileFilterArgs {
    /// The filter these flags ask for, times read against now.
    pub fn to_filter(&self) -> Result<vecgrep::search::FileFilter, String> {
        vecgrep::search::FileFilter::from_flags(
            self.changed_within.as_deref(),
            self.changed_before.as_deref(),
            &self.size,
            &self.exclude,
            std::time::SystemTime::now(),
        )
    }
}

fn parse_when(s: &str) -> Result<String, String> {
    vecgrep::search::parse_when(s, std::time::SystemTime::now()).map(|_| s.to_string())
}

fn parse_size(s: &str) -> Result<String, String> {
    vecgrep::search::FileFilter::default().size(s).map(|()| s.to_string())
}

fn parse_byte_size(s: &str) -> Result<String, String> {
    vecgrep::project::ByteSize::parse(s).map(|_| s.to_string())
}

/// Settings that also live in config files; a flag beats the project config,
/// which beats the global config, which beats the default.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Index options")]
pub struct IndexConfigArgs {
    /// Characters per chunk: whole functions, classes and sections are packed up to it, bigger ones cut at their inner units; never past the model's 256-token window.
    #[arg(long, value_name = "NUM", value_parser = parse_chunk_size, allow_negative_numbers = true)]
    pub chunk_size: Option<usize>,
    /// Characters of whole lines after a chunk that it carries too, the start of the next unit.
    #[arg(long, value_name = "NUM", value_parser = parse_count, allow_negative_numbers = true)]
    pub chunk_overlap: Option<usize>,
    /// Embed every chunk with the model now (about 100 s for tokio on two cores) rather than giving new chunks static vectors alone (vecgrep's static code model, microseconds each), which searches rank meaning by until the model's vectors are there.
    #[arg(long = "full", id = "embed_all")]
    pub embed_all: bool,
    /// Ask before indexing more than NUM new or changed files, when on a terminal and the run comes first (not a server's, nor the picker's in the background); 0 never asks.
    #[arg(long, value_name = "NUM", value_parser = parse_count_u64, allow_negative_numbers = true)]
    pub index_warn_threshold: Option<u64>,
}

/// Which model embeds, and where: settings of the index's and of the
/// commit log's (vg-log takes them too; `vecgrep --log` refused them as
/// doing nothing, though they decide how the log is embedded).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Index options")]
pub struct EmbedderArgs {
    /// Embedding model: all-MiniLM-L6-v2 (the default) or vecgrep-code-minilm-l6 (MiniLM fine-tuned on code by this project; see the README's Models) when local; the server's model name when remote. Changing it rebuilds the index.
    #[arg(long, value_name = "NAME")]
    pub embedder_model: Option<String>,
    /// Where embeddings are computed: local, or remote (an embedding server at --embedder-url).
    #[arg(long, value_name = "SOURCE", value_parser = PossibleValuesParser::new(EmbedderSource::NAMES))]
    pub embedder_source: Option<String>,
    /// The embedding server's OpenAI-compatible endpoint, e.g. http://gpu:8080/v1/embeddings; its API key is read from VECGREP_EMBEDDER_API_KEY.
    #[arg(long, value_name = "URL")]
    pub embedder_url: Option<String>,
}

/// Whether a repository's own config may choose what runs and where its
/// code goes (UntrustedConfigChoosesNoDestination).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Config options")]
pub struct TrustArgs {
    /// Let the project's own .vecgrep/config.toml choose commands to run (open_cmd) and where code is sent and which index it goes to (embedder_source, embedder_url, llm_url, store_url, store_project, store_adopt, privacy_mode), and make a run larger or a wait longer than your own settings ask (max_filesize, chunk_size, chunk_overlap, include_generated, index_warn_threshold, embed_all, rate_limit, embedder_timeout, llm_timeout).
    #[arg(long)]
    pub trust_project_config: bool,
}

/// Where the index lives when it is not the project's own `.vecgrep/index.db`.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Config options")]
pub struct StoreArgs {
    /// Keep the index in a shared Postgres database with pgvector, e.g. postgres://db.internal/vecgrep or postgres:///vecgrep?host=/run/postgresql; missing parts come from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE. Every machine given the same URL and --store-project shares one index (the commit log vg-log keeps stays in the checkout's own). The URL is never printed.
    #[arg(long = "store", id = "store_url", value_name = "URL")]
    pub store_url: Option<String>,
    /// The name the project's index is kept under in the shared database; every checkout given the same name shares it (the first to write it is recorded as its creator; others need --store-adopt).
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub store_project: Option<String>,
    /// Write to (and clear) a shared project's index that another checkout created, and be recorded as one of its writers: without it, a checkout that names another's project (a cloned repository's config, a typo) cannot change it.
    #[arg(long)]
    pub store_adopt: bool,
}

/// What may leave the machine (`privacy_mode`): a group of its own, as the
/// search that feeds an answer (`vecgrep --answer`'s vg-query) is held to
/// it too, not only the answer.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Answer options")]
pub struct PrivacyArgs {
    /// What may leave the machine: local_only (nothing: a chat model or embedding server not on loopback is refused: --ask warns and still answers from the search, --answer, and the search it answers from, fail before anything is sent; a search (vg-query) given it refuses such an embedding server), cloud_reasoning_ok (the question and the top results may go to the chat model), cloud_embedding_ok (the embedding server too).
    #[arg(long, value_name = "MODE", value_parser = PossibleValuesParser::new(PrivacyMode::NAMES))]
    pub privacy_mode: Option<String>,
}

/// Asking a chat model for an answer from the top results (`vg-answer`).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Answer options")]
pub struct AnswerArgs {
    /// Ask even when the results look like they answer the query.
    #[arg(long)]
    pub force_answer: bool,
    /// Write the concepts the answer bridges (a query word the code lacks, and the identifiers the answer names for it that the results hold) to .vecgrep/kg/learned.md, for a person to review.
    #[arg(long)]
    pub learn: bool,
    /// The chat model's OpenAI-compatible endpoint: its base URL (http://127.0.0.1:8080/v1) or its chat completions URL; its API key is read from VECGREP_LLM_API_KEY.
    #[arg(long, value_name = "URL")]
    pub llm_url: Option<String>,
    /// The chat model to ask.
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub llm_model: Option<String>,
    /// Results sent to the model, best first (1 to 20).
    #[arg(long, value_name = "NUM", default_value_t = vecgrep::answer::DEFAULT_CONTEXT_HITS, value_parser = parse_context_hits, allow_negative_numbers = true)]
    pub context_hits: usize,
}

fn parse_context_hits(s: &str) -> Result<usize, String> {
    let max = vecgrep::answer::MAX_CONTEXT_HITS;
    match s.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a whole number from 1 to {max}")),
    }
}

/// Searching the project's git history (`vg-log`).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "History options")]
pub struct LogArgs {
    /// Only commits authored at or after DATE: a date in UTC (2024-05-01, '2024-05-01 14:30'), a span back from now (2w, 3d) or a relative form ("2 weeks ago", yesterday, @1714521600); not every form git takes ("last friday", "May 1 2024").
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only commits authored at or before DATE; a day alone (2024-05-01) includes that whole day.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Only commits whose author's name or email contains TEXT (any case).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub author: Option<String>,
    /// Index and search only the NUM newest commits of HEAD's history.
    #[arg(long, value_name = "NUM", value_parser = |s: &str| whole_in::<u64>(s, 1, None), allow_negative_numbers = true)]
    pub limit: Option<u64>,
    /// Index the lines each commit changed and search them beside the messages.
    #[arg(long)]
    pub with_diff: bool,
    /// Search only the lines commits changed, not their messages (indexes them as --with-diff does).
    #[arg(long)]
    pub diffs_only: bool,
}

/// Settings for ranking results.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Search options")]
pub struct SearchConfigArgs {
    /// Return at most NUM results.
    #[arg(short = 'k', long = "top-k", value_name = "NUM", value_parser = parse_top_k, allow_negative_numbers = true)]
    pub top_k: Option<usize>,
    /// Drop results scoring below NUM (cosine similarity, -1 to 1). In lexical mode it cuts BM25 on 0..1, and only when set: unset, words alone keep every match. Unset, a hybrid search of code also passes the definition of the one identifier searched for (`vecgrep calculateTotal`), and the definition of a name listed by a concept the query names (`.vecgrep/kg/`), whatever its cosine.
    #[arg(long, value_name = "NUM", value_parser = parse_threshold, allow_hyphen_values = true)]
    pub threshold: Option<f32>,
    /// Rank by meaning (semantic), by words (lexical, BM25; a search runs no model; vg-serve needs it all the same, to keep its index) or both fused (hybrid). In semantic and hybrid mode the score is the cosine similarity; in lexical mode it is BM25 mapped onto 0..1.
    #[arg(long, value_name = "MODE", value_parser = PossibleValuesParser::new(SearchMode::NAMES))]
    pub mode: Option<String>,
}

/// At most so many results from one file, for the tools that search files.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Search options")]
pub struct MaxCountArgs {
    /// At most NUM results from each file, as ripgrep's -m limits a file's matching lines: the k results then come from at least k/NUM files. Without it, further results of a file already shown only step back in the ranking.
    #[arg(short = 'm', long = "max-count", value_name = "NUM", value_parser = parse_max_count, allow_negative_numbers = true)]
    pub max_count: Option<usize>,
}

fn parse_max_count(s: &str) -> Result<usize, String> {
    whole_in(s, 1, None)
}

/// `s` as a count; one past what the machine counts is too large, not
/// "not a whole number".
fn whole_number(s: &str) -> Result<usize, String> {
    whole_in(s, 0, None)
}

/// `s` as a whole number from `min` to `max` (None: as large as `T`
/// holds), refused in the same words for every flag ("'0' is not a whole
/// number from 1 to 1000"), never in the integer parser's ("invalid digit
/// found in string", "0 is not in 1..18446744073709551615").
fn whole_in<T: TryFrom<u64>>(s: &str, min: u64, max: Option<u64>) -> Result<T, String> {
    let wanted = match (min, max) {
        (0, None) => "a whole number".to_string(),
        (min, None) => format!("a whole number of {min} or more"),
        (min, Some(max)) => format!("a whole number from {min} to {max}"),
    };
    let n = match s.parse::<u64>() {
        Ok(n) if n >= min && max.is_none_or(|max| n <= max) => n,
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => return Err(format!("'{s}' is too large")),
        _ => return Err(format!("'{s}' is not {wanted}")),
    };
    T::try_from(n).map_err(|_| format!("'{s}' is too large"))
}

fn parse_count(s: &str) -> Result<usize, String> {
    whole_in(s, 0, None)
}

fn parse_count_u64(s: &str) -> Result<u64, String> {
    whole_in(s, 0, None)
}

fn parse_count_u32(s: &str) -> Result<u32, String> {
    whole_in(s, 0, None)
}

fn parse_port(s: &str) -> Result<u16, String> {
    whole_in(s, 0, Some(u64::from(u16::MAX)))
}

fn parse_top_k(s: &str) -> Result<usize, String> {
    vecgrep::project::check_top_k(whole_number(s)?)
}

fn parse_threshold(s: &str) -> Result<f32, String> {
    let t: f64 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    vecgrep::project::check_threshold(t)
}

fn parse_chunk_size(s: &str) -> Result<usize, String> {
    vecgrep::project::check_chunk_size(whole_number(s)?)
}

/// Asking a question (`vg-ask`): who plans.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Ask options")]
pub struct AskArgs {
    /// Who turns the question into a plan: rules (no model, no network) or llm (the chat model at llm_url, its plan checked against the schema; a plan that fails falls back to the rules with a warning).
    #[arg(long, value_name = "PLANNER", value_parser = PossibleValuesParser::new(Planner::NAMES))]
    pub planner: Option<String>,
}

/// Silence, for the tools whose stderr carries progress and notes (those
/// that say more or less, the servers and the picker, declare their own).
#[derive(Args, Debug, Clone, Default)]
pub struct QuietArgs {
    /// No progress or notes on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,
}

/// Which root: the project found from the paths, or a catalog's projects
/// as one, for every tool that searches or indexes files.
#[derive(Args, Debug, Clone, Default)]
pub struct CatalogArgs {
    /// Search catalog NAME instead of the project here: every project of it as one ranking, each hit naming its project (see vg-catalog). PATHS then narrow it to parts of its projects. Without it, the default context (vg-catalog use) is searched when no PATH is given, outside any project or inside one of its projects.
    #[arg(long, value_name = "NAME")]
    pub catalog: Option<String>,
}

/// A catalog's label: the revision a name gives in each of its projects.
#[derive(Args, Debug, Clone, Default)]
pub struct LabelArgs {
    /// With a catalog: index and search the revision NAME names (a branch or tag, git-like: lowercase words joined by '.', '/', '-' or '=') in each of its projects, as one, instead of their working trees; a project where it names nothing is said and left out. A search's PATHs name places in the label's trees; vg-index indexes the label whole and takes none. Chunks any index of the catalog already embedded are not embedded again.
    #[arg(long, value_name = "NAME", conflicts_with = "rev")]
    pub label: Option<String>,
}

/// What becomes of PATHS outside the project root, for every tool that takes PATHS.
#[derive(Args, Debug, Clone, Default)]
pub struct OutsideRootArgs {
    /// Skip PATHS outside the project root instead of failing.
    #[arg(long)]
    pub skip_outside_root: bool,
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-root",
    version,
    about = "Print the project root that vecgrep would use",
    after_help = "Examples:\n  vg-root             print the root for the current directory\n  vg-root --json      {\"type\":\"root\",\"v\":1,\"root\":\"/src/app\",\"marker\":\"git\"}\n  cd \"$(vg-root)\"     jump to the project root"
)]
pub struct RootCli {
    /// Print a JSON record with the root and the marker that chose it.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub outside: OutsideRootArgs,
    #[command(flatten)]
    pub quiet: QuietArgs,
    /// Paths the invocation would search; they may choose the root and must lie inside it.
    #[arg(value_name = "PATH", value_parser = any_path())]
    pub paths: Vec<PathBuf>,
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-index",
    version,
    about = "Build or update the semantic index of a project",
    after_help = "Examples:\n  vg-index                     index the current directory\n  vg-index -t rust src/        index only Rust files under src/\n  vg-index --stats             files, chunks, model's vectors, size, table\n  vg-index --full              give every chunk the model's vector now\n  vg-index --verify            check the index for damage (after a crash, say)\n  vg-index --reindex .         rebuild from scratch\n  vg-index | jq 'select(.type==\"summary\")'"
)]
pub struct IndexCli {
    /// Print statistics about the index instead of indexing.
    #[arg(long, conflicts_with_all = ["reindex", "clear_cache", "verify"])]
    pub stats: bool,
    /// Check the index, and each revision's (--rev), for damage (SQLite's and the word index's integrity, orphaned chunks or words, malformed vectors) instead of indexing; exit 2 if any.
    #[arg(long, conflicts_with_all = ["reindex", "clear_cache"])]
    pub verify: bool,
    /// With --stats or --verify: print a JSON record.
    #[arg(long)]
    pub json: bool,
    /// Throw the index away and build it again (with --label, that label's index).
    #[arg(long)]
    pub reindex: bool,
    /// Delete the index (keeps .vecgrep/config.toml) and stop; with --label, that label's index only.
    #[arg(long, conflicts_with = "reindex")]
    pub clear_cache: bool,
    /// Index the whole tree of a git revision (a branch, tag or commit, as git names them) straight from the repository, leaving the working tree alone; chunks any index of the project already embedded are not embedded again. Search it with vg-query --rev.
    #[arg(long, value_name = "REV", conflicts_with_all = ["stats", "verify", "clear_cache", "reindex", "forget"])]
    pub rev: Option<String>,
    /// Drop the index of a revision indexed with --rev (by any name git gives it now, or its sha) and the vectors only it held. A name that moved since another revision was indexed by it (--stats: "indexed as") is refused: forget by sha.
    #[arg(long, value_name = "REV", conflicts_with_all = ["stats", "verify", "clear_cache", "reindex"])]
    pub forget: Option<String>,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub label: LabelArgs,
    #[command(flatten)]
    pub outside: OutsideRootArgs,
    #[command(flatten)]
    pub quiet: QuietArgs,
    #[command(flatten)]
    pub index: IndexConfigArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub walk: WalkArgs,
    /// Files or directories to index (default: the current directory).
    #[arg(value_name = "PATH", value_parser = any_path())]
    pub paths: Vec<PathBuf>,
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-query",
    version,
    about = "Search a project by meaning; print hits as NDJSON",
    after_help = "Examples:\n  vg-query \"where are retries configured\" src/\n  vg-query -k 50 \"timeouts\" | vg-format -C 3\n  vg-query \"parse the config file\" | vg-format --files | xargs wc -l\n  vg-query \"auth\" | jq -r .file | sort -u"
)]
pub struct QueryCli {
    /// What to look for, in plain words.
    #[arg(value_name = "QUERY")]
    pub query: String,
    /// Files or directories to search (default: the current directory).
    #[arg(value_name = "PATH", value_parser = any_path())]
    pub paths: Vec<PathBuf>,
    /// Search the existing index as it is; do not update it first (an index not made here, nor checked here by a run since it came, is refused).
    #[arg(long)]
    pub no_index: bool,
    /// Search the whole project, not just PATHS (PATHS are still indexed; the filters, -t, -g and the rest, still apply).
    #[arg(long)]
    pub no_scope: bool,
    /// Rebuild the index from scratch before searching.
    #[arg(long, conflicts_with = "no_index")]
    pub reindex: bool,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub label: LabelArgs,
    #[command(flatten)]
    pub outside: OutsideRootArgs,
    /// End with a judgement record: whether the hits look like they answer the query, and why not.
    #[arg(long)]
    pub judge: bool,
    /// Say in each hit record why it ranked where it did (`reasoning`): its place by meaning and by words, the words and names it matched, a concept it mentions, and what its file did to its place.
    #[arg(long)]
    pub explain: bool,
    /// Search a git revision (a branch, tag or commit) instead of the working tree; it is indexed from the repository first if it is not yet (see vg-index --rev). PATHs then name places in the revision, which need not exist in the working tree.
    #[arg(long, value_name = "REV", conflicts_with = "reindex")]
    pub rev: Option<String>,
    #[command(flatten)]
    pub quiet: QuietArgs,
    #[command(flatten)]
    pub search: SearchConfigArgs,
    #[command(flatten)]
    pub max_count: MaxCountArgs,
    #[command(flatten)]
    pub index: IndexConfigArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub privacy: PrivacyArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub walk: WalkArgs,
    #[command(flatten)]
    pub filter: FileFilterArgs,
    #[command(flatten)]
    pub package: PackageArgs,
}

/// When to color output.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// Color when writing to a terminal, NO_COLOR is unset or empty, and TERM is set and not dumb.
    #[default]
    Auto,
    Always,
    Never,
}

/// Output options shared by vg-format and vecgrep.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Output options")]
pub struct OutputArgs {
    /// Print each file with results once, best first.
    #[arg(short = 'l', long = "files-with-matches", visible_alias = "files", conflicts_with_all = ["count", "json"])]
    pub files: bool,
    /// Print the number of results per file (a result read twice counts once).
    #[arg(short = 'c', long, conflicts_with = "json")]
    pub count: bool,
    /// Print hit records as JSON lines (paths relative to the root).
    #[arg(long)]
    pub json: bool,
    /// Show NUM lines after each shown line.
    #[arg(short = 'A', long = "after-context", value_name = "NUM", value_parser = parse_count, allow_negative_numbers = true)]
    pub after_context: Option<usize>,
    /// Show NUM lines before each shown line.
    #[arg(short = 'B', long = "before-context", value_name = "NUM", value_parser = parse_count, allow_negative_numbers = true)]
    pub before_context: Option<usize>,
    /// Show NUM lines before and after each shown line.
    #[arg(short = 'C', long = "context", value_name = "NUM", value_parser = parse_count, allow_negative_numbers = true)]
    pub context: Option<usize>,
    /// Group results under a heading per file (default on a terminal).
    #[arg(long, overrides_with = "no_heading")]
    pub heading: bool,
    /// Print `path:line:text` lines (default when piped).
    #[arg(long, overrides_with = "heading")]
    pub no_heading: bool,
    /// Show each line's number (the default; accepted as ripgrep's -n is).
    #[arg(short = 'n', long, overrides_with = "no_line_number")]
    pub line_number: bool,
    /// Leave out line numbers.
    #[arg(short = 'N', long, overrides_with = "line_number")]
    pub no_line_number: bool,
    /// Show each line's path when piped, each file's heading on a terminal (the default; accepted as ripgrep's -H is).
    #[arg(short = 'H', long, overrides_with = "no_filename")]
    pub with_filename: bool,
    /// Leave out paths: `line:text` when piped, no file headings on a terminal.
    #[arg(short = 'I', long, overrides_with = "with_filename")]
    pub no_filename: bool,
    /// Follow each path with a NUL byte instead of a newline or `:`, for `xargs -0` (as ripgrep's -0).
    #[arg(short = '0', long)]
    pub null: bool,
    /// Lines shown per result: its best-matching lines [default: 3 with headings, 1 without].
    #[arg(long, value_name = "NUM", value_parser = |s: &str| whole_in::<u64>(s, 1, Some(1000)), allow_negative_numbers = true)]
    pub lines: Option<u64>,
    /// Leave out each shown line longer than NUM bytes, saying how long it was in its place, as ripgrep's -M: a hit on a line of minified code is otherwise the whole line. 0: no limit (the default).
    #[arg(short = 'M', long, value_name = "NUM", value_parser = parse_count, allow_negative_numbers = true)]
    pub max_columns: Option<usize>,
    /// With -M, show the first NUM bytes of a longer line, then how many bytes were left out, instead of leaving it out; without -M it does nothing, as ripgrep's.
    #[arg(long)]
    pub max_columns_preview: bool,
    /// When to use colors.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-format",
    version,
    about = "Render vecgrep hit records for people and pipelines",
    after_help = "Examples:\n  vg-query \"error handling\" | vg-format\n  vg-query \"retry\" | vg-format --files | xargs rg -n unwrap\n  vg-query -k 50 \"timeouts\" | vg-format -C 3\n  vg-query \"auth\" | vg-format --count"
)]
pub struct FormatCli {
    #[command(flatten)]
    pub output: OutputArgs,
    /// No advice on stderr after results that may not answer the query
    /// (also `quiet` in the config of the project the hits come from).
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-answer",
    version,
    about = "Answer a search from its top results with a chat model, citing them",
    after_help = "Examples:\n  vg-query --judge \"where is the ledger kept\" | vg-answer | vg-format\n  vg-query \"auth flow\" | vg-answer --force-answer \\\n      --llm-url http://127.0.0.1:8080/v1 | jq 'select(.type==\"answer\")'\n  vecgrep --answer --learn \"how do we bill tenants\""
)]
pub struct AnswerCli {
    /// No notes on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub answer: AnswerArgs,
    #[command(flatten)]
    pub privacy: PrivacyArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-ask",
    version,
    about = "Ask a question of a project: the plan made of it, explained hits, and an answer when one is called for",
    after_help = "Examples:\n  vg-ask \"rust files changed this week that retry uploads\"\n  vg-ask --plan \"python tests for the csv reader, not in vendor\"\n  vg-ask --json \"explain how the index lock works\" | jq .answer_summary\n  vecgrep --ask \"where is parse_config defined\""
)]
pub struct AskCli {
    /// The question, in plain words, filters and all.
    #[arg(value_name = "QUESTION")]
    pub query: String,
    /// Files or directories to search (default: the current directory).
    #[arg(value_name = "PATH", value_parser = any_path())]
    pub paths: Vec<PathBuf>,
    /// Print the plan made of QUESTION and stop: nothing is indexed or searched.
    #[arg(long)]
    pub plan: bool,
    /// Print the JSON record even on a terminal.
    #[arg(long)]
    pub json: bool,
    /// Search the existing index as it is; do not update it first (an index not made here, nor checked here by a run since it came, is refused).
    #[arg(long)]
    pub no_index: bool,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub outside: OutsideRootArgs,
    #[command(flatten)]
    pub quiet: QuietArgs,
    #[command(flatten)]
    pub ask: AskArgs,
    #[command(flatten)]
    pub answer: AnswerArgs,
    #[command(flatten)]
    pub privacy: PrivacyArgs,
    #[command(flatten)]
    pub search: SearchConfigArgs,
    #[command(flatten)]
    pub index: IndexConfigArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub walk: WalkArgs,
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-log",
    version,
    about = "Search the project's git history by meaning; print commit records as NDJSON",
    after_help = "Examples:\n  vg-log \"retry failed uploads\"\n  vg-log --since \"3 months ago\" --author ada \"flaky test fix\" | vg-format\n  vg-log --with-diff \"switch the cache to an LRU\" src/cache/ | vg-format\n  vg-log \"timeouts\" | vg-format --files | xargs rg -n --no-messages timeout\n  vg-log \"release notes\" | jq -r .sha | xargs -n1 git show --stat"
)]
pub struct LogCli {
    /// What to look for, in plain words.
    #[arg(value_name = "QUERY")]
    pub query: String,
    /// Only commits that touched these files or directories (default: the current directory, as the other tools take it: from the project root, every commit). A path gone from the working tree still filters; one that no commit searched touched either is an error.
    #[arg(value_name = "PATH", value_parser = any_path())]
    pub paths: Vec<PathBuf>,
    /// Search the commit log as it is; do not bring it up to date first.
    #[arg(long)]
    pub no_index: bool,
    #[command(flatten)]
    pub outside: OutsideRootArgs,
    #[command(flatten)]
    pub quiet: QuietArgs,
    #[command(flatten)]
    pub log: LogArgs,
    #[command(flatten)]
    pub search: SearchConfigArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-serve",
    version,
    about = "Serve vecgrep searches over HTTP from a warm model and index",
    after_help = "Examples:\n  vg-serve src/\n  curl -s 'http://127.0.0.1:PORT/search?q=error+handling&k=5'\n  curl -s http://127.0.0.1:PORT/status\n  VECGREP_TOKEN=s3cret vg-serve --port 8080 --bind 0.0.0.0 .\n  vg-serve --rate-limit 0 .     no limit, for a search per keystroke:\n  fzf --disabled --bind \"change:reload:curl -sG \\\n      --data-urlencode q={q} http://127.0.0.1:PORT/search | vg-format --files\""
)]
pub struct ServeCli {
    /// Directories or files to index and serve (default: the current directory).
    #[arg(value_name = "PATH", value_parser = any_path())]
    pub paths: Vec<PathBuf>,
    /// Address to listen on; anything but a loopback address exposes your code to the network.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Port to listen on; 0 picks a free one.
    #[arg(short = 'p', long, value_name = "PORT", default_value_t = 0, value_parser = parse_port, allow_negative_numbers = true)]
    pub port: u16,
    /// Require `Authorization: Bearer TOKEN` on every request [env: VECGREP_TOKEN].
    #[arg(long, value_name = "TOKEN", allow_hyphen_values = true)]
    pub token: Option<String>,
    /// Index PATHS completely, every chunk with the model's vector, before listening.
    #[arg(long)]
    pub full_index: bool,
    /// Seconds between checks for changed files.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = parse_refresh, allow_negative_numbers = true)]
    pub refresh: f64,
    /// Requests answered at once: each connection has a thread of its own, and a worker answers a request once its head has arrived.
    #[arg(long, value_name = "NUM", default_value_t = 16, value_parser = |s: &str| whole_in::<u16>(s, 1, Some(256)), allow_negative_numbers = true)]
    pub workers: u16,
    /// Answer a client address 429 past NUM requests in a minute (/health, /status, a job's status and /v1/embeddings are always answered); 0 is no limit.
    #[arg(long, value_name = "NUM", value_parser = parse_count_u32, allow_negative_numbers = true)]
    pub rate_limit: Option<u32>,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub outside: OutsideRootArgs,
    /// No notes on stderr; errors and the listening URL are still printed.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    #[command(flatten)]
    pub search: SearchConfigArgs,
    #[command(flatten)]
    pub index: IndexConfigArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub walk: WalkArgs,
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-mcp",
    version,
    about = "Serve vecgrep to coding agents over the Model Context Protocol (stdio)",
    after_help = "Examples:\n  vg-mcp                              serve the current project\n  vg-mcp src/ docs/                   only these paths\n  claude mcp add vecgrep -- vg-mcp    register with Claude Code (in the project)\n  vecgrep --mcp                       the same server, through the porcelain"
)]
pub struct McpCli {
    /// Directories or files to index and search (default: the current directory); clients can reach nothing else.
    #[arg(value_name = "PATH", value_parser = any_path())]
    pub paths: Vec<PathBuf>,
    /// Index PATHS completely, every chunk with the model's vector, before answering.
    #[arg(long)]
    pub full_index: bool,
    /// Seconds between checks for changed files.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = parse_refresh, allow_negative_numbers = true)]
    pub refresh: f64,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub outside: OutsideRootArgs,
    /// No notes on stderr; errors are still printed.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    #[command(flatten)]
    pub search: SearchConfigArgs,
    #[command(flatten)]
    pub index: IndexConfigArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub walk: WalkArgs,
}

fn parse_refresh(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.1..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds from 0.1 to 3600")),
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-pick",
    version,
    about = "Pick search results interactively; results re-rank by meaning as you type",
    after_help = "Examples:\n  vg-pick                                   search the project, type a question\n  vg-pick \"retry logic\" src/                 start with a query, only under src/\n  rg -l TODO | xargs vg-pick --query \"technical debt\"\n  vg-pick --open-cmd 'nvim +{line} {file}'"
)]
pub struct PickCli {
    /// The query to start with (unless --query is given, then every argument is a PATH).
    #[arg(value_name = "QUERY")]
    pub query_arg: Option<String>,
    /// Files or directories to search (default: the current directory).
    #[arg(value_name = "PATH", value_parser = any_path())]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub pick: PickArgs,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub outside: OutsideRootArgs,
    /// No notes on stderr before and after the picker (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub search: SearchConfigArgs,
    #[command(flatten)]
    pub index: IndexConfigArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub walk: WalkArgs,
    #[command(flatten)]
    pub filter: FileFilterArgs,
}

/// The picker's own options, shared by vg-pick and `vecgrep -i`.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Picker options")]
pub struct PickArgs {
    /// Start with QUERY; every positional argument is then a PATH (for `xargs vecgrep -i --query Q`).
    #[arg(long, value_name = "QUERY", allow_hyphen_values = true)]
    pub query: Option<String>,
    /// Command that opens the picked result: {file}, {line} and {end_line} are filled in.
    #[arg(long, value_name = "CMD", allow_hyphen_values = true)]
    pub open_cmd: Option<String>,
    /// Index PATHS completely, every chunk with the model's vector, before the picker opens.
    #[arg(long)]
    pub full_index: bool,
}

#[derive(Parser, Debug)]
#[command(
    name = "vecgrep",
    version,
    about = "Semantic grep for code: find code by what it does",
    after_help = "Examples:\n  vecgrep \"where are retries configured\" src/\n  vecgrep -l \"error handling\" | xargs rg -n unwrap\n  vecgrep --json \"auth\" | jq -r .file | sort -u\n  vecgrep -t py -C 2 \"read the config file\"\n  vecgrep --stats ; vecgrep --show-root ; vecgrep --index-only .\n  vecgrep --serve --port 8080 src/\n  vecgrep --mcp                             for a coding agent's MCP config\n  vecgrep --answer \"how do we bill tenants\"  a chat model (llm_url) answers\n  vecgrep --ask \"rust files changed this week that retry uploads\"\n  vecgrep --explain \"retry uploads\"         why each result ranked where it did\n  vecgrep catalog add team ~/src/api ~/src/billing\n  vecgrep --catalog team \"retry uploads\"    search both projects as one\n  vecgrep use team                          search catalog team by default"
)]
pub struct VecgrepCli {
    /// What to look for, in plain words.
    #[arg(value_name = "QUERY", required_unless_present_any = ["stats", "show_root", "index_only", "clear_cache", "serve", "mcp", "interactive"])]
    pub query: Option<std::ffi::OsString>,
    /// Files or directories to search (default: the current directory).
    #[arg(value_name = "PATH", value_parser = any_path())]
    pub paths: Vec<PathBuf>,
    /// Print index statistics (files, chunks, holes, size) and stop; every argument is a PATH.
    #[arg(long, conflicts_with_all = ["show_root", "index_only"])]
    pub stats: bool,
    /// Print the project root and stop; every argument is a PATH.
    #[arg(long, conflicts_with = "index_only")]
    pub show_root: bool,
    /// Update the index for PATHS and stop; every argument is a PATH.
    #[arg(long)]
    pub index_only: bool,
    /// Rebuild the index from scratch first.
    #[arg(long)]
    pub reindex: bool,
    /// Delete the index (keeps .vecgrep/config.toml) and stop; every argument is a PATH.
    #[arg(long, conflicts_with_all = ["stats", "show_root", "index_only", "reindex"])]
    pub clear_cache: bool,
    /// Search the existing index as it is; do not update it first (an index not made here, nor checked here by a run since it came, is refused).
    #[arg(long, conflicts_with_all = ["reindex", "index_only"])]
    pub no_index: bool,
    /// Search the whole project, not just PATHS (the filters, -t, -g and the rest, still apply).
    #[arg(long)]
    pub no_scope: bool,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub label: LabelArgs,
    #[command(flatten)]
    pub outside: OutsideRootArgs,
    #[command(flatten)]
    pub quiet: QuietArgs,
    /// Ask a chat model (llm_url) to answer QUERY from the top results when they look insufficient, citing them (vg-answer; see Answer options).
    #[arg(long, conflicts_with_all = ["stats", "show_root", "index_only", "clear_cache", "serve", "mcp", "interactive", "files", "count"])]
    pub answer: bool,
    /// Search a git revision (a branch, tag or commit) instead of the working tree, indexing it from the repository first (with --index-only, just index it); see vg-index --rev.
    #[arg(long, value_name = "REV", conflicts_with_all = ["stats", "show_root", "clear_cache", "serve", "mcp", "interactive", "log", "reindex"])]
    pub rev: Option<String>,
    /// Print the plan QUERY is made into (intent, file filters, what is searched for, whether an answer is wanted) and stop: nothing is indexed or searched (vg-ask --plan; see Ask options).
    #[arg(long, conflicts_with_all = ["stats", "show_root", "index_only", "clear_cache", "serve", "mcp", "interactive", "answer", "log", "ask", "reindex", "rev", "no_scope", "changed_within", "changed_before", "size", "exclude"])]
    pub plan: bool,
    /// Ask QUERY as a question, filters and all ("rust files changed this week that retry uploads"): the plan made of it, the hits with why each ranked, and a chat model's answer when the hits look thin or the question asks to explain (vg-ask; see Ask options).
    #[arg(long, conflicts_with_all = ["stats", "show_root", "index_only", "clear_cache", "serve", "mcp", "interactive", "answer", "log", "rev", "files", "count", "reindex", "no_scope", "changed_within", "changed_before", "size", "exclude"])]
    pub ask: bool,
    /// Say under each result why it ranked where it did: its place by meaning and by words, the words and names it matched, a concept it mentions, and what its file did to its place (vg-query --explain); results are then shown under headings, piped too (--json carries it as each hit's reasoning).
    #[arg(long, conflicts_with_all = ["stats", "show_root", "index_only", "clear_cache", "serve", "mcp", "interactive", "log", "files", "count", "no_heading"])]
    pub explain: bool,
    /// Search the project's git history instead of its files: commits whose messages (or, with --with-diff, changes) answer QUERY; PATHS keep those that touched them (vg-log; see History options).
    #[arg(long, conflicts_with_all = ["stats", "show_root", "index_only", "clear_cache", "serve", "mcp", "interactive", "answer", "reindex"])]
    pub log: bool,
    /// Pick results interactively, re-ranked as you type (vg-pick); a QUERY is optional. Not ripgrep's --ignore-case: vecgrep needs none, since matching by meaning and by words ignores case already.
    #[arg(short = 'i', long, conflicts_with_all = ["stats", "show_root", "index_only", "clear_cache", "serve", "mcp", "no_index", "reindex"])]
    pub interactive: bool,
    #[command(flatten)]
    pub pick: PorcelainPickArgs,
    #[command(flatten)]
    pub server: PorcelainServeArgs,
    #[command(flatten)]
    pub search: SearchConfigArgs,
    #[command(flatten)]
    pub max_count: MaxCountArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub answer_args: AnswerArgs,
    #[command(flatten)]
    pub privacy: PrivacyArgs,
    #[command(flatten)]
    pub ask_args: AskArgs,
    #[command(flatten)]
    pub log_args: LogArgs,
    #[command(flatten)]
    pub index: IndexConfigArgs,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub walk: WalkArgs,
    #[command(flatten)]
    pub filter: FileFilterArgs,
    #[command(flatten)]
    pub package: PackageArgs,
}

/// `vecgrep -i`: runs vg-pick with these and the shared flags.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Picker options")]
pub struct PorcelainPickArgs {
    /// With -i: start with QUERY; every positional argument is then a PATH.
    #[arg(id = "pick_query", long = "query", value_name = "QUERY", requires = "interactive")]
    pub pick_query: Option<String>,
    /// With -i: command that opens the picked result ({file}, {line}, {end_line}).
    #[arg(long, value_name = "CMD", requires = "interactive", allow_hyphen_values = true)]
    pub open_cmd: Option<String>,
}

/// `vecgrep --serve`: runs vg-serve with these and the shared flags.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Server options")]
pub struct PorcelainServeArgs {
    /// Serve searches over HTTP (vg-serve) instead of searching once; every argument is a PATH.
    #[arg(long, conflicts_with_all = ["stats", "show_root", "index_only", "clear_cache", "no_index", "reindex"])]
    pub serve: bool,
    /// Serve coding agents over the Model Context Protocol on stdin/stdout (vg-mcp) instead of searching once; every argument is a PATH.
    #[arg(long, conflicts_with_all = ["serve", "stats", "show_root", "index_only", "clear_cache", "no_index", "reindex"])]
    pub mcp: bool,
    /// With --serve: address to listen on [default: 127.0.0.1].
    #[arg(long, value_name = "ADDR", requires = "serve")]
    pub bind: Option<std::net::IpAddr>,
    /// With --serve: port to listen on; 0 picks a free one [default: 0].
    #[arg(short = 'p', long, value_name = "PORT", requires = "serve", value_parser = parse_port, allow_negative_numbers = true)]
    pub port: Option<u16>,
    /// With --serve: require `Authorization: Bearer TOKEN` [env: VECGREP_TOKEN].
    #[arg(long, value_name = "TOKEN", requires = "serve", allow_hyphen_values = true)]
    pub token: Option<String>,
    /// With --serve, --mcp or -i: index PATHS completely first.
    #[arg(long)]
    pub full_index: bool,
    /// With --serve: answer a client address 429 past NUM requests in a minute; 0 is no limit.
    #[arg(long, value_name = "NUM", requires = "serve", value_parser = parse_count_u32, allow_negative_numbers = true)]
    pub rate_limit: Option<u32>,
}

#[derive(Parser, Debug)]
#[command(
    name = "vg-catalog",
    version,
    disable_help_subcommand = true,
    about = "Name sets of projects to search as one (catalogs), and the default one",
    after_help = "Examples:\n  vg-catalog add team-api ~/src/api ~/src/billing   make (or extend) a catalog\n  vg-query --catalog team-api \"where are invoices retried\" | vg-format\n  vecgrep --catalog team-api \"where are invoices retried\"\n  vg-catalog list                                 the catalogs, their projects\n  vg-catalog use team-api                         search it by default\n  vg-catalog use --clear                          stop\n  vg-catalog remove team-api                      forget it and its index"
)]
pub struct CatalogCli {
    #[command(subcommand)]
    pub command: CatalogCommand,
}

/// What vg-catalog does.
#[derive(clap::Subcommand, Debug)]
pub enum CatalogCommand {
    /// Make catalog NAME (kebab-case: lowercase letters and digits joined by single '-', at most 64) if there is none, and add each directory as a project named after it.
    Add {
        #[arg(value_name = "NAME")]
        name: String,
        /// The projects' directories; each is named by the last component of the path as given (a link named `web` to a checkout makes project `web`), which must differ within the catalog.
        #[arg(value_name = "DIR", required = true, value_parser = any_path())]
        dirs: Vec<PathBuf>,
    },
    /// Take projects (by name) out of catalog NAME; their files leave its index at once.
    RemoveProject {
        #[arg(value_name = "NAME")]
        name: String,
        #[arg(value_name = "PROJECT", required = true)]
        projects: Vec<String>,
    },
    /// Delete catalog NAME: its definition, its links, its index and its settings (the catalog's .vecgrep, config.toml included). The projects are not touched.
    Remove {
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// List the catalogs and their projects (exit 1 when there are none).
    List {
        /// One catalog record per line.
        #[arg(long)]
        json: bool,
    },
    /// Show catalog NAME: where it is kept, its projects and whether each is where it was.
    Show {
        #[arg(value_name = "NAME")]
        name: String,
        /// A catalog record.
        #[arg(long)]
        json: bool,
    },
    /// Set the default context: the catalog searched when a command names none and no PATH is given, outside any project or inside one of the catalog's. Without arguments, print it.
    Use {
        /// The catalog to search by default.
        #[arg(value_name = "NAME", conflicts_with_all = ["clear", "catalog"])]
        name: Option<String>,
        /// The same, as a flag (`vecgrep use --catalog NAME`).
        #[arg(long, value_name = "NAME", conflicts_with = "clear")]
        catalog: Option<String>,
        /// The catalog's label to search by default (as --label), if any.
        #[arg(long, value_name = "LABEL", conflicts_with = "clear")]
        label: Option<String>,
        /// Forget the default context.
        #[arg(long)]
        clear: bool,
    },
}

/// Every binary's clap definition as it parses, for generating man pages
/// and completions.
pub fn commands() -> Vec<clap::Command> {
    [
        VecgrepCli::command(),
        RootCli::command(),
        IndexCli::command(),
        QueryCli::command(),
        FormatCli::command(),
        ServeCli::command(),
        McpCli::command(),
        PickCli::command(),
        AnswerCli::command(),
        AskCli::command(),
        LogCli::command(),
        CatalogCli::command(),
    ]
    .into_iter()
    .map(finished)
    .collect()
}

/// `cmd` as it parses and is documented: its long help from `bins/doc/`,
/// and each setting's note in its flags' help.
pub fn finished(cmd: clap::Command) -> clap::Command {
    // A flag given again overrides itself, as in rg: `alias vg='vecgrep -k 20'`
    // then `vg -k 5` asks for 5, not a usage error.
    let cmd = with_long_help(with_catalog_help(with_negations(with_setting_notes(cmd)))).args_override_self(true);
    // A server indexes without asking anyone: it refuses the flag (said
    // why), and its help, man page and completions do not offer it.
    match cmd.get_name() {
        "vg-serve" | "vg-mcp" => cmd.mut_arg("index_warn_threshold", |a| a.hide(true)),
        _ => cmd,
    }
}

/// The id of the flag that sets switch setting `key` false (`--no-quiet`).
pub fn negation_id(key: &str) -> String {
    format!("no_{key}")
}

/// Argument ids, with each group id replaced by its members, and each
/// switch setting followed by its `--no-` twin (`with_negations`).
pub fn expand_groups(cmd: &clap::Command, ids: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for id in ids {
        match cmd.get_groups().find(|g| g.get_id().as_str() == *id) {
            Some(group) => out.extend(group.get_args().map(|a| a.as_str().to_string())),
            None => out.push(id.to_string()),
        }
    }
    let twins: Vec<String> = out
        .iter()
        .map(|id| negation_id(id))
        .filter(|twin| cmd.get_arguments().any(|a| a.get_id().as_str() == twin))
        .collect();
    out.extend(twins);
    out
}

/// An argument as a user writes it: `--long`, else `-s`, else its id.
pub fn flag_name(arg: &clap::Arg) -> String {
    match (arg.get_long(), arg.get_short()) {
        (Some(long), _) => format!("--{long}"),
        (None, Some(short)) => format!("-{short}"),
        (None, None) => arg.get_id().to_string(),
    }
}

/// What shapes `--plan` (vg-ask's, and what vecgrep gives it): a plan
/// searches nothing, so only what chooses the root, the threshold and the
/// planner. Any other flag given beside it is refused.
pub const PLAN_FLAGS: &[&str] = &[
    "catalog",
    "skip_outside_root",
    "quiet",
    "threshold",
    "mode",
    "TrustArgs",
    "AskArgs",
    "llm_url",
    "llm_model",
    "privacy_mode",
    "context_hits",
    "json",
];

/// Each switch setting's flag with its `--no-` twin, as ripgrep's: the
/// last of the two given wins, and the twin sets the setting false for the
/// run, over a config file's `true` (which nothing on the command line
/// could undo).
fn with_negations(cmd: clap::Command) -> clap::Command {
    let switches: Vec<(String, String, Option<String>)> = cmd
        .get_arguments()
        .filter(|a| vecgrep::project::setting(a.get_id().as_str()).is_some_and(|s| s.switch))
        .filter_map(|a| {
            let heading = a.get_help_heading().map(str::to_string);
            Some((a.get_id().to_string(), a.get_long()?.to_string(), heading))
        })
        .collect();
    switches.into_iter().fold(cmd, |cmd, (id, long, heading)| {
        let twin = clap::Arg::new(negation_id(&id))
            .long(format!("no-{long}"))
            .action(clap::ArgAction::SetTrue)
            .help(format!("Undo --{long} (and a config file's {id} = true) for this run"))
            .overrides_with(id.clone());
        let twin = match heading {
            Some(heading) => twin.help_heading(heading),
            None => twin,
        };
        cmd.arg(twin).mut_arg(&id, |a| a.overrides_with(negation_id(&id)))
    })
}

/// `--catalog` said as what the tool does with it: the shared text says
/// what a search does, which vg-root and vg-index do not.
fn with_catalog_help(cmd: clap::Command) -> clap::Command {
    const DEFAULT_CONTEXT: &str = "Without it, the default context (vg-catalog use) is taken when no PATH is given, \
                                   outside any project or inside one of its projects.";
    let what = match cmd.get_name() {
        "vg-root" => "Print catalog NAME's directory, where its index is kept, as the root instead of the project here (see vg-catalog).",
        "vg-index" => "Index catalog NAME's projects, as one index, instead of the project here (see vg-catalog). PATHS then narrow it to parts of its projects.",
        _ => return cmd,
    };
    cmd.mut_arg("catalog", |a| a.help(format!("{what} {DEFAULT_CONTEXT}")))
}

/// The long help of each tool, kept as text in `bins/doc/` (wrapped for
/// reading there; `long_help_text` joins each paragraph's lines again).
fn long_help_source(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "vecgrep" => include_str!("../doc/vecgrep.txt"),
        "vg-root" => include_str!("../doc/vg-root.txt"),
        "vg-index" => include_str!("../doc/vg-index.txt"),
        "vg-query" => include_str!("../doc/vg-query.txt"),
        "vg-format" => include_str!("../doc/vg-format.txt"),
        "vg-serve" => include_str!("../doc/vg-serve.txt"),
        "vg-mcp" => include_str!("../doc/vg-mcp.txt"),
        "vg-pick" => include_str!("../doc/vg-pick.txt"),
        "vg-answer" => include_str!("../doc/vg-answer.txt"),
        "vg-ask" => include_str!("../doc/vg-ask.txt"),
        "vg-log" => include_str!("../doc/vg-log.txt"),
        "vg-catalog" => include_str!("../doc/vg-catalog.txt"),
        _ => return None,
    })
}

/// The numbers the long help quotes, from where they are defined:
/// `%name%` in `bins/doc/` is replaced by the value.
fn help_numbers() -> Vec<(&'static str, String)> {
    let limits = vecgrep::serve::Limits::default();
    let rate_limit = vecgrep::project::setting("rate_limit").and_then(|s| s.default).unwrap_or("?");
    vec![
        ("max_k", vecgrep::search::MAX_K.to_string()),
        ("request_line_kib", (limits.request_line / 1024).to_string()),
        ("header_kib", (limits.header_bytes / 1024).to_string()),
        ("header_lines", limits.headers.to_string()),
        ("head_deadline_s", limits.head_deadline.as_secs().to_string()),
        ("per_client", limits.connections_per_client.to_string()),
        ("connections", limits.connections.to_string()),
        ("rate_limit", rate_limit.to_string()),
    ]
}

/// A tool's long help: paragraphs (blank-line separated) joined into one
/// line each, but for those with indented lines (lists, examples), which
/// keep their lines; then the numbers filled in.
pub(crate) fn long_help_text(source: &str) -> String {
    let paragraphs: Vec<String> = source
        .trim_end()
        .split("\n\n")
        .map(|p| {
            if p.lines().any(|l| l.starts_with("  ")) {
                p.to_string()
            } else {
                p.lines().collect::<Vec<_>>().join(" ")
            }
        })
        .collect();
    let mut text = paragraphs.join("\n\n");
    for (name, value) in help_numbers() {
        text = text.replace(&format!("%{name}%"), &value);
    }
    text
}

fn with_long_help(cmd: clap::Command) -> clap::Command {
    match long_help_source(cmd.get_name()) {
        Some(source) => cmd.long_about(long_help_text(source)),
        None => cmd,
    }
}

/// `cmd` with each flag that gives a setting (its id is the setting's key)
/// ending its help in the setting's note, `[config: top_k; default: 10]`,
/// from the one table of settings (`vecgrep::project::SETTINGS`).
pub fn with_setting_notes(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| match vecgrep::project::setting(arg.get_id().as_str()) {
        Some(setting) => {
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            arg.help(format!("{help} {}", setting.help_note()))
        }
        None => arg,
    })
}

impl WalkArgs {
    /// Whether a flag changes what the walk lets in beyond filtering it
    /// (hidden files, ignore files, links): options a revision's walk, over
    /// files written from git, does not take.
    pub fn changes_the_walk(&self) -> bool {
        self.hidden || self.no_ignore || self.follow || !self.ignore_file.is_empty()
    }

    pub fn to_options(&self, config: &vecgrep::project::ResolvedConfig) -> vecgrep::project::WalkOptions {
        vecgrep::project::WalkOptions {
            types: self.types.clone(),
            types_not: self.types_not.clone(),
            globs: self.globs.clone(),
            max_depth: self.max_depth,
            follow: self.follow,
            hidden: self.hidden,
            no_ignore: self.no_ignore,
            ignore_files: self.ignore_file.clone(),
            max_filesize: config.max_filesize,
            // Below what the config files set: a filter of this run's. At
            // or above it, the run walks every file the project's runs do.
            max_filesize_given: self.max_filesize.is_some() && config.max_filesize < config.configured_max_filesize,
            include_generated: config.include_generated,
        }
    }
}

#[cfg(test)]
mod long_help_tests {
    use super::*;

    #[test]
    fn every_tool_has_long_help_with_every_number_filled_in() {
        for cmd in commands() {
            let help = cmd.get_long_about().map(|h| h.to_string()).unwrap_or_default();
            assert!(help.len() > 100, "{} has no long help", cmd.get_name());
            // A %name% left over is a number the text asks for and help_numbers lacks.
            let left = help
                .split('%')
                .skip(1)
                .step_by(2)
                .find(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
            assert_eq!(left, None, "{}: unfilled placeholder", cmd.get_name());
        }
        let serve = commands().into_iter().find(|c| c.get_name() == "vg-serve").unwrap();
        let help = serve.get_long_about().unwrap().to_string();
        for quoted in [format!("from 1 to {} (400 otherwise)", vecgrep::search::MAX_K), "default 120;".to_string()] {
            assert!(help.contains(&quoted), "vg-serve's help lacks {quoted:?}");
        }
    }

    #[test]
    fn paragraphs_are_joined_but_lists_keep_their_lines() {
        let text = long_help_text("One\nparagraph.\n\nA list:\n  a   first\n  b   second\n\nk is at most %max_k%.\n");
        assert_eq!(
            text,
            format!("One paragraph.\n\nA list:\n  a   first\n  b   second\n\nk is at most {}.", vecgrep::search::MAX_K)
        );
    }
}

/// A value the flag takes, for tests that pass every flag (none for a switch).
#[cfg(test)]
pub(crate) fn sample(arg: &clap::Arg) -> Option<String> {
    if matches!(arg.get_action(), clap::ArgAction::SetTrue) {
        return None;
    }
    if let Some(v) = arg.get_possible_values().last() {
        return Some(v.get_name().to_string());
    }
    if arg.get_long() == Some("threshold") {
        return Some("-0.25".to_string());
    }
    if arg.get_long() == Some("context-hits") {
        return Some("7".to_string());
    }
    if arg.get_long() == Some("max-filesize") {
        return Some("512K".to_string());
    }
    if arg.get_long() == Some("store") {
        return Some("postgres:///vecgrep?host=/run/postgresql".to_string());
    }
    let name = arg.get_value_names().and_then(|n| n.first()).map(|n| n.as_str().to_string()).unwrap_or_default();
    Some(
        match name.as_str() {
            "NUM" => "300",
            "ADDR" => "127.0.0.2",
            "PORT" => "8080",
            "URL" => "http://gpu:8080/v1/embeddings",
            "GLOB" => "!*.min.js",
            "TYPE" => "rust",
            "CMD" => "vi +{line} {file}",
            "WHEN" => "2w",
            "SIZE" => "-1M",
            "NAME" => "a-model",
            _ => "sample",
        }
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_valid() {
        for c in commands() {
            c.debug_assert();
        }
    }

    /// clap wraps help to the terminal: an example longer than a terminal
    /// of 80 columns broke mid-command, its first line pasted alone.
    #[test]
    fn every_example_fits_a_terminal_of_80_columns() {
        for c in commands() {
            let examples = c.get_after_help().map(|h| h.to_string()).unwrap_or_default();
            for line in examples.lines() {
                assert!(line.chars().count() <= 80, "{}: {} columns: {line}", c.get_name(), line.chars().count());
            }
        }
    }

    #[test]
    fn a_number_refused_is_said_in_the_same_words_for_every_flag() {
        assert_eq!(parse_top_k("99999999999999999999").unwrap_err(), "'99999999999999999999' is too large");
        assert_eq!(parse_max_count("1e3").unwrap_err(), "'1e3' is not a whole number of 1 or more");
        assert_eq!(parse_max_count("-1").unwrap_err(), "'-1' is not a whole number of 1 or more");
        assert_eq!(parse_max_count("0").unwrap_err(), "'0' is not a whole number of 1 or more");
        assert_eq!(parse_count("abc").unwrap_err(), "'abc' is not a whole number");
        assert_eq!(parse_port("70000").unwrap_err(), "'70000' is not a whole number from 0 to 65535");
        assert_eq!(whole_in::<u16>("0", 1, Some(256)).unwrap_err(), "'0' is not a whole number from 1 to 256");
        assert_eq!(whole_in::<u32>("4294967296", 0, None).unwrap_err(), "'4294967296' is too large");
        assert_eq!((parse_port("8080"), parse_count_u64("0")), (Ok(8080), Ok(0)));
        assert_eq!(parse_chunk_size("99999999999999999999").unwrap_err().split(' ').nth(2), Some("too"));
    }

    /// `-k -1` was taken for a flag, with clap's tip to write `-- -1`,
    /// which then left `-k` without a value.
    #[test]
    fn a_negative_number_reaches_the_flags_own_check() {
        for (args, said) in [
            (&["vecgrep", "-k", "-1", "q"][..], "'-1' is not a whole number"),
            (&["vecgrep", "-C", "-2", "q"], "'-2' is not a whole number"),
            (&["vecgrep", "--serve", "-p", "-1"], "'-1' is not a whole number from 0 to 65535"),
        ] {
            let err = crate::app::command::<VecgrepCli>().try_get_matches_from(args).unwrap_err();
            assert!(err.to_string().contains(said), "{args:?}: {err}");
        }
    }
}
