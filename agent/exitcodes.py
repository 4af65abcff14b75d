"""Exit codes of every ``smartarray-agent`` command (documented in docs/cli.md)."""

OK = 0
VENDOR_ERROR = 1  # the vendor CLI answered with an Error: output, or failed to run
BAD_INPUT = 2  # bad arguments, unreadable/empty/binary input, text that is not CLI output
CLI_NOT_FOUND = 3  # no vendor CLI installed
