"""The ``[probe]`` table (:class:`ProbeConfig`, which agent/config.py reads as its section),
``/probe``'s targets and the table's target patterns, and which targets a pattern admits
(docs/fleet.md, "Safe"): an address or a CIDR range admits the addresses in it, compared as
addresses, never as text; a host name pattern with fnmatch wildcards, the names it matches.
A wildcard on an address (``10.99.0.*``), and a number the resolver would take for an
address though it is not one written out (``10.1.2``, ``0x0a.1.2.3``), are refused: as text
they would match a name anyone can make resolve to a host of theirs.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Annotated

from pydantic import AfterValidator, Field, field_validator

from smartarray_agent.collectors.redfish.settings import DEFAULT_PORT, IloLogin
from smartarray_agent.common.configfile import Settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# a host name or IPv4 address, or an IPv6 address in brackets; then an optional port
_TARGET = re.compile(r"([A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::([0-9]{1,5}))?")
_NAME_PATTERN = re.compile(r"[a-z0-9.*?-]{1,253}")
_NUMERIC_PATTERN = re.compile(r"[0-9.*?]+")  # no letter, no hyphen: meant as an address
_PORT_PATTERN = re.compile(r"[0-9*?]{1,5}")
CIDR_HINT = "give an address range as CIDR, such as '10.99.0.0/24'"
_MODULE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class Target:
    """A probe's ``host:port``: ``address`` when the host is an IP address, else None."""

    host: str  # lower-cased; an IPv6 address without its brackets
    port: int
    address: Address | None

    def __str__(self) -> str:
        return _joined(self.host, str(self.port))

    @classmethod
    def parse(cls, text: str) -> Target:
        """``text``, ``host[:port]`` (an IPv6 address in brackets; no user, scheme or path);
        ValueError says why it is not a target."""
        given = _TARGET.fullmatch(text)
        if given is None:
            raise ValueError("give HOST[:PORT], a host name or IP address")
        host, port = given.group(1).lower(), int(given.group(2) or DEFAULT_PORT)
        if not 0 < port < 65536:
            raise ValueError("the port is not a number from 1 to 65535")
        if host.startswith("["):
            try:
                address: Address | None = ipaddress.IPv6Address(host[1:-1])
            except ValueError:
                raise ValueError(f"{host} is not an IPv6 address") from None
        else:
            try:
                address = ipaddress.IPv4Address(host)
            except ValueError:
                address = None
        if address is not None:
            return cls(address.compressed, port, address)
        if _resolves_as_number(host):
            raise ValueError(f"{host!r} is not an address: write an IPv4 address as four "
                             "decimal numbers, such as 10.1.2.3")
        return cls(host, port, None)


@dataclass(frozen=True)
class TargetPattern:
    """A ``[probe] targets`` entry: ``network`` (an address is a range of one) or ``name``,
    a host name pattern; ``port``, a port pattern."""

    network: Network | None
    name: str | None
    port: str

    def __str__(self) -> str:
        if self.network is None:
            return _joined(str(self.name), self.port)
        network = self.network
        host = (network.network_address.compressed
                if network.prefixlen == network.max_prefixlen else network.compressed)
        return _joined(host, self.port)

    def admits(self, target: Target) -> bool:
        """Whether ``target`` is of this pattern's kind and matches it."""
        if not fnmatchcase(str(target.port), self.port):
            return False
        if self.network is not None:
            return target.address is not None and target.address in self.network
        return target.address is None and fnmatchcase(target.host, str(self.name))

    @classmethod
    def parse(cls, value: str) -> TargetPattern:
        """``value``, ``host[:port]`` (the host an address, a CIDR range or a name pattern);
        ValueError says why it is not one."""
        text = value.strip().lower()
        if text.startswith("[") and "]" in text:
            host, _, rest = text[1:].partition("]")
            if rest and not rest.startswith(":"):
                raise ValueError(_not_a_pattern(value))
            port = rest[1:] if rest else str(DEFAULT_PORT)
            bracketed = True
        else:
            host, sep, port = text.partition(":")
            port = port if sep else str(DEFAULT_PORT)
            bracketed = False
        if not _PORT_PATTERN.fullmatch(port):
            raise ValueError(_not_a_pattern(value))
        network = _network(value, host)
        if network is not None:
            if bracketed != (network.version == 6):
                raise ValueError(_not_a_pattern(value))
            if network.prefixlen == 0:
                raise ValueError(f"{value!r} would allow any host: name the iLOs")
            return cls(network, None, port)
        if not bracketed and _NAME_PATTERN.fullmatch(host) and not host.strip("*?."):
            raise ValueError(f"{value!r} would allow any host: name the iLOs")
        if bracketed or _NUMERIC_PATTERN.fullmatch(host) or _resolves_as_number(host):
            raise ValueError(f"{value!r} is not an address: {CIDR_HINT}")
        if not _NAME_PATTERN.fullmatch(host):
            raise ValueError(_not_a_pattern(value))
        return cls(None, host, port)


