complete -c vg-ask -l privacy-mode -d 'What may leave the machine: local_only (nothing: a chat model or embedding server not on loopback is refused with a warning, and the search still answers), cloud_reasoning_ok (the question and the top results may go to the chat model), cloud_embedding_ok (the embedding server too) [config: privacy_mode; default: local_only]' -r -f -a "local_only\t''
cloud_reasoning_ok\t''
cloud_embedding_ok\t''"
complete -c vg-ask -l planner -d 'Who turns the question into a plan: rules (no model, no network) or llm (the chat model at llm_url, its plan checked against the schema; a plan that fails falls back to the rules with a warning) [config: planner; default: rules]' -r -f -a "rules\t''
llm\t''"
complete -c vg-ask -l llm-url -d 'The chat model\'s OpenAI-compatible endpoint: its base URL (http://127.0.0.1:8080/v1) or its chat completions URL; its API key is read from VECGREP_LLM_API_KEY [config: llm_url]' -r
complete -c vg-ask -l llm-model -d 'The chat model to ask [config: llm_model; default: the first model the endpoint lists]' -r
complete -c vg-ask -l context-hits -d 'Results sent to the model, best first (1 to 20)' -r
complete -c vg-ask -s k -l top-k -d 'Return at most NUM results [config: top_k; default: 10]' -r
complete -c vg-ask -l threshold -d 'Drop results scoring below NUM (cosine similarity, -1 to 1) [config: threshold; default: 0.3]' -r
complete -c vg-ask -l mode -d 'Rank by meaning (semantic), by words (lexical, BM25; no model is loaded) or both fused (hybrid). In semantic and hybrid mode the score is the cosine similarity; in lexical mode it is BM25 mapped onto 0..1 [config: mode; default: hybrid]' -r -f -a "semantic\t''
lexical\t''
hybrid\t''"
complete -c vg-ask -l chunk-size -d 'Characters per chunk: whole functions, classes and sections are packed up to it, bigger ones cut at their inner units; never past the model\'s 256-token window [config: chunk_size; default: 500]' -r
complete -c vg-ask -l chunk-overlap -d 'Characters of whole lines after a chunk that it carries too, the start of the next unit [config: chunk_overlap; default: 100]' -r
complete -c vg-ask -l index-warn-threshold -d 'Ask before indexing more than NUM new or changed files, when on a terminal; 0 never asks [config: index_warn_threshold; default: 1000]' -r
complete -c vg-ask -l embedder-model -d 'Embedding model [config: embedder_model; default: all-MiniLM-L6-v2]' -r
complete -c vg-ask -l embedder-source -d 'Where embeddings are computed: local, or remote (an embedding server at --embedder-url) [config: embedder_source; default: local]' -r -f -a "local\t''
remote\t''"
complete -c vg-ask -l embedder-url -d 'The embedding server\'s OpenAI-compatible endpoint, e.g. http://gpu:8080/v1/embeddings; its API key is read from VECGREP_EMBEDDER_API_KEY [config: embedder_url]' -r
complete -c vg-ask -l store -d 'Keep the index in a shared Postgres database with pgvector, e.g. postgres://db.internal/vecgrep or postgres:///vecgrep?host=/run/postgresql; missing parts come from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE. Every machine given the same URL and --store-project shares one index. The URL is never printed [config: store_url]' -r
complete -c vg-ask -l store-project -d 'The name the project\'s index is kept under in the shared database; every checkout given the same name shares it (the first to write it is recorded as its creator; others need --store-adopt) [config: store_project; default: the root directory\'s name and a hash of its path]' -r
complete -c vg-ask -s t -l type -d 'Only index and search files of TYPE (e.g. rust, py, js); repeatable. See `rg --type-list`' -r
complete -c vg-ask -s T -l type-not -d 'Leave out files of TYPE; repeatable' -r
complete -c vg-ask -s g -l glob -d 'Include files matching GLOB, or exclude them with a leading \'!\'; repeatable' -r
complete -c vg-ask -l max-depth -d 'Descend at most NUM directories below each path' -r
complete -c vg-ask -l ignore-file -d 'Also read ignore rules from PATH (gitignore syntax); repeatable' -r -F
complete -c vg-ask -l max-filesize -d 'Skip files larger than NUM bytes [config: max_filesize; default: 1048576]' -r
complete -c vg-ask -l plan -d 'Print the plan made of QUESTION and stop: nothing is indexed or searched'
complete -c vg-ask -l json -d 'Print the JSON record even on a terminal'
complete -c vg-ask -l no-index -d 'Search the existing index as it is; do not update it first'
complete -c vg-ask -l skip-outside-root -d 'Skip PATHS outside the root instead of failing'
complete -c vg-ask -s q -l quiet -d 'No progress or notes on stderr (errors are still printed) [config: quiet]'
complete -c vg-ask -l force-answer -d 'Ask even when the results look like they answer the query'
complete -c vg-ask -l learn -d 'Write the concepts the answer bridges (a query word the code lacks, and the identifiers the answer names for it that the results hold) to .vecgrep/kg/learned.md, for a person to review'
complete -c vg-ask -l full -d 'Embed every chunk with the model now (about 100 s for tokio on two cores) rather than giving new chunks static vectors alone (vecgrep\'s static code model, microseconds each), which searches rank meaning by until the model\'s vectors are there [config: embed_all]'
complete -c vg-ask -l trust-project-config -d 'Let the project\'s own .vecgrep/config.toml choose commands to run (open_cmd) and where code is sent and which index it goes to (embedder_source, embedder_url, llm_url, store_url, store_project, store_adopt) [config: trust_project_config, global config only]'
complete -c vg-ask -l store-adopt -d 'Write to (and clear) a shared project\'s index that another checkout created, and be recorded as one of its writers: without it, a checkout that names another\'s project (a cloned repository\'s config, a typo) cannot change it [config: store_adopt]'
complete -c vg-ask -s L -l follow -d 'Follow symbolic links, but only to targets inside the paths walked (the root by default; for a server, the paths it serves): a link out of them is skipped, a linked directory never walked'
complete -c vg-ask -l hidden -d 'Include hidden files and directories'
complete -c vg-ask -l no-ignore -d 'Do not respect .gitignore, .ignore or .vecgrepignore files'
complete -c vg-ask -l include-generated -d 'Also index lock files (Cargo.lock, package-lock.json, ...), minified bundles (*.min.js, very long lines) and generated code (*.pb.go, "DO NOT EDIT"/"@generated" headers), which are skipped by default [config: include_generated]'
complete -c vg-ask -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vg-ask -s V -l version -d 'Print version'
