complete -c vg-answer -l llm-url -d 'The chat model\'s OpenAI-compatible endpoint: its base URL (http://127.0.0.1:8080/v1) or its chat completions URL; its API key is read from VECGREP_LLM_API_KEY [config: llm_url]' -r
complete -c vg-answer -l llm-model -d 'The chat model to ask [config: llm_model; default: the first model the endpoint lists]' -r
complete -c vg-answer -l context-hits -d 'Results sent to the model, best first (1 to 20)' -r
complete -c vg-answer -l privacy-mode -d 'What may leave the machine: local_only (nothing: a chat model or embedding server not on loopback is refused: --ask warns and still answers from the search, --answer, and the search it answers from, fail before anything is sent; a search (vg-query) given it refuses such an embedding server), cloud_reasoning_ok (the question and the top results may go to the chat model), cloud_embedding_ok (the embedding server too) [config: privacy_mode; default: local_only]' -r -f -a "local_only\t''
cloud_reasoning_ok\t''
cloud_embedding_ok\t''"
complete -c vg-answer -l force-answer -d 'Ask even when the results look like they answer the query'
complete -c vg-answer -l learn -d 'Write the concepts the answer bridges (a query word the code lacks, and the identifiers the answer names for it that the results hold) to .vecgrep/kg/learned.md, for a person to review'
complete -c vg-answer -l no-quiet -d 'Undo --quiet (and a config file\'s quiet = true) for this run'
complete -c vg-answer -s q -l quiet -d 'No notes on stderr (errors are still printed) [config: quiet]'
complete -c vg-answer -l no-trust-project-config -d 'Undo --trust-project-config (and a config file\'s trust_project_config = true) for this run'
complete -c vg-answer -l trust-project-config -d 'Let the project\'s own .vecgrep/config.toml choose commands to run (open_cmd) and where code is sent and which index it goes to (embedder_source, embedder_url, llm_url, store_url, store_project, store_adopt, privacy_mode), and make a run larger or a wait longer than your own settings ask (max_filesize, chunk_size, chunk_overlap, include_generated, index_warn_threshold, embed_all, rate_limit, embedder_timeout, llm_timeout) [config: trust_project_config, global config only]'
complete -c vg-answer -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vg-answer -s V -l version -d 'Print version'
