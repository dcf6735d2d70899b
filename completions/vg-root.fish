complete -c vg-root -l catalog -d 'Print catalog NAME\'s directory, where its index is kept, as the root instead of the project here (see vg-catalog). Without it, the default context (vg-catalog use) is taken when no PATH is given, outside any project or inside one of its projects.' -r
complete -c vg-root -l json -d 'Print a JSON record with the root and the marker that chose it'
complete -c vg-root -l skip-outside-root -d 'Skip PATHS outside the project root instead of failing'
complete -c vg-root -l no-quiet -d 'Undo --quiet (and a config file\'s quiet = true) for this run'
complete -c vg-root -s q -l quiet -d 'No progress or notes on stderr (errors are still printed) [config: quiet]'
complete -c vg-root -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vg-root -s V -l version -d 'Print version'
