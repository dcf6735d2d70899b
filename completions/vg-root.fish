complete -c vg-root -l json -d 'Print a JSON record with the root and the marker that chose it'
complete -c vg-root -l skip-outside-root -d 'Skip PATHS outside the project root instead of failing'
complete -c vg-root -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vg-root -s V -l version -d 'Print version'