def target_pattern(value: str) -> str:
    """A ``[probe] targets`` entry as its normal ``host:port`` text (host lower-cased, port
    443 when not given); ValueError says why it is not one."""
    return str(TargetPattern.parse(value))


def _network(value: str, host: str) -> Network | None:
    """``host`` as an address or CIDR range; None when it is neither (a name pattern)."""
    try:
        return ipaddress.ip_network(host)
    except ValueError:
        pass
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        if "/" in host:
            raise ValueError(_not_a_pattern(value)) from None
        return None
    raise ValueError(f"{value!r} has host bits set: the range is '{network.compressed}'")


def _resolves_as_number(host: str) -> bool:
    """Whether the resolver (inet_aton) takes ``host`` for an IPv4 address."""
    try:
        socket.inet_aton(host)
    except OSError:
        return False
    return True


def _joined(host: str, port: str) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _not_a_pattern(value: str) -> str:
    return (f"{value!r} is not a host[:port] pattern such as 'ilo-*.example.net', "
            "'10.1.2.3:443' or '10.99.0.0/24'")


class ProbeModule(IloLogin):
    """``[probe.modules.NAME]``: how ``/probe?module=NAME`` logs in to an iLO; the keys of
    ``[redfish]`` except ``address`` (the probe names the target) and the schedule."""


def _some(value: list | dict) -> list | dict:
    if not value:
        raise ValueError("must not be empty")
    return value


class ProbeConfig(Settings):
    """``[probe]``: ``/probe?target=HOST[:PORT]&module=NAME`` reads an iLO for Prometheus."""

    targets: Annotated[list[Annotated[str, AfterValidator(target_pattern)]],
                       Field(max_length=10000), AfterValidator(_some)]
    modules: Annotated[dict[str, ProbeModule], Field(max_length=100), AfterValidator(_some)]
    # below Prometheus' scrape_timeout (10 s by default): how long a target's first probe
    # waits for its first read; later probes are answered at once from the last read
    timeout_s: Annotated[float, Field(gt=0, le=120)] = 9.0
    # one read of an iLO, login to logout, in the background (a dozen requests of 1-3 s)
    refresh_timeout_s: Annotated[float, Field(gt=0, le=600)] = 60.0
    max_sessions: Annotated[int, Field(ge=1, le=1024)] = 4  # iLO sessions open at once
    # a target is logged in to at most once in this time (a day at most); probes within it
    # get the last answer
    min_interval_s: Annotated[float, Field(ge=0, le=86400)] = 60.0

    @field_validator("modules", mode="before")
    @classmethod
    def _module_names(cls, value: object) -> object:
        """Before the modules' own keys, so that a bad name is told with their problems."""
        for name in value if isinstance(value, dict) else ():
            if not isinstance(name, str) or not _MODULE_NAME.fullmatch(name):
                raise ValueError(f"module name {name!r}: use letters, digits, _ and - only")
        return value
