"""The agent's configuration: ``/etc/smartarray-agent/config.toml`` by default.

Every section and key is optional; unknown keys are errors. docs/agent.md lists them with
their defaults. Relative paths in the file are relative to the file's own directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from smartarray_agent.collectors.redfish.settings import RedfishSettings, RedfishTable
from smartarray_agent.common.configfile import (
    ConfigError,
    Document,
    FilePath,
    Settings,
    named_paths,
    read_document,
    refuse_untrusted,
    validate,
)
from smartarray_agent.locations import CONFIG_FILE
from smartarray_agent.probe.settings import ProbeConfig

DEFAULT_PATH = Path(CONFIG_FILE)
# Loopback: the metrics name every controller, drive serial and firmware of the host, so
# nothing is exposed until an operator chooses an address (and a web config with TLS and
# basic auth). Port: see docs/agent.md, "Listen address".
DEFAULT_LISTEN_ADDRESS = "127.0.0.1:9712"


HOUR_S = 3600.0
DAY_S = 86400.0
CONSOLE_GONE = ("[ssacli] console is ignored, remove it: a console kept open between "
                "collections held the host's vendor CLI, refusing every other user, to save "
                "one CLI start a round; each collection now opens its console and closes it")


def _known_scenario(value: str, info: ValidationInfo) -> str:
    """A bundled scenario's name, or a scenario file (relative: beside the configuration)."""
    from smartarray_agent.simulator import ScenarioError, resolve_scenario

    base = (info.context or {}).get("base")
    if base is not None and (base / value).is_file():
        value = str(base / value)
    try:
        resolve_scenario(value)
    except ScenarioError as error:
        raise ValueError(str(error).splitlines()[0]) from None
    return value


def _listen_address(value: str) -> str:
    parse_listen_address(value)
    return value


def check_telemetry_path(value: str) -> str:
    """``value`` if it can be where the metrics are served: an absolute path without spaces
    or a query, other than ``/`` and ``/-/healthy``; ValueError says why not."""
    if not value.startswith("/") or any(char.isspace() or char in "?#" for char in value):
        raise ValueError(f"{value!r} is not a path such as /metrics")
    if value in ("/", "/-/healthy"):
        raise ValueError(f"{value} is the endpoint's own page")
    return value


Percent = Annotated[float, Field(ge=0, le=100)]
Timeout = Annotated[float, Field(gt=0, le=HOUR_S)]


class SsacliConfig(Settings):
    """``[ssacli]``: the vendor CLI (or the simulator), its timeout and the host lock."""

    path: FilePath | None = None  # the vendor CLI; default: discovered
    # a simulator scenario name or file, instead of the CLI
    simulate: Annotated[str, AfterValidator(_known_scenario)] | None = None
    timeout_s: Timeout = 120.0
    console: bool | None = None  # gone (CONSOLE_GONE): accepted, so that an older file loads
    lock_file: FilePath | None = None  # default: vendor.host_lock_path
    lock_wait_s: Annotated[float, Field(ge=0, le=HOUR_S)] = 30.0

    @model_validator(mode="after")
    def _one_cli(self) -> SsacliConfig:
        if self.path is not None and self.simulate is not None:
            raise ValueError("path and simulate exclude each other")
        return self


class CollectConfig(Settings):
    """``[collect]``: how often the agent collects, and how long values stay good."""

    interval_s: Annotated[float, Field(ge=1, le=DAY_S)] = 60.0
    # Last good values are served until they are this old, then dropped; default:
    # 3 intervals plus one vendor CLI timeout (Config.stale_after).
    stale_after_s: Annotated[float, Field(gt=0, le=7 * DAY_S)] | None = None

    @field_validator("stale_after_s")
    @classmethod
    def _not_before_the_next_round(cls, value: float | None,
                                   info: ValidationInfo) -> float | None:
        interval = info.data.get("interval_s")
        if value is not None and interval is not None and value < interval:
            raise ValueError(f"must be at least interval_s ({interval:g}), or the values "
                             "would be dropped between collections")
        return value


class WebSection(Settings):
    """``[web]``: where the metrics are served, and with what TLS and basic auth."""

    listen_address: Annotated[str, AfterValidator(_listen_address)] = DEFAULT_LISTEN_ADDRESS
    config_file: FilePath | None = None  # exporter-toolkit web config: TLS, basic auth
    telemetry_path: Annotated[str, AfterValidator(check_telemetry_path)] = "/metrics"
    # Privilege separation: ``run`` writes the exposition here instead of listening, and
    # ``smartarray-agent serve`` (unprivileged) answers HTTP from it.
    publish_dir: FilePath | None = None

    @property
    def address(self) -> tuple[str, int]:
        return parse_listen_address(self.listen_address)


class SysfsConfig(Settings):
    """``[sysfs]``: the kernel's view of the arrays, and its udev events."""

    enabled: bool = True
    udev_debounce_s: Annotated[float, Field(ge=0, le=300)] = 2.0


class PolicyConfig(Settings):
    """``[policy]``: when write cache counts as protected, and what to do if not."""

    battery_threshold_percent: Percent = 80.0
    disable_unprotected_write_cache: bool = False
    enable_without_ilo_charge: bool = False  # write cache on though the iLO cannot be read


