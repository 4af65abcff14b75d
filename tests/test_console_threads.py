"""The console starts from a process with threads without forking it (issue #50 item 8):
pexpect's ``spawn`` called ``forkpty()``, which Python 3.13 warns may deadlock a
multi-threaded process (``DeprecationWarning: This process ... is multi-threaded, use of
forkpty() may lead to deadlocks in the child``); the console is now a subprocess with a
pseudo-terminal as its standard streams. The warning is recorded, not raised: CPython clears
it where ``-W error`` turns it into an exception, so an error filter would hide it."""

from __future__ import annotations

import faulthandler
import logging
import re
import sys
import threading
import warnings

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.simulator import vendor_argv

from . import matrix

# Consoles started, one after the other: a forkpty() warns at the first; a deadlock is likelier
# the more there are (12 with --full-matrix).
STARTS = len(matrix.chosen(range(12), lambda n: n < 3))
BUSY = 4  # threads that allocate and log meanwhile, a few hundred times a second each
WATCHDOG_S = 600  # a deadlock ends the run with every thread's traceback, not a hang


def test_many_console_starts_while_other_threads_allocate_and_log(tmp_path):
    cli = VendorCli(tuple(vendor_argv("gen9-battery", tmp_path / "sim")), "simulator")
    log = logging.getLogger("smartarray_agent.tests.busy")
    handler = logging.FileHandler(tmp_path / "busy.log")
    log.addHandler(handler)
    log.propagate = False
    stop = threading.Event()
    logged = [0] * BUSY

    def busy(index: int) -> None:
        while not stop.wait(0.002):
            kept = [bytearray(4096) for _ in range(64)]  # the allocator's locks, taken often
            log.warning("thread %d holds %d blocks", index, len(kept))  # the logging lock
            logged[index] += 1

    threads = [threading.Thread(target=busy, args=(i,)) for i in range(BUSY)]
    answered = 0
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            for thread in threads:
                thread.start()
            for _ in range(STARTS):
                console = cli.console(timeout_s=60)
                try:
                    answered += "Smart Array P440ar" in console.run("ctrl all show status")
                finally:
                    console.close()
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        faulthandler.cancel_dump_traceback_later()
        log.removeHandler(handler)
        handler.close()
    assert [str(w.message) for w in warned if "fork" in str(w.message)] == []
    assert answered == STARTS
    assert all(logged)  # the other threads ran throughout


# A console that says whether the terminal it runs on is its controlling terminal, as HPE's
# CLI has always had one (over ssh, or pexpect's forkpty): /dev/tty opens, and its standard
# input is that terminal, whose foreground process group is the console's own.
CONTROLLING = """\
import os, sys
try:
    os.open("/dev/tty", os.O_RDWR)
    mine = os.tcgetpgrp(0) == os.getpgrp() == os.getsid(0) == os.getpid()
    print(f"controlling terminal: {os.ttyname(0)}, its group and session its own {mine}")
except OSError as error:
    print(f"no controlling terminal: {error.strerror}")
print("=> ", end="", flush=True)
for line in sys.stdin:
    if line.strip() == "exit":
        break
    print("=> ", end="", flush=True)
"""


def test_the_console_has_its_terminal_as_controlling_terminal_started_from_threads(
        tmp_path):
    """The console's pseudo-terminal is its controlling terminal, the console started from
    a process with threads without forking it: no forkpty warning (Python 3.13 warns there;
    recorded, not raised, as the module's doc says)."""
    program = tmp_path / "ssacli"
    program.write_text(CONTROLLING)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # the process has threads, as the agent has
    other.start()
    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            console = VendorCli((sys.executable, str(program)), "ssacli").console(timeout_s=30)
            console.close()
    finally:
        stop.set()
        other.join()
    assert [str(w.message) for w in warned if "fork" in str(w.message)] == []
    assert re.fullmatch(r"controlling terminal: /dev/pts/\d+, its group and session its own "
                        "True", console.banner.strip())
