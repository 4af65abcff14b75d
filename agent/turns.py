"""Scrapes go first: the collection's CPU-heavy work steps aside while the endpoint answers.

In ``run`` one process both answers scrapes (the endpoint's thread) and parses and renders
each collection (the collection thread, 100 ms and more of CPU for 8 controllers). Both
need the GIL: every system call of the endpoint hands it to the collection, and taking it
back costs a switch interval and a wake-up, so a burst of scrapes that met a collection took
two to four times as long (docs/benchmarks.md). Instead, the endpoint says while it is
answering (:func:`answering`, :func:`idle`), and the parser and the renderer call
:func:`give_way` between small steps (a line, a drive, a sample): while the endpoint answers,
that waits, holding neither the GIL nor a CPU, until it is idle again. The runner calls it
before it starts a vendor CLI process too: the fork holds the GIL for milliseconds (2-5 ms
measured beside a 45 MB process). (The endpoint's own thread renders too, when a scrape
finds the exposition out of date: it never waits.)

Two settings of the interpreter serve the same end (:func:`tune_interpreter`, run once by
``run`` before it starts): a GIL switch interval of 10 us instead of 5 ms, so that the
endpoint's thread, woken by a request, gets the GIL back from a collection within 10 us (a
switch is forced only while another thread waits: a collection with no scrape pays
nothing); and every object made by then (modules, classes, the agent's own: they live as
long as the agent) frozen out of the cyclic garbage collector, so that a full collection,
about one round in ten, does not walk them again: it held the GIL for 12-21 ms, a stall no
:func:`give_way` can break.

A collection is never starved: each wait lasts at most ``MAX_WAIT_S``, and after one the
caller works ``WORK_S`` before it waits again. Under a flood of scrapes that never lets up, a
collection takes at most (MAX_WAIT_S + WORK_S) / WORK_S = 21 times its CPU time.
In a process with no endpoint (every other command), :func:`give_way` returns at once.
"""

from __future__ import annotations

import gc
import sys
import threading
import time

MAX_WAIT_S = 0.02
WORK_S = 0.001
SWITCH_INTERVAL_S = 0.00001

_idle = threading.Event()
_idle.set()
_endpoint: int | None = None  # the thread that answers: it never waits for itself
_work_until = 0.0  # the collection thread's: no wait before this monotonic time


def answering() -> None:
    """The endpoint (the calling thread) has requests in hand: collection work waits."""
    global _endpoint
    _endpoint = threading.get_ident()
    _idle.clear()


def idle() -> None:
    """The endpoint has nothing to do (and when it stops)."""
    _idle.set()


def give_way() -> None:
    """Wait while the endpoint answers (see above); at once otherwise."""
    global _work_until
    if _idle.is_set():
        return
    if time.monotonic() < _work_until or threading.get_ident() == _endpoint:
        return  # working its WORK_S; or the endpoint, rendering for a scrape (view.py)
    _idle.wait(MAX_WAIT_S)
    _work_until = time.monotonic() + WORK_S


def tune_interpreter() -> None:
    """The switch interval and the frozen objects above; once, when the agent is built."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    gc.collect()  # nothing that is garbage already is frozen
    gc.freeze()
