//! The tools vg-mcp offers (`search`, `ask`, `status`, `index`) and what it says
//! about itself at the handshake. Each tool's work is synchronous (SQLite,
//! the model) and runs on tokio's blocking threads, so that the protocol
//! keeps answering (pings, cancellations) meanwhile.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, Json, RoleServer, ServerHandler};

use super::args::{AskArgs, IndexProgress, McpHit, SearchArgs, SearchOutput, StatusArgs};
use super::owed::Unanswered;
use super::run::{run_and_wait, IndexArgs, IndexOutput};
use super::turns::{Turns, ASKS_AT_WORK, CALLS_AT_WORK};
use crate::ask::{AskOptions, AskResponse, LiveAsk};
use crate::live::{lock, LiveStatus, Searched, Searcher, StoreSlot};

/// How long after the start a search waits for the first index run to end
/// before answering from what there is: a small project is then searched
/// whole, and a large one still answers within the 2 s an agent's first
/// call should take.
const FIRST_RUN_GRACE: Duration = Duration::from_millis(1500);

/// What the tools share: the searcher over the live index, and idle
/// connections to the index for the blocking threads to borrow.
pub(super) struct Tools {
    searcher: Searcher,
    stores: Mutex<Vec<StoreSlot>>,
    started: Instant,
    /// The requests still owed an answer, and whether the client has gone.
    unanswered: Arc<Unanswered>,
    /// `search` calls take turns, and begin once the answers the client
    /// has not read leave room (`Unanswered::output_room`).
    turns: Turns,
    /// `ask` calls take turns of their own: each may wait out a chat model
    /// (`llm_timeout`, twice with the planner), and eight such, cancelled
    /// or not, left every search waiting behind them.
    ask_turns: Turns,
}

impl Tools {
    pub(super) fn new(searcher: Searcher, unanswered: Arc<Unanswered>) -> Tools {
        let (turns, ask_turns) = (Turns::new(CALLS_AT_WORK), Turns::new(ASKS_AT_WORK));
        Tools { searcher, stores: Mutex::new(Vec::new()), started: Instant::now(), unanswered, turns, ask_turns }
    }

    pub(super) fn searcher(&self) -> &Searcher {
        &self.searcher
    }

    /// Run `f` with a connection to the index, kept for the next call.
    fn with_store<T>(&self, f: impl FnOnce(&mut StoreSlot) -> T) -> T {
        let mut slot = lock(&self.stores).pop().unwrap_or_default();
        let out = f(&mut slot);
        lock(&self.stores).push(slot);
        out
    }

