"""The iLO login, read from a file that only root may read. Never logged, never in a message.

The file is TOML with exactly two keys::

    username = "monitor"
    password = 'the password'
"""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


class CredentialsError(ValueError):
    """The credentials file is missing, too open or malformed. The message never holds the
    password."""


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str = field(repr=False)


def check_private(path: Path) -> None:
    """Refuse a file that is missing, not a regular file, owned by another user than root (or
    the agent's own user), or has any group or other permission bit."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise CredentialsError(f"credentials file {path} does not exist") from None
    except OSError as error:
        raise CredentialsError(f"cannot stat credentials file {path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise CredentialsError(f"credentials file {path} is not a regular file")
    if info.st_uid not in (0, os.geteuid()):
        raise CredentialsError(
            f"credentials file {path} belongs to uid {info.st_uid}; it must belong to root "
            f"(chown root: {path})"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise CredentialsError(
            f"credentials file {path} has mode {mode:04o}: group or others may access it; "
            f"it must be readable only by root (chmod 600 {path})"
        )


def load_credentials(path: Path) -> Credentials:
    """The user name and password in ``path``, after :func:`check_private`."""
    check_private(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise CredentialsError(f"cannot read credentials file {path}: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        raise CredentialsError(
            f"credentials file {path} is not TOML of the form: username = \"...\" and "
            f"password = \"...\""
        ) from None
    unknown = sorted(set(data) - {"username", "password"})
    if unknown:
        raise CredentialsError(f"credentials file {path}: unknown key(s) {', '.join(unknown)}")
    for key in ("username", "password"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise CredentialsError(f"credentials file {path}: {key} must be a non-empty string")
    return Credentials(data["username"], data["password"])
