"""The iLO login, read from a file that only root may read. Never logged, never in a message.

The file is TOML with exactly two keys::

    username = "monitor"
    password = 'the password'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from smartarray_agent.common.configfile import secret_problem


class CredentialsError(ValueError):
    """The credentials file is missing, too open or malformed. The message never holds the
    password."""


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str = field(repr=False)


def check_private(path: Path) -> None:
    """Refuse a file that is missing or may not hold a secret (:func:`secret_problem`: it must
    belong to root or the agent's own user and give its group and others no access)."""
    problem = secret_problem(path)
    if problem is None and not path.exists():
        problem = f"{path} does not exist"
    if problem is not None:
        raise CredentialsError(f"credentials file {problem}")


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
