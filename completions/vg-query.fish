complete -c vg-query -l rev -d 'Search a git revision (a branch, tag or commit) instead of the working tree; it is indexed from the repository first if it is not yet (see vg-index --rev)' -r
complete -c vg-query -s k -l top-k -d 'Return at most NUM results [config: top_k; default: 10]' -r
complete -c vg-query -l threshold -d 'Drop results scoring below NUM (cosine similarity, -1 to 1) [config: threshold; default: 0.3]' -r
complete -c vg-query -l mode -d 'Rank by meaning (semantic), by words (lexical, BM25; no model is loaded) or both fused (hybrid). In semantic and hybrid mode the score is the cosine similarity; in lexical mode it is BM25 mapped onto 0..1 [config: mode; default: hybrid]' -r -f -a "semantic\t''
lexical\t''
hybrid\t''"
complete -c vg-query -l chunk-size -d 'Characters per chunk: whole functions, classes and sections are packed up to it, bigger ones cut at their inner units; never past the model\'s 256-token window [config: chunk_size; default: 500]' -r
complete -c vg-query -l chunk-overlap -d 'Characters of whole lines after a chunk that it carries too, the start of the next unit [config: chunk_overlap; default: 100]' -r
complete -c vg-query -l index-warn-threshold -d 'Ask before indexing more than NUM new or changed files, when on a terminal; 0 never asks [config: index_warn_threshold; default: 1000]' -r
complete -c vg-query -l embedder-model -d 'Embedding model [config: embedder_model; default: all-MiniLM-L6-v2]' -r
complete -c vg-query -l embedder-source -d 'Where embeddings are computed: local, or remote (an embedding server at --embedder-url) [config: embedder_source; default: local]' -r -f -a "local\t''
remote\t''"
complete -c vg-query -l embedder-url -d 'The embedding server\'s OpenAI-compatible endpoint, e.g. http://gpu:8080/v1/embeddings; its API key is read from VECGREP_EMBEDDER_API_KEY [config: embedder_url]' -r
complete -c vg-query -l store -d 'Keep the index in a shared Postgres database with pgvector, e.g. postgres://db.internal/vecgrep or postgres:///vecgrep?host=/run/postgresql; missing parts come from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE. Every machine given the same URL and --store-project shares one index. The URL is never printed [config: store_url]' -r
complete -c vg-query -l store-project -d 'The name the project\'s index is kept under in the shared database; every checkout given the same name shares it (the first to write it is recorded as its creator; others need --store-adopt) [config: store_project; default: the root directory\'s name and a hash of its path]' -r
complete -c vg-query -s t -l type -d 'Only index and search files of TYPE (e.g. rust, py, js); repeatable. See `rg --type-list`' -r
complete -c vg-query -s T -l type-not -d 'Leave out files of TYPE; repeatable' -r
complete -c vg-query -s g -l glob -d 'Include files matching GLOB, or exclude them with a leading \'!\'; repeatable' -r
complete -c vg-query -l max-depth -d 'Descend at most NUM directories below each path' -r
complete -c vg-query -l ignore-file -d 'Also read ignore rules from PATH (gitignore syntax); repeatable' -r -F
complete -c vg-query -l max-filesize -d 'Skip files larger than NUM bytes [config: max_filesize; default: 1048576]' -r
complete -c vg-query -l changed-within -d 'Only files modified within WHEN: a span back from now (2w, 3d, 12h, 30min) or since a date in UTC (2026-01-31, \'2026-01-31 14:30\')' -r
complete -c vg-query -l changed-before -d 'Only files modified before WHEN: a span back from now (2w, 3d) or a date in UTC (2026-01-31)' -r
complete -c vg-query -s S -l size -d 'Only files of at least (+SIZE) or at most (-SIZE) bytes, e.g. +10k, -1M (k, m, g: powers of 1000; ki, mi, gi: of 1024); repeatable' -r
complete -c vg-query -s E -l exclude -d 'Leave files matching GLOB out of the results (gitignore syntax, from the root: tests/, *_test.go, /vendor); repeatable. Unlike -g, they stay indexed' -r
complete -c vg-query -l no-index -d 'Search the existing index as it is; do not update it first'
complete -c vg-query -l no-scope -d 'Search the whole project, not just PATHS (PATHS are still indexed)'
complete -c vg-query -l reindex -d 'Rebuild the index from scratch before searching'
complete -c vg-query -l skip-outside-root -d 'Skip PATHS outside the project root instead of failing'
complete -c vg-query -l judge -d 'End with a judgement record: whether the hits look like they answer the query, and why not'
complete -c vg-query -l explain -d 'Say in each hit record why it ranked where it did (`reasoning`): its place by meaning and by words, the words and names it matched, a concept it mentions, and what its file did to its place'
complete -c vg-query -s q -l quiet -d 'No progress or notes on stderr (errors are still printed) [config: quiet]'
complete -c vg-query -l full -d 'Embed every chunk with the model now (about 100 s for tokio on two cores) rather than giving new chunks static vectors alone (vecgrep\'s static code model, microseconds each), which searches rank meaning by until the model\'s vectors are there [config: embed_all]'
complete -c vg-query -l trust-project-config -d 'Let the project\'s own .vecgrep/config.toml choose commands to run (open_cmd) and where code is sent and which index it goes to (embedder_source, embedder_url, llm_url, store_url, store_project, store_adopt) [config: trust_project_config, global config only]'
complete -c vg-query -l store-adopt -d 'Write to (and clear) a shared project\'s index that another checkout created, and be recorded as one of its writers: without it, a checkout that names another\'s project (a cloned repository\'s config, a typo) cannot change it [config: store_adopt]'
complete -c vg-query -s L -l follow -d 'Follow symbolic links, but only to targets inside the paths walked (the root by default; for a server, the paths it serves): a link out of them is skipped, a linked directory never walked'
complete -c vg-query -l hidden -d 'Include hidden files and directories'
complete -c vg-query -l no-ignore -d 'Do not respect .gitignore, .ignore or .vecgrepignore files'
complete -c vg-query -l include-generated -d 'Also index lock files (Cargo.lock, package-lock.json, ...), minified bundles (*.min.js, very long lines) and generated code (*.pb.go, "DO NOT EDIT"/"@generated" headers), which are skipped by default [config: include_generated]'
complete -c vg-query -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vg-query -s V -l version -d 'Print version'
