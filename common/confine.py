"""Keep PID 1 out of reach of this process and of everything it starts.

The units run the agent as root because the vendor CLI insists on it, and root may signal
PID 1 (SIGRTMIN+4 powers the host off, SIGRTMIN+5 reboots it). systemd's
``SystemCallFilter=`` cannot look at a call's arguments, and the agent must signal its own
CLI processes, so the agent itself installs a seccomp filter (libseccomp, through pyseccomp)
when it starts as root. These then fail with EPERM:

- ``kill``, ``tkill``, ``tgkill``, ``rt_sigqueueinfo``, ``rt_tgsigqueueinfo`` aimed at PID 1;
- ``kill(-1, ...)``: every process at once, which is also ``killpg(1, ...)``, PID 1's group;
- ``pidfd_open(1)``, and ``pidfd_send_signal`` altogether: a ``/proc/1`` directory opened
  with ``open()`` is a pidfd too, and the agent never uses one;
- making PID 1 or its process group the owner of a file's I/O signals, which then come with
  the signal ``F_SETSIG`` picks at every read or write: ``fcntl(F_SETOWN)`` with owner 1 or
  -1 (group 1), and ``fcntl(F_SETOWN_EX)``, ``ioctl(FIOSETOWN)`` and ``ioctl(SIOCSPGRP)``
  altogether, their owner being behind a pointer the filter cannot read. ``F_SETOWN`` with
  any other owner (a process's own pid, as a program using ``O_ASYNC`` does) still works.

A filter cannot be removed, and every child inherits it: the vendor CLI runs under it too.
The program installs it once (:func:`confine_root`): before it starts its first vendor CLI,
and when the daemon starts. A command that starts none (``status --input``, ``--ilo``,
``config check``) does without it, and without the cost of loading libseccomp. Only the
program does (its entry point calls :func:`enable`): code that imports the agent as a
library, as the tests do in their own process, is never confined by it.
"""

from __future__ import annotations

import errno
import logging
import os
from functools import cache

log = logging.getLogger(__name__)

_LOW_32_BITS = 0xFFFFFFFF  # pid_t is 32 bits; the register's upper half is not defined
_AIMED_AT_PID_1 = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
                   "pidfd_open")
_PID_1_OR_GROUP_1 = (1, _LOW_32_BITS)  # as F_SETOWN reads its owner: 1, and -1 (group 1)
F_SETOWN, F_SETOWN_EX = 8, 15  # linux/fcntl.h
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902  # linux/sockios.h (asm-generic: x86, arm, ...)


_enabled = False


def enable() -> None:
    """Called by the program's entry point: from then on :func:`confine_root` confines."""
    global _enabled
    _enabled = True


@cache
def confine_root() -> None:
    """In the program as root, once per process: :func:`keep_away_from_init`. Where it cannot
    be installed (libseccomp missing), a warning: the agent still runs."""
    if not _enabled or os.geteuid() != 0:
        return
    try:
        keep_away_from_init()
    except (OSError, RuntimeError) as error:
        log.warning("running as root without the filter that keeps PID 1 out of reach "
                    "(docs/privileges.md): %s", error)


def keep_away_from_init() -> None:
    """Install the filter for this process and its future children (all threads).
    OSError or RuntimeError (libseccomp missing) when it cannot be installed."""
    import pyseccomp  # loads libseccomp: only the processes that confine themselves pay it

    refuse = pyseccomp.ERRNO(errno.EPERM)
    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    rules.set_attr(pyseccomp.Attr.CTL_TSYNC, 1)
    for call in _AIMED_AT_PID_1:
        rules.add_rule(refuse, call, pyseccomp.Arg(0, pyseccomp.MASKED_EQ, _LOW_32_BITS, 1))
    rules.add_rule(refuse, "kill",
                   pyseccomp.Arg(0, pyseccomp.MASKED_EQ, _LOW_32_BITS, _LOW_32_BITS))
    rules.add_rule(refuse, "pidfd_send_signal")
    for owner in _PID_1_OR_GROUP_1:
        rules.add_rule(refuse, "fcntl", pyseccomp.Arg(1, pyseccomp.MASKED_EQ, _LOW_32_BITS,
                                                      F_SETOWN),
                       pyseccomp.Arg(2, pyseccomp.MASKED_EQ, _LOW_32_BITS, owner))
    rules.add_rule(refuse, "fcntl",
                   pyseccomp.Arg(1, pyseccomp.MASKED_EQ, _LOW_32_BITS, F_SETOWN_EX))
    for request in (FIOSETOWN, SIOCSPGRP):
        rules.add_rule(refuse, "ioctl",
                       pyseccomp.Arg(1, pyseccomp.MASKED_EQ, _LOW_32_BITS, request))
    rules.load()
