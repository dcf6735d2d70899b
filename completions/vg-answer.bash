_vg__answer() {
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
                cmd="vg__answer"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        vg__answer)
            opts="-q -h -V --force-answer --learn --llm-url --llm-model --context-hits --privacy-mode --no-quiet --quiet --no-trust-project-config --trust-project-config --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
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
    complete -F _vg__answer -o nosort -o bashdefault -o default vg-answer
else
    complete -F _vg__answer -o bashdefault -o default vg-answer
fi
