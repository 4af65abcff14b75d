"""Shell completion. ``--show-completion SHELL`` prints a script for bash, zsh or fish that,
at each completion, runs the program again with the variable ``COMPLETE`` (cli/__init__.py)
set and the words typed so far as its arguments, the last one the word under completion
(empty at a new word). The program answers from the commands' parsers, importing only the
module of the command being typed (none to complete a command's name): a first line,
``plain``, ``file`` or ``dir``; for ``plain`` the candidates follow, one a line, and for the
others the shell completes file or directory names itself.

What is completed: command and subcommand names, the options of the command being typed
(those not given yet), the choices of an option or argument that has them, and file names
for a value whose metavar is FILE or PATH (directory names for DIR)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from smartarray_agent.cli.command import Command, Group

_KINDS = {"FILE": "file", "PATH": "file", "DIR": "dir"}  # by metavar

_BASH = r"""# bash completion for @PROG@ (@PROG@ --show-completion bash)
@FUNCTION@() {
    local -a answer
    mapfile -t answer < <(@VARIABLE@=bash "$1" "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
    case ${answer[0]} in
        file | dir)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen "-${answer[0]:0:1}" -- "${COMP_WORDS[COMP_CWORD]}") ;;
        plain) COMPREPLY=("${answer[@]:1}") ;;
    esac
}
complete -F @FUNCTION@ @PROG@
"""

_ZSH = r"""#compdef @PROG@
# zsh completion for @PROG@ (@PROG@ --show-completion zsh)
@FUNCTION@() {
    local -a answer
    answer=("${(@f)$(@VARIABLE@=zsh "${words[1]}" "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    case ${answer[1]} in
        file) _files ;;
        dir) _files -/ ;;
        plain) compadd -- "${(@)answer[2,-1]}" ;;
    esac
}
compdef @FUNCTION@ @PROG@
"""

_FISH = r"""# fish completion for @PROG@ (@PROG@ --show-completion fish)
function @FUNCTION@
    set -l typed (commandline -opc)
    set -l program $typed[1]
    set -e typed[1]
    set -l current (commandline -ct)
    set -l answer (env @VARIABLE@=fish $program $typed "$current" 2>/dev/null)
    set -l kind $answer[1]
    set -e answer[1]
    switch "$kind"
        case file
            __fish_complete_path "$current"
        case dir
            __fish_complete_directories "$current"
        case plain
            printf '%s\n' $answer
    end
end
complete -c @PROG@ -f -a '(@FUNCTION@)'
"""

_SCRIPTS = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}


def script(shell: str, prog: str, variable: str) -> str:
    """The completion script of ``shell`` for the program ``prog``, which answers when the
    environment has ``variable``."""
    function = f"_{prog.replace('-', '_')}_completion"
    return (_SCRIPTS[shell].replace("@PROG@", prog).replace("@FUNCTION@", function)
            .replace("@VARIABLE@", variable))


def complete(app: Group, prog: str, words: Sequence[str]) -> None:
    """Print the answer for ``words`` (see the module's docstring)."""
    kind, candidates = answer(app, prog, list(words) or [""])
    print("\n".join([kind, *candidates]))


def answer(app: Group, prog: str, words: list[str]) -> tuple[str, list[str]]:
    """What completes the last of ``words`` (those typed after the program's name): the
    kind, and for ``plain`` the candidates."""
    *typed, incomplete = words
    node: Command | Group = app
    while True:
        parser = node.parser(prog)
        positionals, given, pending = _read(parser, typed)
        if isinstance(node, Group) and positionals:
            name = typed[positionals[0]]
            if name not in node.commands:
                return "plain", []
            prog = f"{prog} {name}"
            typed = typed[positionals[0] + 1:]
            node = node.load(name)
            continue
        break
    if pending is not None:  # the value of an option
        return _values(pending, incomplete)
    if incomplete.startswith("-") and "--" not in typed:
        return "plain", [option for action in _actions(parser) if action not in given
                         for option in action.option_strings if option.startswith(incomplete)]
    if isinstance(node, Group):
        return "plain", [name for name in node.commands if name.startswith(incomplete)]
    arguments = [action for action in _actions(parser) if not action.option_strings]
    if not arguments:
        return "plain", []
    index = len(positionals)
    if index >= len(arguments):
        if arguments[-1].nargs != "*":
            return "plain", []
        index = len(arguments) - 1
    return _values(arguments[index], incomplete)


def _actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [action for action in parser._actions if action.help != argparse.SUPPRESS]


def _read(parser: argparse.ArgumentParser, typed: list[str]
          ) -> tuple[list[int], set[argparse.Action], argparse.Action | None]:
    """Where the positional words are among ``typed``, the options given, and the option
    whose value is the next word (None when there is none)."""
    options = {option: action for action in parser._actions
               for option in action.option_strings}
    positionals: list[int] = []
    given: set[argparse.Action] = set()
    pending: argparse.Action | None = None
    for position, word in enumerate(typed):
        if pending is not None:
            pending = None
        elif word == "--":
            positionals += range(position + 1, len(typed))
            break
        elif word.startswith("-") and word != "-":
            action = options.get(word.split("=", 1)[0])
            if action is not None:
                given.add(action)
                if action.nargs != 0 and "=" not in word:
                    pending = action
        else:
            positionals.append(position)
    return positionals, given, pending


def _values(action: argparse.Action, incomplete: str) -> tuple[str, list[str]]:
    if action.choices is not None:
        return "plain", [str(choice) for choice in action.choices
                         if str(choice).startswith(incomplete)]
    kind = _KINDS.get(str(action.metavar))
    return (kind, []) if kind else ("plain", [])
