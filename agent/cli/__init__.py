"""The ``smartarray-agent`` command line: one Typer app (cli/app.py), a module per command or
group of commands."""
