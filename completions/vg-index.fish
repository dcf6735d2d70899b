complete -c vg-index -l rev -d 'Index the whole tree of a git revision (a branch, tag or commit, as git names them) straight from the repository, leaving the working tree alone; chunks any index of the project already embedded are not embedded again. Search it with vg-query --rev' -r
complete -c vg-index -l forget -d 'Drop the index of a revision indexed with --rev (by any name git gives it, or its sha) and the vectors only it held' -r
complete -c vg-index -l chunk-size -d 'Characters per chunk: whole functions, classes and sections are packed up to it, bigger ones cut at their inner units; never past the model\'s 256-token window [config: chunk_size; default: 500]' -r
complete -c vg-index -l chunk-overlap -d 'Characters of whole lines after a chunk that it carries too, the start of the next unit [config: chunk_overlap; default: 100]' -r
complete -c vg-index -l index-warn-threshold -d 'Ask before indexing more than NUM new or changed files, when on a terminal; 0 never asks [config: index_warn_threshold; default: 1000]' -r
complete -c vg-index -l embedder-model -d 'Embedding model [config: embedder_model; default: all-MiniLM-L6-v2]' -r
complete -c vg-index -l embedder-source -d 'Where embeddings are computed: local, or remote (an embedding server at --embedder-url) [config: embedder_source; default: local]' -r -f -a "local\t''
remote\t''"
complete -c vg-index -l embedder-url -d 'The embedding server\'s OpenAI-compatible endpoint, e.g. http://gpu:8080/v1/embeddings; its API key is read from VECGREP_EMBEDDER_API_KEY [config: embedder_url]' -r
complete -c vg-index -l store -d 'Keep the index in a shared Postgres database with pgvector, e.g. postgres://db.internal/vecgrep or postgres:///vecgrep?host=/run/postgresql; missing parts come from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE. Every machine given the same URL and --store-project shares one index. The URL is never printed [config: store_url]' -r
complete -c vg-index -l store-project -d 'The name the project\'s index is kept under in the shared database; every checkout given the same name shares it (the first to write it is recorded as its creator; others need --store-adopt) [config: store_project; default: the root directory\'s name and a hash of its path]' -r
complete -c vg-index -s t -l type -d 'Only index and search files of TYPE (e.g. rust, py, js); repeatable. See `rg --type-list`' -r
complete -c vg-index -s T -l type-not -d 'Leave out files of TYPE; repeatable' -r
complete -c vg-index -s g -l glob -d 'Include files matching GLOB, or exclude them with a leading \'!\'; repeatable' -r
complete -c vg-index -l max-depth -d 'Descend at most NUM directories below each path' -r
complete -c vg-index -l ignore-file -d 'Also read ignore rules from PATH (gitignore syntax); repeatable' -r -F
complete -c vg-index -l max-filesize -d 'Skip files larger than NUM bytes [config: max_filesize; default: 1048576]' -r
complete -c vg-index -l stats -d 'Print statistics about the index instead of indexing'
complete -c vg-index -l verify -d 'Check the index for damage (SQLite\'s and the word index\'s integrity, orphaned chunks or words, malformed vectors) instead of indexing; exit 2 if any'
complete -c vg-index -l json -d 'With --stats or --verify: print a JSON record'
complete -c vg-index -l reindex -d 'Throw the index away and build it again'
complete -c vg-index -l clear-cache -d 'Delete the index (keeps .vecgrep/config.toml) and stop'
complete -c vg-index -l skip-outside-root -d 'Skip PATHS outside the project root instead of failing'
complete -c vg-index -s q -l quiet -d 'No progress or notes on stderr (errors are still printed) [config: quiet]'
complete -c vg-index -l full -d 'Embed every chunk with the model now (about 100 s for tokio on two cores) rather than giving new chunks static vectors alone (vecgrep\'s static code model, microseconds each), which searches rank meaning by until the model\'s vectors are there [config: embed_all]'
complete -c vg-index -l trust-project-config -d 'Let the project\'s own .vecgrep/config.toml choose commands to run (open_cmd) and where code is sent and which index it goes to (embedder_source, embedder_url, llm_url, store_url, store_project, store_adopt) [config: trust_project_config, global config only]'
complete -c vg-index -l store-adopt -d 'Write to (and clear) a shared project\'s index that another checkout created, and be recorded as one of its writers: without it, a checkout that names another\'s project (a cloned repository\'s config, a typo) cannot change it [config: store_adopt]'
complete -c vg-index -s L -l follow -d 'Follow symbolic links, but only to targets inside the paths walked (the root by default; for a server, the paths it serves): a link out of them is skipped, a linked directory never walked'
complete -c vg-index -l hidden -d 'Include hidden files and directories'
complete -c vg-index -l no-ignore -d 'Do not respect .gitignore, .ignore or .vecgrepignore files'
complete -c vg-index -l include-generated -d 'Also index lock files (Cargo.lock, package-lock.json, ...), minified bundles (*.min.js, very long lines) and generated code (*.pb.go, "DO NOT EDIT"/"@generated" headers), which are skipped by default [config: include_generated]'
complete -c vg-index -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vg-index -s V -l version -d 'Print version'
