import { Argument, Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../help.js';

/** Completion scripts, generated from the command tree so they never fall behind it. */
export function completionCommand(ctx: Context, root: () => Command): Command {
  const cmd = new Command('completion')
    .description('Print a shell completion script')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh']));
  withExamples(cmd, [
    ['enable completion in the current bash', 'source <(vnfm completion bash)'],
    ['install it for zsh', 'vnfm completion zsh > "${fpath[1]}/_vnfm"'],
  ]);
  return cmd.action((shell: 'bash' | 'zsh') => {
    const program = root();
    const commands = program.commands.map((c) => ({
      name: c.name(),
      flags: c.options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f))).concat('--help'),
    }));
    const globals = program.options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
    ctx.io.out(shell === 'bash' ? bashScript(commands, globals) : zshScript(commands, globals));
  });
}

type Spec = { name: string; flags: string[] }[];

function bashScript(commands: Spec, globals: string[]): string {
  const cases = commands.map((c) => `    ${c.name}) flags="${c.flags.join(' ')}" ;;`).join('\n');
  return `# bash completion for vnfm
_vnfm() {
  local cur=\${COMP_WORDS[COMP_CWORD]} sub="" flags="" w
  for w in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$w" in -*) ;; *) sub="$w"; break ;; esac
  done
  if [[ -z "$sub" ]]; then
    COMPREPLY=( $(compgen -W "${commands.map((c) => c.name).join(' ')} ${globals.join(' ')}" -- "$cur") )
    return
  fi
  case "$sub" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$flags ${globals.join(' ')}" -- "$cur") )
  else
    COMPREPLY=( $(compgen -f -- "$cur") )
  fi
}
complete -F _vnfm vnfm
`;
}

function zshScript(commands: Spec, globals: string[]): string {
  const cases = commands.map((c) => `    ${c.name}) _arguments '*:file:_files' ${c.flags.map((f) => `'${f}'`).join(' ')} ;;`).join('\n');
  return `#compdef vnfm
# zsh completion for vnfm
_vnfm() {
  local -a cmds
  cmds=(${commands.map((c) => `'${c.name}'`).join(' ')})
  if (( CURRENT == 2 )); then
    _describe 'command' cmds
    compadd -- ${globals.join(' ')}
    return
  fi
  case "\${words[2]}" in
${cases}
  esac
}
compdef _vnfm vnfm 2>/dev/null || _vnfm "$@"
`;
}
