complete -c vecgrep -l rev -d 'Search a git revision (a branch, tag or commit) instead of the working tree, indexing it from the repository first (with --index-only, just index it); see vg-index --rev' -r
complete -c vecgrep -l query -d 'With -i: start with QUERY; every positional argument is then a PATH' -r
complete -c vecgrep -l open-cmd -d 'With -i: command that opens the picked result ({file}, {line}, {end_line}) [config: open_cmd; default: $VISUAL or $EDITOR at the line]' -r
complete -c vecgrep -l bind -d 'With --serve: address to listen on [default: 127.0.0.1]' -r
complete -c vecgrep -l port -d 'With --serve: port to listen on; 0 picks a free one [default: 0]' -r
complete -c vecgrep -l token -d 'With --serve: require `Authorization: Bearer TOKEN` [env: VECGREP_TOKEN]' -r
complete -c vecgrep -l rate-limit -d 'With --serve: answer a client address 429 past NUM requests in a minute; 0 is no limit [config: rate_limit; default: 120]' -r
complete -c vecgrep -s k -l top-k -d 'Return at most NUM results [config: top_k; default: 10]' -r
complete -c vecgrep -l threshold -d 'Drop results scoring below NUM (cosine similarity, -1 to 1) [config: threshold; default: 0.3]' -r
complete -c vecgrep -l mode -d 'Rank by meaning (semantic), by words (lexical, BM25; no model is loaded) or both fused (hybrid). In semantic and hybrid mode the score is the cosine similarity; in lexical mode it is BM25 mapped onto 0..1 [config: mode; default: hybrid]' -r -f -a "semantic\t''
lexical\t''
hybrid\t''"
complete -c vecgrep -s A -l after-context -d 'Show NUM lines after each shown line' -r
complete -c vecgrep -s B -l before-context -d 'Show NUM lines before each shown line' -r
complete -c vecgrep -s C -l context -d 'Show NUM lines before and after each shown line' -r
complete -c vecgrep -l lines -d 'Lines shown per result: its best-matching lines [default: 3 with headings, 1 without]' -r
complete -c vecgrep -l color -d 'When to use colors' -r -f -a "auto\t'Color when writing to a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c vecgrep -l llm-url -d 'The chat model\'s OpenAI-compatible endpoint: its base URL (http://127.0.0.1:8080/v1) or its chat completions URL; its API key is read from VECGREP_LLM_API_KEY [config: llm_url]' -r
complete -c vecgrep -l llm-model -d 'The chat model to ask [config: llm_model; default: the first model the endpoint lists]' -r
complete -c vecgrep -l context-hits -d 'Results sent to the model, best first (1 to 20)' -r
complete -c vecgrep -l privacy-mode -d 'What may leave the machine: local_only (nothing: a chat model or embedding server not on loopback is refused with a warning, and the search still answers), cloud_reasoning_ok (the question and the top results may go to the chat model), cloud_embedding_ok (the embedding server too) [config: privacy_mode; default: local_only]' -r -f -a "local_only\t''
cloud_reasoning_ok\t''
cloud_embedding_ok\t''"
complete -c vecgrep -l planner -d 'Who turns the question into a plan: rules (no model, no network) or llm (the chat model at llm_url, its plan checked against the schema; a plan that fails falls back to the rules with a warning) [config: planner; default: rules]' -r -f -a "rules\t''
llm\t''"
complete -c vecgrep -l since -d 'Only commits authored at or after DATE, in git\'s forms: 2024-05-01, "2 weeks ago", yesterday' -r
complete -c vecgrep -l until -d 'Only commits authored at or before DATE' -r
complete -c vecgrep -l author -d 'Only commits whose author\'s name or email contains TEXT (any case)' -r
complete -c vecgrep -l limit -d 'Index and search only the NUM newest commits of HEAD\'s history' -r
complete -c vecgrep -l chunk-size -d 'Characters per chunk: whole functions, classes and sections are packed up to it, bigger ones cut at their inner units; never past the model\'s 256-token window [config: chunk_size; default: 500]' -r
complete -c vecgrep -l chunk-overlap -d 'Characters of whole lines after a chunk that it carries too, the start of the next unit [config: chunk_overlap; default: 100]' -r
complete -c vecgrep -l index-warn-threshold -d 'Ask before indexing more than NUM new or changed files, when on a terminal; 0 never asks [config: index_warn_threshold; default: 1000]' -r
complete -c vecgrep -l embedder-model -d 'Embedding model [config: embedder_model; default: all-MiniLM-L6-v2]' -r
complete -c vecgrep -l embedder-source -d 'Where embeddings are computed: local, or remote (an embedding server at --embedder-url) [config: embedder_source; default: local]' -r -f -a "local\t''
remote\t''"
complete -c vecgrep -l embedder-url -d 'The embedding server\'s OpenAI-compatible endpoint, e.g. http://gpu:8080/v1/embeddings; its API key is read from VECGREP_EMBEDDER_API_KEY [config: embedder_url]' -r
complete -c vecgrep -l store -d 'Keep the index in a shared Postgres database with pgvector, e.g. postgres://db.internal/vecgrep or postgres:///vecgrep?host=/run/postgresql; missing parts come from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE. Every machine given the same URL and --store-project shares one index. The URL is never printed [config: store_url]' -r
complete -c vecgrep -l store-project -d 'The name the project\'s index is kept under in the shared database; every checkout given the same name shares it (the first to write it is recorded as its creator; others need --store-adopt) [config: store_project; default: the root directory\'s name and a hash of its path]' -r
complete -c vecgrep -s t -l type -d 'Only index and search files of TYPE (e.g. rust, py, js); repeatable. See `rg --type-list`' -r
complete -c vecgrep -s T -l type-not -d 'Leave out files of TYPE; repeatable' -r
complete -c vecgrep -s g -l glob -d 'Include files matching GLOB, or exclude them with a leading \'!\'; repeatable' -r
complete -c vecgrep -l max-depth -d 'Descend at most NUM directories below each path' -r
complete -c vecgrep -l ignore-file -d 'Also read ignore rules from PATH (gitignore syntax); repeatable' -r -F
complete -c vecgrep -l max-filesize -d 'Skip files larger than NUM bytes [config: max_filesize; default: 1048576]' -r
complete -c vecgrep -l changed-within -d 'Only files modified within WHEN: a span back from now (2w, 3d, 12h, 30min) or since a date in UTC (2026-01-31, \'2026-01-31 14:30\')' -r
complete -c vecgrep -l changed-before -d 'Only files modified before WHEN: a span back from now (2w, 3d) or a date in UTC (2026-01-31)' -r
complete -c vecgrep -s S -l size -d 'Only files of at least (+SIZE) or at most (-SIZE) bytes, e.g. +10k, -1M (k, m, g: powers of 1000; ki, mi, gi: of 1024); repeatable' -r
complete -c vecgrep -s E -l exclude -d 'Leave files matching GLOB out of the results (gitignore syntax, from the root: tests/, *_test.go, /vendor); repeatable. Unlike -g, they stay indexed' -r
complete -c vecgrep -l stats -d 'Print index statistics (files, chunks, holes, size) and stop; every argument is a PATH'
complete -c vecgrep -l show-root -d 'Print the project root and stop; every argument is a PATH'
complete -c vecgrep -l index-only -d 'Update the index for PATHS and stop; every argument is a PATH'
complete -c vecgrep -l reindex -d 'Rebuild the index from scratch first'
complete -c vecgrep -l clear-cache -d 'Delete the index (keeps .vecgrep/config.toml) and stop; every argument is a PATH'
complete -c vecgrep -l no-index -d 'Search the existing index as it is; do not update it first'
complete -c vecgrep -l no-scope -d 'Search the whole project, not just PATHS'
complete -c vecgrep -l skip-outside-root -d 'Skip PATHS outside the project root instead of failing'
complete -c vecgrep -s q -l quiet -d 'No progress or notes on stderr (errors are still printed) [config: quiet]'
complete -c vecgrep -l answer -d 'Ask a chat model (llm_url) to answer QUERY from the top results when they look insufficient, citing them (vg-answer; see Answer options)'
complete -c vecgrep -l plan -d 'Print the plan QUERY is made into (intent, file filters, what is searched for, whether an answer is wanted) and stop: nothing is indexed or searched (vg-ask --plan; see Ask options)'
complete -c vecgrep -l ask -d 'Ask QUERY as a question, filters and all ("rust files changed this week that retry uploads"): the plan made of it, the hits with why each ranked, and a chat model\'s answer when the hits look thin or the question asks to explain (vg-ask; see Ask options)'
complete -c vecgrep -l explain -d 'Say under each result why it ranked where it did: its place by meaning and by words, the words and names it matched, a concept it mentions, and what its file did to its place (vg-query --explain)'
complete -c vecgrep -l log -d 'Search the project\'s git history instead of its files: commits whose messages (or, with --with-diff, changes) answer QUERY; PATHS keep those that touched them (vg-log; see History options)'
complete -c vecgrep -s i -l interactive -d 'Pick results interactively, re-ranked as you type (vg-pick); a QUERY is optional'
complete -c vecgrep -l serve -d 'Serve searches over HTTP (vg-serve) instead of searching once; every argument is a PATH'
complete -c vecgrep -l mcp -d 'Serve coding agents over the Model Context Protocol on stdin/stdout (vg-mcp) instead of searching once; every argument is a PATH'
complete -c vecgrep -l full-index -d 'With --serve, --mcp or -i: index PATHS completely first [config: full_index]'
complete -c vecgrep -s l -l files-with-matches -l files -d 'Print each file with results once, best first'
complete -c vecgrep -s c -l count -d 'Print the number of results per file'
complete -c vecgrep -l json -d 'Print hit records as JSON lines (paths relative to the root)'
complete -c vecgrep -l heading -d 'Group results under a heading per file (default on a terminal)'
complete -c vecgrep -l no-heading -d 'Print `path:line:text` lines (default when piped)'
complete -c vecgrep -s n -l line-number -d 'Show each line\'s number (the default; accepted as ripgrep\'s -n is)'
complete -c vecgrep -s N -l no-line-number -d 'Leave out line numbers'
complete -c vecgrep -s H -l with-filename -d 'Show each line\'s path when piped, each file\'s heading on a terminal (the default; accepted as ripgrep\'s -H is)'
complete -c vecgrep -s I -l no-filename -d 'Leave out paths: `line:text` when piped, no file headings on a terminal'
complete -c vecgrep -l force-answer -d 'Ask even when the results look like they answer the query'
complete -c vecgrep -l learn -d 'Write the concepts the answer bridges (a query word the code lacks, and the identifiers the answer names for it that the results hold) to .vecgrep/kg/learned.md, for a person to review'
complete -c vecgrep -l with-diff -d 'Index the lines each commit changed and search them beside the messages'
complete -c vecgrep -l diffs-only -d 'Search only the lines commits changed, not their messages (indexes them as --with-diff does)'
complete -c vecgrep -l full -d 'Embed every chunk with the model now (about 100 s for tokio on two cores) rather than giving new chunks static vectors alone (vecgrep\'s static code model, microseconds each), which searches rank meaning by until the model\'s vectors are there [config: embed_all]'
complete -c vecgrep -l trust-project-config -d 'Let the project\'s own .vecgrep/config.toml choose commands to run (open_cmd) and where code is sent and which index it goes to (embedder_source, embedder_url, llm_url, store_url, store_project, store_adopt) [config: trust_project_config, global config only]'
complete -c vecgrep -l store-adopt -d 'Write to (and clear) a shared project\'s index that another checkout created, and be recorded as one of its writers: without it, a checkout that names another\'s project (a cloned repository\'s config, a typo) cannot change it [config: store_adopt]'
complete -c vecgrep -s L -l follow -d 'Follow symbolic links, but only to targets inside the paths walked (the root by default; for a server, the paths it serves): a link out of them is skipped, a linked directory never walked'
complete -c vecgrep -l hidden -d 'Include hidden files and directories'
complete -c vecgrep -l no-ignore -d 'Do not respect .gitignore, .ignore or .vecgrepignore files'
complete -c vecgrep -l include-generated -d 'Also index lock files (Cargo.lock, package-lock.json, ...), minified bundles (*.min.js, very long lines) and generated code (*.pb.go, "DO NOT EDIT"/"@generated" headers), which are skipped by default [config: include_generated]'
complete -c vecgrep -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vecgrep -s V -l version -d 'Print version'