    /// Wait a little for the first index run, so that a small project is
    /// searched whole.
    fn first_run_grace(&self) {
        let live = self.searcher.live();
        while !live.progress().ran && self.started.elapsed() < FIRST_RUN_GRACE {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn search(&self, args: &SearchArgs) -> Result<SearchOutput, String> {
        let live = self.searcher.live();
        let plan = args.plan(live, &live.target.config)?;
        self.first_run_grace();
        let (searched, status, none_served) = self.with_store(|store| {
            let searched =
                self.searcher.search_noted(store, &plan.request(&args.query, self.searcher.expand(&args.query)));
            let found_none = searched.as_ref().is_ok_and(|s| s.hits.is_empty());
            let none_served = found_none && store.as_deref().is_some_and(|s| live.holds_no_served_file(s));
            (searched, live.status(store), none_served)
        });
        let Searched { mut hits, note: model_note } =
            searched.map_err(|e| format!("search failed: {}", crate::project::shown::error_line(&e)))?;
        crate::search::explain(&args.query, &mut hits);
        let index = IndexProgress::of(&status);
        let index_note = index_note(live, &index, status.files == 0 || none_served, true);
        let note = match (model_note, index_note) {
            (Some(model), Some(index)) => Some(format!("{model}. {index}")),
            (model, index) => model.or(index),
        };
        Ok(SearchOutput { results: hits.into_iter().map(McpHit::from).collect(), root: status.root, index, note })
    }

    fn ask(&self, args: &AskArgs) -> Result<AskResponse, String> {
        let live = self.searcher.live();
        crate::search::check_query(&args.query).map_err(|e| e.to_string())?;
        let scope = crate::live::confine(live, &args.paths)?;
        self.first_run_grace();
        let options = AskOptions::for_request(args.privacy_mode.map(Into::into), &live.target.config);
        let (asked, status, none_served) = self.with_store(|store| {
            let status = live.status(store);
            let mut searcher = LiveAsk { searcher: &self.searcher, store, scope };
            let asked = crate::ask::ask(&args.query, &live.target.root, &live.target.config, &options, &mut searcher);
            // As a search: the index's files read only for an answer without hits.
            let found_none = asked.as_ref().is_ok_and(|r| r.hits.is_empty());
            let none_served = found_none && store.as_deref().is_some_and(|s| live.holds_no_served_file(s));
            (asked, status, none_served)
        });
        // A question no search can run is the caller's to fix, said as the
        // search tool says a bad query, not as the server's failure.
        let mut response = asked.map_err(|e| match e.downcast_ref::<crate::ask::Unsearchable>() {
            Some(why) => why.to_string(),
            None => format!("ask failed: {}", crate::project::shown::error_line(&e)),
        })?;
        // As a search says it: an answer from a partial index, or none,
        // read as "no such code" to an agent.
        let holds_none = status.files == 0 || none_served;
        response.warnings.extend(index_note(live, &IndexProgress::of(&status), holds_none, false));
        Ok(response)
    }

    fn status(&self) -> LiveStatus {
        self.with_store(|store| self.searcher.status(store))
    }
}

/// What a search's or an ask's results are to be read with, where the
/// index is not the whole of the served paths: this server's run is
/// building it (another process's run is the search's own note,
/// `search_noted`), its last run failed (said by `search_noted` too when
/// `failure_said`: a search's note said it twice), or it holds no file of
/// the served paths (`holds_none`).
fn index_note(
    live: &crate::live::LiveIndex,
    index: &IndexProgress,
    holds_none: bool,
    failure_said: bool,
) -> Option<String> {
    let progress = live.progress();
    let own_run = progress.indexing || !progress.ran;
    if let Some(note) = own_run.then(|| index.note(progress.ran)).flatten() {
        return Some(note);
    }
    if let Some(error) = progress.error {
        return (!failure_said).then(|| crate::live::failed_run_note(&error));
    }
    // Not by the whole index's count: files of other paths (an earlier
    // run's) kept the note from a server of paths that admit none.
    holds_none.then(|| "the index holds no files of the served paths: nothing under them was admitted".into())
}

/// The MCP server: the tools behind rmcp's router.
#[derive(Clone)]
pub(super) struct VecgrepServer {
    tools: Arc<Tools>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl VecgrepServer {
    pub(super) fn new(tools: Arc<Tools>) -> VecgrepServer {
        VecgrepServer { tools, tool_router: Self::tool_router() }
    }

    /// Find code by what it does, in plain words, over this project:
    /// "where do we retry failed uploads?", "parse the config file",
    /// "html escaping". Returns the best matching chunks of files (path,
    /// lines, score, text), best first. Use it before grep when you do not
    /// know the identifiers. It answers while the index is still being
    /// built, from what is indexed so far, and says so in `note`.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn search(
        &self,
        params: Parameters<SearchArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<SearchOutput>, String> {
        let tools = Arc::clone(&self.tools);
        let room = self.tools.unanswered.output_room();
        self.tools.turns.run(ctx.ct.cancelled(), room, move || tools.search(&params.0)).await?.map(Json)
    }

    /// Ask a question in plain words, filters and all ("rust files changed
    /// this week that retry uploads"): returns the plan made of it (intent,
    /// file filters, what was searched for), the hits with why each ranked,
    /// a chat model's answer with citations when the hits look thin or the
    /// question asks to explain (if one is set and the privacy mode allows
    /// it), warnings, and what the run did.
    #[tool(annotations(read_only_hint = true, open_world_hint = true))]
    async fn ask(
        &self,
        params: Parameters<AskArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<AskResponse>, String> {
        let tools = Arc::clone(&self.tools);
        let room = self.tools.unanswered.output_room();
        self.tools.ask_turns.run(ctx.ct.cancelled(), room, move || tools.ask(&params.0)).await?.map(Json)
    }

    /// How the index stands: whether a run is indexing (and how far it
    /// is), the files and chunks it holds, the model, the project root and
    /// the paths this server searches.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn status(
        &self,
        _args: Parameters<StatusArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<LiveStatus>, String> {
        // In the searches' turns: each holds a connection to the index,
        // and a burst of 3,000 held a thousand files open for good.
        let tools = Arc::clone(&self.tools);
        let room = self.tools.unanswered.output_room();
        self.tools.turns.run(ctx.ct.cancelled(), room, move || tools.status()).await.map(Json)
    }

    /// Bring the index up to date now, rather than at the next refresh (a
    /// few seconds): files changed, added or deleted since are re-indexed.
    /// Waits for the run to end (up to `wait_seconds`), sending progress
    /// notifications if the request asks for them.
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn index(
        &self,
        params: Parameters<IndexArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<IndexOutput>, String> {
        let client_gone = &self.tools.unanswered.client_gone;
        run_and_wait(Arc::clone(self.tools.searcher().live()), &params.0, &ctx, client_gone).await.map(Json)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for VecgrepServer {
    fn get_info(&self) -> ServerConfig {
        let target = &self.tools.searcher().live().target;
        let scope: Vec<String> =
            target.scope_names().into_iter().map(|s| if s.is_empty() { ".".into() } else { s }).collect();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("vecgrep", env!("CARGO_PKG_VERSION")).with_title("vecgrep: semantic code search"),
            )
            .with_instructions(format!(
                "Semantic code search over the project at {} (paths: {}). Call `search` with a plain-English \
                 description of the code you are looking for; results are chunks of files with line numbers, \
                 best first, each with why it ranked. Call `ask` with a whole question, filters and all \
                 (\"python files changed this week that retry uploads\"), for the plan made of it, the hits and \
                 an answer when one is called for. Paths in arguments and results are relative to that root.",
                target.root.path.display(),
                scope.join(", ")
            ))
    }
}
