complete -c vg-log -l since -d 'Only commits authored at or after DATE: a date in UTC (2024-05-01, \'2024-05-01 14:30\'), a span back from now (2w, 3d) or a relative form ("2 weeks ago", yesterday, @1714521600); not every form git takes ("last friday", "May 1 2024")' -r
complete -c vg-log -l until -d 'Only commits authored at or before DATE; a day alone (2024-05-01) includes that whole day' -r
complete -c vg-log -l author -d 'Only commits whose author\'s name or email contains TEXT (any case)' -r
complete -c vg-log -l limit -d 'Index and search only the NUM newest commits of HEAD\'s history' -r
complete -c vg-log -s k -l top-k -d 'Return at most NUM results [config: top_k; default: 10]' -r
complete -c vg-log -l threshold -d 'Drop results scoring below NUM (cosine similarity, -1 to 1). In lexical mode it cuts BM25 on 0..1, and only when set: unset, words alone keep every match. Unset, a hybrid search of code also passes the definition of the one identifier searched for (`vecgrep calculateTotal`), and the definition of a name listed by a concept the query names (`.vecgrep/kg/`), whatever its cosine [config: threshold; default: 0.3]' -r
complete -c vg-log -l mode -d 'Rank by meaning (semantic), by words (lexical, BM25; a search runs no model; vg-serve needs it all the same, to keep its index) or both fused (hybrid). In semantic and hybrid mode the score is the cosine similarity; in lexical mode it is BM25 mapped onto 0..1 [config: mode; default: hybrid]' -r -f -a "semantic\t''
lexical\t''
hybrid\t''"
complete -c vg-log -l embedder-model -d 'Embedding model: all-MiniLM-L6-v2 (the default) or vecgrep-code-minilm-l6 (MiniLM fine-tuned on code by this project; see the README\'s Models) when local; the server\'s model name when remote. Changing it rebuilds the index [config: embedder_model; default: all-MiniLM-L6-v2]' -r
complete -c vg-log -l embedder-source -d 'Where embeddings are computed: local, or remote (an embedding server at --embedder-url) [config: embedder_source; default: local]' -r -f -a "local\t''
remote\t''"
complete -c vg-log -l embedder-url -d 'The embedding server\'s OpenAI-compatible endpoint, e.g. http://gpu:8080/v1/embeddings; its API key is read from VECGREP_EMBEDDER_API_KEY [config: embedder_url]' -r
complete -c vg-log -l store -d 'Keep the index in a shared Postgres database with pgvector, e.g. postgres://db.internal/vecgrep or postgres:///vecgrep?host=/run/postgresql; missing parts come from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE. Every machine given the same URL and --store-project shares one index (the commit log vg-log keeps stays in the checkout\'s own). The URL is never printed [config: store_url]' -r
complete -c vg-log -l store-project -d 'The name the project\'s index is kept under in the shared database; every checkout given the same name shares it (the first to write it is recorded as its creator; others need --store-adopt) [config: store_project; default: the root directory\'s name and a hash of its path]' -r
complete -c vg-log -l no-index -d 'Search the commit log as it is; do not bring it up to date first'
complete -c vg-log -l skip-outside-root -d 'Skip PATHS outside the project root instead of failing'
complete -c vg-log -l with-diff -d 'Index the lines each commit changed and search them beside the messages'
complete -c vg-log -l diffs-only -d 'Search only the lines commits changed, not their messages (indexes them as --with-diff does)'
complete -c vg-log -l no-quiet -d 'Undo --quiet (and a config file\'s quiet = true) for this run'
complete -c vg-log -s q -l quiet -d 'No progress or notes on stderr (errors are still printed) [config: quiet]'
complete -c vg-log -l no-trust-project-config -d 'Undo --trust-project-config (and a config file\'s trust_project_config = true) for this run'
complete -c vg-log -l trust-project-config -d 'Let the project\'s own .vecgrep/config.toml choose commands to run (open_cmd) and where code is sent and which index it goes to (embedder_source, embedder_url, llm_url, store_url, store_project, store_adopt, privacy_mode), and make a run larger or a wait longer than your own settings ask (max_filesize, chunk_size, chunk_overlap, include_generated, index_warn_threshold, embed_all, rate_limit, embedder_timeout, llm_timeout) [config: trust_project_config, global config only]'
complete -c vg-log -l no-store-adopt -d 'Undo --store-adopt (and a config file\'s store_adopt = true) for this run'
complete -c vg-log -l store-adopt -d 'Write to (and clear) a shared project\'s index that another checkout created, and be recorded as one of its writers: without it, a checkout that names another\'s project (a cloned repository\'s config, a typo) cannot change it [config: store_adopt]'
complete -c vg-log -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vg-log -s V -l version -d 'Print version'
