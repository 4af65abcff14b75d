"""Exit codes of every ``smartarray-agent`` command (documented in docs/cli.md)."""

OK = 0
VENDOR_ERROR = 1  # the vendor CLI answered with an Error: output, or failed to run
BAD_INPUT = 2  # bad arguments, unreadable/empty/binary input, text that is not CLI output
CLI_NOT_FOUND = 3  # no vendor CLI installed
REFUSED = 4  # the write-cache interlock refused the change: nothing was sent
NOT_APPLIED = 5  # the change was sent but the controller does not show it
DECLINED = 6  # the change needed confirmation and did not get it: nothing was sent
CANNOT_SERVE = 7  # the agent cannot listen on its address (in use, not permitted)
OUTCOME_UNKNOWN = 8  # the change was sent and the controller could not be read afterwards
UNPROTECTED = 9  # the change was made and write cache is now on with no healthy backup power
NOT_RECORDED = 10  # the audit record could not be written: nothing was sent
COLLECTOR_FAILED = 11  # metrics: the metrics were written or printed, but a collector failed
OUTCOME_NOT_RECORDED = 12  # the outcome of a change could not be written to the audit file
