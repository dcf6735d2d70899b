complete -c vg-format -s A -l after-context -d 'Show NUM lines after each shown line' -r
complete -c vg-format -s B -l before-context -d 'Show NUM lines before each shown line' -r
complete -c vg-format -s C -l context -d 'Show NUM lines before and after each shown line' -r
complete -c vg-format -l lines -d 'Lines shown per result: its best-matching lines [default: 3 with headings, 1 without]' -r
complete -c vg-format -s M -l max-columns -d 'Leave out each shown line longer than NUM bytes, saying how long it was in its place, as ripgrep\'s -M: a hit on a line of minified code is otherwise the whole line. 0: no limit (the default)' -r
complete -c vg-format -l color -d 'When to use colors' -r -f -a "auto\t'Color when writing to a terminal, NO_COLOR is unset or empty, and TERM is set and not dumb'
always\t''
never\t''"
complete -c vg-format -s l -l files-with-matches -l files -d 'Print each file with results once, best first'
complete -c vg-format -s c -l count -d 'Print the number of results per file (a result read twice counts once)'
complete -c vg-format -l json -d 'Print hit records as JSON lines (paths relative to the root)'
complete -c vg-format -l heading -d 'Group results under a heading per file (default on a terminal)'
complete -c vg-format -l no-heading -d 'Print `path:line:text` lines (default when piped)'
complete -c vg-format -s n -l line-number -d 'Show each line\'s number (the default; accepted as ripgrep\'s -n is)'
complete -c vg-format -s N -l no-line-number -d 'Leave out line numbers'
complete -c vg-format -s H -l with-filename -d 'Show each line\'s path when piped, each file\'s heading on a terminal (the default; accepted as ripgrep\'s -H is)'
complete -c vg-format -s I -l no-filename -d 'Leave out paths: `line:text` when piped, no file headings on a terminal'
complete -c vg-format -s 0 -l null -d 'Follow each path with a NUL byte instead of a newline or `:`, for `xargs -0` (as ripgrep\'s -0)'
complete -c vg-format -l max-columns-preview -d 'With -M, show the first NUM bytes of a longer line, then how many bytes were left out, instead of leaving it out; without -M it does nothing, as ripgrep\'s'
complete -c vg-format -l no-quiet -d 'Undo --quiet (and a config file\'s quiet = true) for this run'
complete -c vg-format -s q -l quiet -d 'No advice on stderr after results that may not answer the query (also `quiet` in the config of the project the hits come from) [config: quiet]'
complete -c vg-format -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vg-format -s V -l version -d 'Print version'
