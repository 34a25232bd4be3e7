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
where a file is asked for.`,
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

// The line is split by the shell's own rules; `--` keeps vnfm from reading the words as its options.
const SCRIPTS: Record<Shell, string> = {
  bash: `# bash completion for vnfm (vnfm completion bash)
_vnfm() {
  local cur=\${COMP_WORDS[COMP_CWORD]} line=\${COMP_LINE:0:COMP_POINT} out directive l pre=""
  local -a words lines
  # COMP_WORDS splits at "=" and ":"; the line split at blanks keeps --flag=value whole.
  read -ra words <<< "$line"
  [[ $line =~ [[:space:]]$ ]] && words+=("")
  # Right after "--flag=", the word bash replaces is the "=" itself.
  [[ $cur == "=" ]] && cur="" && pre="="
  out=$(command vnfm __complete -- "\${words[@]:1}" 2>/dev/null) || return 0
  mapfile -t lines <<< "$out"
  directive=\${lines[0]}
  COMPREPLY=()
  for l in "\${lines[@]:1}"; do
    [[ -n $l ]] && COMPREPLY+=("$pre\${l%%$'\\t'*}")
  done
  case $directive in
    :files) compopt -o filenames 2>/dev/null; mapfile -t -O "\${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur") ;;
    :dirs) compopt -o filenames 2>/dev/null; mapfile -t -O "\${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur") ;;
  esac
}
complete -F _vnfm vnfm
`,
  zsh: `#compdef vnfm
# zsh completion for vnfm (vnfm completion zsh)
_vnfm() {
  local out directive l
  local -a lines cands
  out=$(command vnfm __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
  lines=("\${(@f)out}")
  directive=\${lines[1]}
  for l in "\${(@)lines[2,-1]}"; do
    [[ -n $l ]] || continue
    # _describe reads value:description; a colon in the value is escaped.
    if [[ $l == *$'\\t'* ]]; then
      cands+=("\${\${l%%$'\\t'*}//:/\\\\:}:\${l#*$'\\t'}")
    else
      cands+=("\${l//:/\\\\:}")
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
    set -l tok (commandline -ct)
    set -l words (commandline -opc) $tok
    set -e words[1]
    set -l out (command vnfm __complete -- $words 2>/dev/null)
    or return
    # After --flag=, fish matches the whole token: the values get the flag in front.
    set -l pre ''
    string match -qr -- '^--[^=]*=' $tok; and set pre (string replace -r -- '=.*' '=' $tok)
    for l in $out[2..-1]
        test -n "$l"; and printf '%s%s\\n' $pre $l
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
