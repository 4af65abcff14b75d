"""Keep PID 1 out of reach of this process and of everything it starts (docs/privileges.md
lists the calls refused). Root may signal PID 1 (SIGRTMIN+4 powers the host off), and
systemd's ``SystemCallFilter=`` cannot look at arguments, so a root agent installs a seccomp
filter (pyseccomp) that fails with EPERM every signal aimed at PID 1 or every process, every
pidfd of PID 1, and making PID 1 or its group the owner of a file's I/O signals.

A filter cannot be removed and every child inherits it, the vendor CLI too. The program (its
entry point calls :func:`enable`) installs it once, before its first vendor CLI and when the
daemon starts (:func:`confine_root`); code that imports the agent as a library, as the tests
do, is never confined.
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
    global _enabled
    _enabled = True


@cache
def confine_root() -> None:
    """In the program as root, once: :func:`keep_away_from_init`, else a warning."""
    if not _enabled or os.geteuid() != 0:
        return
    try:
        keep_away_from_init()
    except (OSError, RuntimeError) as error:
        log.warning("running as root without the filter that keeps PID 1 out of reach "
                    "(docs/privileges.md): %s", error)


def keep_away_from_init() -> None:
    """For every thread and future child; OSError or RuntimeError when it cannot."""
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
