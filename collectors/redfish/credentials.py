"""The iLO login, read from a file that only root may read. Never logged, never in a message.

The file is TOML with exactly two keys::

    username = "monitor"
    password = 'the password'
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from smartarray_agent.common.trust import ANY_ACCESS_BY_OTHERS, distrust


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
    found = distrust(info, kind="file", owners=(0, os.geteuid()),
                     forbidden=ANY_ACCESS_BY_OTHERS)
    if found is None:
        return
    if found.what == "owner":
        raise CredentialsError(
            f"credentials file {path} belongs to uid {found.uid}; it must belong to root "
            f"(chown root: {path})"
        )
    if found.what == "mode":
        raise CredentialsError(
            f"credentials file {path} has mode {found.mode:04o}: group or others may access "
            f"it; it must be readable only by root (chmod 600 {path})"
        )
    raise CredentialsError(f"credentials file {path} is not a regular file")


def load_credentials(path: Path) -> Credentials:
    """The user name and password in ``path``, after :func:`check_private`."""
    import tomllib  # here: [redfish] settings need only check_private

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
