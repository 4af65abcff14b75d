"""What a command is to the command line: a :class:`Command` is an argparse parser of its
arguments and the function run with what it parsed; a :class:`Group` names commands under
one word (the program itself, ``config``, ``simulate``) and loads the one named only when it
runs. Every parser refuses abbreviated options, and a usage error exits 2 (BAD_INPUT)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from smartarray_agent.cli import exitcodes

if TYPE_CHECKING:
    from typing import Any, NoReturn

PACKAGE = "smartarray-agent"  # the distribution whose version --version prints


class _Formatter(argparse.HelpFormatter):
    """Fills each paragraph of a description on its own (argparse would join them)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n\n".join(super(_Formatter, self)._fill_text(paragraph, width, indent)
                           for paragraph in text.split("\n\n"))


class Parser(argparse.ArgumentParser):
    """A command's parser: no abbreviated options, paragraphs kept in its description."""

    def __init__(self, prog: str, description: str, **kwargs: Any) -> None:
        super().__init__(prog=prog, description=description, allow_abbrev=False,
                         formatter_class=_Formatter, add_help=False, **kwargs)
        self.add_argument("-h", "--help", action="help", help="Show this message and exit.")


class Version(argparse.Action):
    """``--version``: print ``PROGRAM VERSION`` and exit 0. The version is read only then:
    importlib.metadata is slow to import."""

    def __init__(self, option_strings: Sequence[str], dest: str, program: str,
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                         nargs=0, help=help)
        self.program = program

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> NoReturn:
        from importlib.metadata import version

        print(f"{self.program} {version(PACKAGE)}")
        parser.exit()


class Command:
    """A command: its help, ``run``, called with what its parser read, and the arguments it
    takes (added to its parser by ``arguments``; none without). A command ends by returning
    (exit 0) or by raising SystemExit with its code (cli/exitcodes.py)."""

    def __init__(self, help: str, run: Callable[[argparse.Namespace], None],
                 arguments: Callable[[Parser], None] | None = None,
                 parser_class: type[Parser] = Parser) -> None:
        self.help = help
        self.run = run
        self.arguments = arguments
        self.parser_class = parser_class

    @property
    def summary(self) -> str:
        """Its line in its group's help: the first paragraph of its help."""
        return self.help.split("\n\n")[0]

    def parser(self, prog: str) -> Parser:
        parser = self.parser_class(prog, self.help)
        if self.arguments is not None:
            self.arguments(parser)
        return parser

    def parse(self, prog: str, argv: Sequence[str]) -> argparse.Namespace:
        """``argv``, options and arguments in any order (``write-cache enable --what
        logical-drive 1 --slot 0``)."""
        return self.parser(prog).parse_intermixed_args(argv)

    def start(self, prog: str, argv: Sequence[str]) -> None:
        self.run(self.parse(prog, argv))


class _GroupParser(Parser):
    """A group's parser: its help ends with its commands, each with its summary."""

    def __init__(self, commands: Mapping[str, str], prog: str, description: str) -> None:
        super().__init__(prog, description, usage="%(prog)s [OPTIONS] COMMAND [ARGS]...")
        self.commands = commands
        self.add_argument("command", metavar="COMMAND", choices=list(commands),
                          help=argparse.SUPPRESS)
        self.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)

    def format_help(self) -> str:
        formatter = self._get_formatter()
        formatter.start_section("commands")
        for name, summary in self.commands.items():
            formatter.add_argument(argparse.Action([], name, metavar=name, help=summary))
        formatter.end_section()
        return f"{super().format_help()}\n{formatter.format_help()}"


class Group:
    """Commands under one word. ``commands`` is each one's summary, by name; ``load`` gives
    the command of a name (importing it, for the program's table); ``options`` adds the
    group's own options. With no words, the group prints its help and exits 2."""

    def __init__(self, help: str, commands: Mapping[str, str],
                 load: Callable[[str], Command | Group],
                 options: Callable[[Parser], None] | None = None) -> None:
        self.help = help
        self.commands = commands
        self.load = load
        self.options = options

    @classmethod
    def of(cls, help: str, commands: Mapping[str, Command]) -> Group:
        """A group of commands already at hand."""
        return cls(help, {name: command.summary for name, command in commands.items()},
                   commands.__getitem__)

    def parser(self, prog: str) -> Parser:
        parser = _GroupParser(self.commands, prog, self.help)
        if self.options is not None:
            self.options(parser)
        return parser

    def start(self, prog: str, argv: Sequence[str]) -> None:
        parser = self.parser(prog)
        if not argv:
            parser.print_help(sys.stderr)
            raise SystemExit(exitcodes.BAD_INPUT)
        args = parser.parse_args(argv)
        self.load(args.command).start(f"{prog} {args.command}", args.args)

    def walk(self, path: Sequence[str] = ()) -> Iterator[tuple[list[str], Command]]:
        """Every command under this group, with the words that name it, in the group's
        order; every module is imported (for what reads the whole tree: the manual page,
        the tests)."""
        for name in self.commands:
            node = self.load(name)
            if isinstance(node, Group):
                yield from node.walk([*path, name])
            else:
                yield [*path, name], node
