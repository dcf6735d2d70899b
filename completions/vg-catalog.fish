# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_vg_catalog_global_optspecs
    string join \n h/help V/version
end

function __fish_vg_catalog_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_vg_catalog_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_vg_catalog_using_subcommand
    set -l cmd (__fish_vg_catalog_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c vg-catalog -n "__fish_vg_catalog_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vg-catalog -n "__fish_vg_catalog_needs_command" -s V -l version -d 'Print version'
complete -c vg-catalog -n "__fish_vg_catalog_needs_command" -f -a "add" -d 'Make catalog NAME (kebab-case: lowercase letters and digits joined by single \'-\', at most 64) if there is none, and add each directory as a project named after it'
complete -c vg-catalog -n "__fish_vg_catalog_needs_command" -f -a "remove-project" -d 'Take projects (by name) out of catalog NAME; their files leave its index at once'
complete -c vg-catalog -n "__fish_vg_catalog_needs_command" -f -a "remove" -d 'Delete catalog NAME: its definition, its links, its index and its settings (the catalog\'s .vecgrep, config.toml included). The projects are not touched'
complete -c vg-catalog -n "__fish_vg_catalog_needs_command" -f -a "list" -d 'List the catalogs and their projects (exit 1 when there are none)'
complete -c vg-catalog -n "__fish_vg_catalog_needs_command" -f -a "show" -d 'Show catalog NAME: where it is kept, its projects and whether each is where it was'
complete -c vg-catalog -n "__fish_vg_catalog_needs_command" -f -a "use" -d 'Set the default context: the catalog searched when a command names none and no PATH is given, outside any project or inside one of the catalog\'s. Without arguments, print it'
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand add" -s h -l help -d 'Print help'
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand remove-project" -s h -l help -d 'Print help'
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand remove" -s h -l help -d 'Print help'
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand list" -l json -d 'One catalog record per line'
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand list" -s h -l help -d 'Print help'
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand show" -l json -d 'A catalog record'
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand show" -s h -l help -d 'Print help'
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand use" -l catalog -d 'The same, as a flag (`vecgrep use --catalog NAME`)' -r
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand use" -l label -d 'The catalog\'s label to search by default (as --label), if any' -r
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand use" -l clear -d 'Forget the default context'
complete -c vg-catalog -n "__fish_vg_catalog_using_subcommand use" -s h -l help -d 'Print help'
