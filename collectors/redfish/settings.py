"""The ``[redfish]`` settings: where the iLO is, how to log in, how long to wait, how often.
:class:`IloLogin` is the login, TLS and timeout half alone, which ``[probe]`` modules reuse
(agent/config.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, model_validator

from smartarray_agent.collectors.redfish.credentials import check_private
from smartarray_agent.configfile import FilePath, Settings

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
    read_timeout_s: Annotated[float, Field(gt=0, le=600)] = 30.0


class _Address(Settings):
    address: Annotated[str, AfterValidator(_address)]


class RedfishSettings(IloLogin, _Address):  # this order: address is the first key
    """``address`` is a host name or IP, optionally with ``:port`` or an ``https://`` prefix:
    the iLO's management address, or the host-interface address of the local iLO (iLO 5's
    virtual NIC answers on ``16.1.15.1``). The agent speaks only HTTPS."""

    interval_s: Annotated[float, Field(ge=10, le=86400)] = 300.0  # at least once a day
    # how old a charge may be and still count; a week at most, as [collect] stale_after_s
    max_age_s: Annotated[float, Field(gt=0, le=7 * 86400)] = 900.0

    @model_validator(mode="after")
    def _fresh_until_the_next_read(self) -> RedfishSettings:
        if self.max_age_s < self.interval_s:
            raise ValueError(
                f"max_age_s ({self.max_age_s:g}) must be at least interval_s "
                f"({self.interval_s:g}), or every charge would be too old before the next read"
            )
        return self

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
