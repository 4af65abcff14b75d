"""The ``[redfish]`` settings: where the iLO is, how to log in, how long to wait, how often.
:class:`IloLogin` is the login, TLS and timeout half alone, which ``[probe]`` modules reuse
(agent/config.py); :class:`RedfishTable` is the table as written, whose address is optional;
:class:`RedfishSettings` is one iLO to read, with its address."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, model_validator

from smartarray_agent.collectors.redfish.credentials import check_private
from smartarray_agent.common.configfile import FilePath, Settings

DEFAULT_PORT = 443


def _address(value: str) -> str:
    split_address(value)
    return value.strip()


def _private(path: Path) -> Path:
    check_private(path)
    return path


def _is_file(path: Path) -> Path:
    if not path.is_file():
        raise ValueError(f"CA file {path} does not exist or is not a file")
    return path


class IloLogin(Settings):
    """How to log in to an iLO: the credentials file, the TLS trust and the timeouts."""

    credentials_file: Annotated[FilePath, AfterValidator(_private)]
    # PEM bundle to trust instead of the system store
    ca_file: Annotated[FilePath, AfterValidator(_is_file)] | None = None
    verify_tls: bool = True
    connect_timeout_s: Annotated[float, Field(gt=0, le=120)] = 5.0
    read_timeout_s: Annotated[float, Field(gt=0, le=600)] = 30.0  # each whole answer
    read_deadline_s: Annotated[float, Field(gt=0, le=3600)] = 60.0  # the whole read

    def at(self, address: str) -> RedfishSettings:
        """This login for the iLO at ``address`` (``--ilo``'s, a probe's target), checked
        as the file's table is: ValidationError names what is wrong."""
        return RedfishSettings.model_validate({**self.model_dump(), "address": address})


class _OwnIlo(Settings):
    address: Annotated[str, AfterValidator(_address)] | None = None


class RedfishTable(IloLogin, _OwnIlo):  # this order: address is the first key
    """The ``[redfish]`` table. ``address``, when given, is the host's own iLO, whose
    battery charge the agent reads: a host name or IP, optionally with ``:port`` or an
    ``https://`` prefix, or the host-interface address of the local iLO (iLO 5's virtual NIC
    answers on ``16.1.15.1``). Without it the table is the login alone, for ``--ilo``."""

    interval_s: Annotated[float, Field(ge=10, le=86400)] = 300.0  # at least once a day
    # how old a charge may be and still count; a week at most, as [collect] stale_after_s
    max_age_s: Annotated[float, Field(gt=0, le=7 * 86400)] = 900.0

    @model_validator(mode="after")
    def _fresh_until_the_next_read(self) -> RedfishTable:
        if self.max_age_s < self.interval_s:
            raise ValueError(
                f"max_age_s ({self.max_age_s:g}) must be at least interval_s "
                f"({self.interval_s:g}), or every charge would be too old before the next read"
            )
        return self

    @property
    def own_ilo(self) -> RedfishSettings | None:
        """The host's own iLO, when the table names one."""
        if self.address is None:
            return None
        return RedfishSettings.model_construct(**dict(self))  # validated above


class RedfishSettings(RedfishTable):
    """One iLO to read: the ``[redfish]`` table with its address, or the login with the
    address ``--ilo`` or a probe names. The agent speaks only HTTPS."""

    address: Annotated[str, AfterValidator(_address)]

    @property
    def host(self) -> str:
        return split_address(self.address)[0]

    @property
    def port(self) -> int:
        return split_address(self.address)[1]


def split_address(address: str) -> tuple[str, int]:
    """``host[:port]`` (or ``https://host[:port]``) as host and port (443 by default);
    ValueError says why it is not one."""
    text = address.strip()
    if "://" not in text:
        text = "https://" + text
    parts = urlsplit(text)
    if parts.scheme != "https":
        raise ValueError(f"address {address!r}: only https is supported")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"address {address!r}: put the login in credentials_file, not here")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"address {address!r}: give a host and an optional port, no path")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise ValueError(f"address {address!r}: the port is not a number from 1 to 65535") from None
    if not parts.hostname:
        raise ValueError(f"address {address!r}: no host name")
    return parts.hostname, port