class AuditConfig(Settings):
    """``[audit]``: where every change is recorded."""

    file: FilePath | None = None  # default: /var/lib/smartarray-agent/audit.jsonl (root)

    @property
    def path(self) -> Path:
        from smartarray_agent.write.audit import default_audit_file

        return self.file if self.file is not None else default_audit_file()


class CheckConfig(Settings):
    """``[check]``: thresholds of ``smartarray-agent check`` (the flags win)."""

    charge_warning_percent: Percent = 90.0
    # default: [policy] battery_threshold_percent, what the interlock calls protected
    charge_critical_percent: Percent | None = None


class Config(Settings):
    """The whole file; every section has defaults, ``[redfish]`` alone is off without it."""

    ssacli: SsacliConfig = SsacliConfig()
    collect: CollectConfig = CollectConfig()
    web: WebSection = WebSection()
    sysfs: SysfsConfig = SysfsConfig()
    policy: PolicyConfig = PolicyConfig()
    audit: AuditConfig = AuditConfig()
    check: CheckConfig = CheckConfig()
    redfish: RedfishTable | None = None  # the iLO login; with an address, its charge is read
    probe: ProbeConfig | None = None  # /probe for other hosts' iLOs; off without the table

    @property
    def warnings(self) -> list[str]:
        """What the file sets that is ignored: ``config check`` and the daemon say it."""
        return [CONSOLE_GONE] if self.ssacli.console is not None else []

    @property
    def own_ilo(self) -> RedfishSettings | None:
        """The host's own iLO, whose battery charge the agent reads: ``[redfish]`` with an
        address; None without the table or the address."""
        return None if self.redfish is None else self.redfish.own_ilo

    @property
    def stale_after(self) -> float:
        """How old the last good values may be before they are dropped: ``stale_after_s``,
        else 3 intervals plus one CLI timeout, so that neither one slow collection nor one
        failed one drops them (300 s with the defaults)."""
        collect = self.collect
        if collect.stale_after_s is not None:
            return collect.stale_after_s
        return 3 * collect.interval_s + self.ssacli.timeout_s


@dataclass(frozen=True)
class Overrides:
    """Command-line options that win over the configuration file, on reloads too."""

    simulate: str | None = None
    cli_path: Path | None = None
    listen_address: str | None = None
    web_config_file: Path | None = None
    telemetry_path: str | None = None
    timeout_s: float | None = None
    lock_file: Path | None = None

    def apply(self, config: Config) -> Config:
        """``config`` with the options laid over it: each was checked as it was parsed
        (cli/options.py, cli/context.py), and a copy checks nothing."""
        ssacli: dict[str, object] = {}
        if self.simulate is not None:
            ssacli |= {"simulate": self.simulate, "path": None}
        if self.cli_path is not None:
            ssacli |= {"path": self.cli_path, "simulate": None}
        if self.timeout_s is not None:
            ssacli["timeout_s"] = self.timeout_s
        if self.lock_file is not None:
            ssacli["lock_file"] = self.lock_file
        web: dict[str, object] = {}
        if self.listen_address is not None:
            web["listen_address"] = self.listen_address
        if self.web_config_file is not None:
            web["config_file"] = self.web_config_file.absolute()
        if self.telemetry_path is not None:
            web["telemetry_path"] = self.telemetry_path
        return config.model_copy(update={"ssacli": config.ssacli.model_copy(update=ssacli),
                                         "web": config.web.model_copy(update=web)})


def parse_listen_address(text: str) -> tuple[str, int]:
    """``host:port``, ``[ipv6]:port`` or ``:port`` (every IPv4 address)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        raise ValueError(f"{text!r} is not host:port")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"{text!r}: write an IPv6 address in brackets, [{host}]:{port}")
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{text!r}: the port must be a number from 0 to 65535")
    return host or "0.0.0.0", int(port)


def load_config(path: Path) -> Config:
    """The validated configuration in ``path``; ConfigError lists ``file:line: key: problem``."""
    document = read_document(path)
    config = validate(document, Config)
    if os.geteuid() == 0:
        _refuse_untrusted(document, config)
    return config


def _refuse_untrusted(document: Document, config: Config) -> None:
    """Root runs the CLI, reads the credentials and web config, writes the lock and the
    audit log where the file says: each must be out of other users' reach."""
    # root writes the files in publish_dir: the directory must be root's alone
    named = [(location, path / "file" if location == ("web", "publish_dir") else path)
             for location, path in named_paths(config)]
    simulate = config.ssacli.simulate  # a scenario file, or a bundled scenario's name
    if simulate is not None and Path(simulate).is_file():
        named.append((("ssacli", "simulate"), Path(simulate)))
    refuse_untrusted(document, named)


def load_or_default(path: Path | None) -> Config:
    """``path`` when given; else the default file when it exists; else the defaults."""
    if path is not None:
        return load_config(path)
    if DEFAULT_PATH.exists():
        return load_config(DEFAULT_PATH)
    return Config()


__all__ = ["Config", "ConfigError", "DEFAULT_PATH", "Overrides", "load_config",
           "load_or_default"]
