_vecgrep() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="vecgrep"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        vecgrep)
            opts="-i -p -k -m -l -c -A -B -C -n -N -H -I -0 -M -t -T -g -L -S -E -q -h -V --stats --show-root --index-only --reindex --clear-cache --no-index --no-scope --catalog --label --skip-outside-root --answer --rev --plan --ask --explain --log --interactive --query --open-cmd --serve --mcp --bind --port --token --rate-limit --top-k --threshold --mode --max-count --files --files-with-matches --count --json --after-context --before-context --context --heading --no-heading --line-number --no-line-number --with-filename --no-filename --null --lines --max-columns --max-columns-preview --color --force-answer --learn --llm-url --llm-model --context-hits --privacy-mode --planner --since --until --author --limit --with-diff --diffs-only --chunk-size --chunk-overlap --index-warn-threshold --embedder-model --embedder-source --embedder-url --store --store-project --type --type-not --glob --max-depth --follow --hidden --no-ignore --ignore-file --max-filesize --changed-within --changed-before --size --exclude --package --no-quiet --quiet --no-full-index --full-index --no-full --full --no-trust-project-config --trust-project-config --no-store-adopt --store-adopt --no-include-generated --include-generated --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --catalog)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rev)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --query)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --open-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top-k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threshold)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "semantic lexical hybrid" -- "${cur}"))
                    return 0
                    ;;
                --max-count)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --after-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --before-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -B)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-columns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -M)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --llm-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --context-hits)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --privacy-mode)
                    COMPREPLY=($(compgen -W "local_only cloud_reasoning_ok cloud_embedding_ok" -- "${cur}"))
                    return 0
                    ;;
                --planner)
                    COMPREPLY=($(compgen -W "rules llm" -- "${cur}"))
                    return 0
                    ;;
                --since)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --author)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-overlap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --index-warn-threshold)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embedder-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embedder-source)
                    COMPREPLY=($(compgen -W "local remote" -- "${cur}"))
                    return 0
                    ;;
                --embedder-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --store-project)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --type)
                    COMPREPLY=($(compgen -W "ada agda aidl alire amake asciidoc asm asp ats avro awk bat batch bazel bitbake boxlang brotli buildstream bzip2 c cabal candid carp cbor ceylon cfml clojure cmake cmd cml coffeescript config container coq cpp creole crystal cs csharp cshtml csproj css csv cuda cython d dart devicetree dhall diff dita docker dockercompose dts dvc ebuild edn elisp elixir elm erb erlang fennel fidl fish flatbuffers fortran fsharp fut gap gdscript gleam gn go gprbuild gradle graphql groovy gzip h haml hare haskell hbs hs html hurl hy idris janet java jinja jl js json jsonl julia jupyter k kconfig kotlin lean less license lilypond lisp llvm lock log lua lz4 lzma m4 make mako man markdown matlab md meson minified mint mk ml mojo motoko msbuild nim nix objc objcpp ocaml org pants pascal pdf perl php pkgbuild po pod postscript prolog proto protobuf ps puppet purs py python qmake qml qrc qui r racket raku rdoc readme reasonml red rescript robot rocq rst ruby rust sass scala scdoc seed7 sh slim smarty sml solidity soy spark spec sql ssa stylus sv svelte svg swift swig systemd taskpaper tcl tex texinfo textile tf thrift toml ts twig txt typescript typoscript typst usd v vala vb vcl verilog vhdl vim vimscript vue webidl wgsl wiki xml xz yacc yaml yang z zig zsh zstd" -- "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -W "ada agda aidl alire amake asciidoc asm asp ats avro awk bat batch bazel bitbake boxlang brotli buildstream bzip2 c cabal candid carp cbor ceylon cfml clojure cmake cmd cml coffeescript config container coq cpp creole crystal cs csharp cshtml csproj css csv cuda cython d dart devicetree dhall diff dita docker dockercompose dts dvc ebuild edn elisp elixir elm erb erlang fennel fidl fish flatbuffers fortran fsharp fut gap gdscript gleam gn go gprbuild gradle graphql groovy gzip h haml hare haskell hbs hs html hurl hy idris janet java jinja jl js json jsonl julia jupyter k kconfig kotlin lean less license lilypond lisp llvm lock log lua lz4 lzma m4 make mako man markdown matlab md meson minified mint mk ml mojo motoko msbuild nim nix objc objcpp ocaml org pants pascal pdf perl php pkgbuild po pod postscript prolog proto protobuf ps puppet purs py python qmake qml qrc qui r racket raku rdoc readme reasonml red rescript robot rocq rst ruby rust sass scala scdoc seed7 sh slim smarty sml solidity soy spark spec sql ssa stylus sv svelte svg swift swig systemd taskpaper tcl tex texinfo textile tf thrift toml ts twig txt typescript typoscript typst usd v vala vb vcl verilog vhdl vim vimscript vue webidl wgsl wiki xml xz yacc yaml yang z zig zsh zstd" -- "${cur}"))
                    return 0
                    ;;
                --type-not)
                    COMPREPLY=($(compgen -W "ada agda aidl alire amake asciidoc asm asp ats avro awk bat batch bazel bitbake boxlang brotli buildstream bzip2 c cabal candid carp cbor ceylon cfml clojure cmake cmd cml coffeescript config container coq cpp creole crystal cs csharp cshtml csproj css csv cuda cython d dart devicetree dhall diff dita docker dockercompose dts dvc ebuild edn elisp elixir elm erb erlang fennel fidl fish flatbuffers fortran fsharp fut gap gdscript gleam gn go gprbuild gradle graphql groovy gzip h haml hare haskell hbs hs html hurl hy idris janet java jinja jl js json jsonl julia jupyter k kconfig kotlin lean less license lilypond lisp llvm lock log lua lz4 lzma m4 make mako man markdown matlab md meson minified mint mk ml mojo motoko msbuild nim nix objc objcpp ocaml org pants pascal pdf perl php pkgbuild po pod postscript prolog proto protobuf ps puppet purs py python qmake qml qrc qui r racket raku rdoc readme reasonml red rescript robot rocq rst ruby rust sass scala scdoc seed7 sh slim smarty sml solidity soy spark spec sql ssa stylus sv svelte svg swift swig systemd taskpaper tcl tex texinfo textile tf thrift toml ts twig txt typescript typoscript typst usd v vala vb vcl verilog vhdl vim vimscript vue webidl wgsl wiki xml xz yacc yaml yang z zig zsh zstd" -- "${cur}"))
                    return 0
                    ;;
                -T)
                    COMPREPLY=($(compgen -W "ada agda aidl alire amake asciidoc asm asp ats avro awk bat batch bazel bitbake boxlang brotli buildstream bzip2 c cabal candid carp cbor ceylon cfml clojure cmake cmd cml coffeescript config container coq cpp creole crystal cs csharp cshtml csproj css csv cuda cython d dart devicetree dhall diff dita docker dockercompose dts dvc ebuild edn elisp elixir elm erb erlang fennel fidl fish flatbuffers fortran fsharp fut gap gdscript gleam gn go gprbuild gradle graphql groovy gzip h haml hare haskell hbs hs html hurl hy idris janet java jinja jl js json jsonl julia jupyter k kconfig kotlin lean less license lilypond lisp llvm lock log lua lz4 lzma m4 make mako man markdown matlab md meson minified mint mk ml mojo motoko msbuild nim nix objc objcpp ocaml org pants pascal pdf perl php pkgbuild po pod postscript prolog proto protobuf ps puppet purs py python qmake qml qrc qui r racket raku rdoc readme reasonml red rescript robot rocq rst ruby rust sass scala scdoc seed7 sh slim smarty sml solidity soy spark spec sql ssa stylus sv svelte svg swift swig systemd taskpaper tcl tex texinfo textile tf thrift toml ts twig txt typescript typoscript typst usd v vala vb vcl verilog vhdl vim vimscript vue webidl wgsl wiki xml xz yacc yaml yang z zig zsh zstd" -- "${cur}"))
                    return 0
                    ;;
                --glob)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -g)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-depth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ignore-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-filesize)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --changed-within)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --changed-before)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -S)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -E)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --package)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _vecgrep -o nosort -o bashdefault -o default vecgrep
else
    complete -F _vecgrep -o bashdefault -o default vecgrep
fi
