import { Argument, Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../help.js';

type Shell = 'bash' | 'zsh' | 'fish';

/**
 * Completion scripts. Each asks `vnfm __complete` for the word being typed,
 * so commands, options and values (VIM, package, instance and occurrence
 * names and ids from the store, an instance's aspects and VNFCs, the choices
 * of an option) come from the program itself and never fall behind it.
 */
export function completionCommand(ctx: Context): Command {
  const cmd = new Command('completion')
    .description('Print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      `
The script completes commands, options and their values: VIM, package,
instance and occurrence names and ids from the store (VNFM_HOME as set when
you press TAB), the aspects and VNFCs of the instance named on the line, the
choices of options such as --type SCALE_OUT|SCALE_IN, and file names only
where a file is asked for. Names are inserted quoted for the shell, so a
name holding spaces, quotes or $(...) reaches vnfm as itself and runs
nothing; one holding a control character is not offered. A script saved
from an older vnfm should be written again.`,
    );
  withExamples(cmd, [
    ['enable completion in the current bash', 'source <(vnfm completion bash)'],
    ['for every bash', 'vnfm completion bash > ~/.local/share/bash-completion/completions/vnfm'],
    ['install it for zsh (a directory of $fpath)', 'vnfm completion zsh > "${fpath[1]}/_vnfm"'],
    ['install it for fish', 'vnfm completion fish > ~/.config/fish/completions/vnfm.fish'],
  ]);
  return cmd.action((shell: Shell) => {
    ctx.io.out(SCRIPTS[shell]);
  });
}

// `--` keeps vnfm from reading the words as its options. Values come from the store, where anyone who can write a name
// can plant `$(…)` in one: bash inserts a candidate as it is given, so vnfm reads the line itself and quotes each one
// for bash; zsh and fish get the words as they read them and quote what they insert themselves.
const SCRIPTS: Record<Shell, string> = {
  bash: `# bash completion for vnfm (vnfm completion bash)
_vnfm() {
  local out l
  local -a lines
  # The line up to the cursor as typed, and the text readline replaces ($2): each candidate comes back as the text to put
  # in its place, quoted for bash (and for the quote the cursor is in).
  out=$(command vnfm __complete --line="\${COMP_LINE:0:COMP_POINT}" --word="$2" 2>/dev/null) || return 0
  mapfile -t lines <<< "$out"
  COMPREPLY=()
  for l in "\${lines[@]:1}"; do
    [[ -n $l ]] && COMPREPLY+=("$l")
  done
  case \${lines[0]} in
    :files) compopt -o filenames 2>/dev/null; mapfile -t -O "\${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$2") ;;
    :dirs) compopt -o filenames 2>/dev/null; mapfile -t -O "\${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$2") ;;
  esac
}
complete -F _vnfm vnfm
`,
  zsh: `#compdef vnfm
# zsh completion for vnfm (vnfm completion zsh)
_vnfm() {
  local out directive l v cur=$PREFIX
  local -a lines cands
  # The words as zsh reads them (quotes and backslashes removed), the one being typed up to the cursor.
  [[ $compstate[quote] == "'" ]] || cur=\${(Q)PREFIX}
  out=$(command vnfm __complete -- "\${(@Q)words[2,CURRENT-1]}" "$cur" 2>/dev/null) || return 1
  lines=("\${(@f)out}")
  directive=\${lines[1]}
  for l in "\${(@)lines[2,-1]}"; do
    [[ -n $l ]] || continue
    # _describe reads value:description, a backslash escaping the next character: a backslash and a colon in the value
    # are escaped. zsh quotes what it inserts.
    v=\${\${l%%$'\\t'*}//\\\\/\\\\\\\\}
    v=\${v//:/\\\\:}
    if [[ $l == *$'\\t'* ]]; then
      cands+=("$v:\${l#*$'\\t'}")
    else
      cands+=("$v")
    fi
  done
  # After --flag=, the values complete the part after "=".
  [[ $PREFIX == --*=* ]] && compset -P '*='
  (( \${#cands} )) && _describe -t values 'vnfm' cands
  case $directive in
    :files) _files ;;
    :dirs) _files -/ ;;
  esac
  return 0
}
compdef _vnfm vnfm 2>/dev/null || _vnfm "$@"
`,
  fish: `# fish completion for vnfm (vnfm completion fish)
function __vnfm_complete
    # The words as fish reads them (quotes and escapes removed), the one being typed last (-o with -c gives nothing).
    set -l tok (commandline -ot)
    set -q tok[1]; or set tok ''
    set -l words (commandline -opc) $tok
    set -e words[1]
    set -l out (command vnfm __complete -- $words 2>/dev/null)
    or return
    # After --flag=, fish matches the whole token: the values get the flag in front.
    set -l pre ''
    string match -qr -- '^--[^=]*=' $tok; and set pre (string replace -r -- '=.*' '=' $tok)
    # fish escapes what it inserts, but for a leading "~" (its home directory): a value starting with one is offered
    # once the token starts with "\\~" or a quote.
    set -l raw (commandline -ct)
    for l in $out[2..-1]
        test -n "$l"; or continue
        if test -z "$pre"; and string match -q -- '~*' $l; and not string match -qr -- '^(\\\\\\\\~|[\\'"])' "$raw"
            continue
        end
        printf '%s%s\\n' $pre $l
    end
    switch "$out[1]"
        case :files
            __fish_complete_path (commandline -ct)
        case :dirs
            __fish_complete_directories (commandline -ct)
    end
end
complete -c vnfm -f -a '(__vnfm_complete)'
`,
};
