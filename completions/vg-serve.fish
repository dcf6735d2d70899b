complete -c vg-serve -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vg-serve -s V -l version -d 'Print version'
