"""``smartarray-agent run``: the endpoint, the collection loop and the signals that steer
them (docs/agent.md). The main thread only reads signal numbers from a wakeup pipe, so that
no handler runs into a lock."""

from __future__ import annotations

import ipaddress
import logging
import os
import signal
from pathlib import Path
from typing import Any

from prometheus_client import ProcessCollector

from smartarray_agent.collectors.ssacli.processes import end_groups, processes
from smartarray_agent.common.configfile import ConfigError, handed_over
from smartarray_agent.common.confine import confine_root
from smartarray_agent.config import Config, Overrides, load_or_default
from smartarray_agent.daemon.loop import CollectionLoop
from smartarray_agent.daemon.notify import Notifier
from smartarray_agent.exporter.publish import Publisher
from smartarray_agent.exporter.render import MetricSettings
from smartarray_agent.exporter.server import ExporterServer
from smartarray_agent.exporter.view import MetricsView
from smartarray_agent.exporter.webconfig import WebSecurity, load_web_config
from smartarray_agent.sources import build_collectors, build_enforce

log = logging.getLogger(__name__)

STOP_GRACE_S = 2.5
KILL_GRACE_S = 1.0
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StartError(RuntimeError):
    """Cannot serve: the address in use, permission denied."""


def web_security(config: Config) -> WebSecurity:
    """The web config's TLS and users; read from systemd's credentials directory where the
    unit hands it over there under its name (``LoadCredential=web.yml:/etc/smartarray-agent/
    web.yml``, and the files it names): the unprivileged serve cannot read root's key."""
    if config.web.config_file is None:
        return WebSecurity()
    return load_web_config(handed_over(config.web.config_file))


class Agent:
    def __init__(self, config_path: Path | None, overrides: Overrides, notifier: Notifier):
        self.config_path = config_path
        self.overrides = overrides
        self.notifier = notifier
        self.config = self._load()  # ConfigError leaves here
        self.security = web_security(self.config)
        self.view = MetricsView(MetricSettings(stale_after_s=self.config.stale_after),
                                extra=(ProcessCollector(registry=None),))
        collectors = build_collectors(self.config)
        self.loop = CollectionLoop(
            collectors, self.view, notifier,
            interval_s=self.config.collect.interval_s,
            debounce_s=self.config.sysfs.udev_debounce_s,
            enforce=build_enforce(self.config, collectors),
        )
        self.server: ExporterServer | Publisher | None = None
        self._previous_handlers: dict[int, Any] = {}
        self._previous_wakeup_fd = -1
        self._wakeup_r, self._wakeup_w = os.pipe()  # signal numbers, read as they come
        os.set_blocking(self._wakeup_w, False)  # as set_wakeup_fd needs

    def _load(self) -> Config:
        config = self.overrides.apply(load_or_default(self.config_path))
        for warning in config.warnings:
            log.warning("%s", warning)
        return config

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        """As root out of PID 1's reach first (confine.py); the signals caught before READY
        can be sent; then serve and collect."""
        confine_root()
        self._previous_handlers = {
            sig: signal.signal(sig, _note) for sig in (*_STOP_SIGNALS, signal.SIGHUP)}
        self._previous_wakeup_fd = signal.set_wakeup_fd(self._wakeup_w)
        address, publish_dir = self.config.web.address, self.config.web.publish_dir
        try:
            self.server = (Publisher(publish_dir, self.view.body, self.security)
                           if publish_dir is not None else
                           ExporterServer(address, self.view.body, self.security,
                                          telemetry_path=self.config.web.telemetry_path))
        except OSError as error:
            where = (f"publish to {publish_dir}" if publish_dir is not None
                     else f"listen on {self.config.web.listen_address}")
            raise StartError(f"cannot {where}: {error.strerror or error}") from None
        self.server.start()
        log.info("listening on %s", self.server.url)
        if publish_dir is None and not _loopback(address[0]) and (
                self.security.tls is None or self.security.auth is None):
            log.warning("listening beyond loopback (%s) without TLS and basic auth: anyone "
                        "who reaches it reads every controller, drive serial and firmware; "
                        "set [web] config_file (docs/agent.md, Web config)",
                        self.config.web.listen_address)
        if self.config.probe is not None:
            log.warning("[probe] is answered by `smartarray-agent serve` only: this agent "
                        "answers /probe with 404 (docs/fleet.md)")
        # Before the loop starts: its first round sends READY with the real status, which
        # nothing older may overwrite.
        self.notifier.status(f"serving on {self.server.url}, first collection running")
        self.loop.start()

    def serve_until_stopped(self) -> None:
        """Handle signals until SIGTERM or SIGINT, then stop (the main thread)."""
        try:
            while True:
                for signum in os.read(self._wakeup_r, 64):
                    if signum in _STOP_SIGNALS:
                        log.info("%s: stopping", signal.Signals(signum).name)
                        return
                    self.reload()
        finally:
            self.stop()

    def stop(self) -> None:
        """Put back the signal handling, then stop serving and collecting."""
        if self._previous_handlers:
            signal.set_wakeup_fd(self._previous_wakeup_fd)
            for sig, handler in self._previous_handlers.items():
                signal.signal(sig, handler)
            self._previous_handlers = {}
        self.notifier.stopping()
        if self.server is not None:
            self.server.stop()
        self.loop.stop()
        if not self.loop.join(STOP_GRACE_S):  # end the vendor CLI with its process group
            children = [entry.pid for entry in processes() if entry.ppid == os.getpid()]
            end_groups(children)
            log.warning("a collection was still running: ended %d vendor process(es)",
                        len(children))
            self.loop.join(KILL_GRACE_S)
        for fd in (self._wakeup_r, self._wakeup_w):
            os.close(fd)

    # -- SIGHUP ----------------------------------------------------------------------------
    def reload(self) -> None:
        """Apply the configuration file again; a bad one is logged and the running
        configuration stays. The listen address only changes with a restart."""
        self.notifier.reloading()
        try:
            config = self._load()
            security = web_security(config)
        except ConfigError as error:
            log.error("reload failed, the running configuration stays:\n%s", error)
            self.notifier.ready("reload failed, running configuration kept")
            return
        if config.web.listen_address != self.config.web.listen_address:
            log.warning("listen_address %s takes effect at the next restart",
                        config.web.listen_address)
            config = config.model_copy(update={"web": config.web.model_copy(
                update={"listen_address": self.config.web.listen_address})})
        if self.server is not None:
            self.server.security = security
        self.view.configure(MetricSettings(stale_after_s=config.stale_after))
        collectors = None
        if _collector_inputs(config) != _collector_inputs(self.config):
            collectors = build_collectors(config)
        self.loop.reconfigure(
            collectors, config.collect.interval_s, config.sysfs.udev_debounce_s,
            build_enforce(config, collectors) if collectors is not None else None,
        )
        self.config = config
        log.info("configuration reloaded")
        self.notifier.ready("configuration reloaded")


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _collector_inputs(config: Config) -> tuple[object, ...]:
    """The sections the collectors are built from: a change in any of them rebuilds them
    (the guard's policy and audit file, the iLO, the CLI, sysfs)."""
    return (config.ssacli, config.sysfs, config.policy, config.audit, config.redfish)


def _note(signum: int, frame: object) -> None:
    """Nothing: the signal's number goes through the wakeup pipe."""
