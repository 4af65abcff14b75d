"""``smartarray-agent serve``'s loop: the HTTP endpoint alone, unprivileged, answering from
what ``run`` publishes (docs/agent.md, "smartarray-agent serve"; docs/privileges.md)."""

from __future__ import annotations

import logging
import signal
from pathlib import Path

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import fail
from smartarray_agent.common.configfile import ConfigError, handed_over
from smartarray_agent.config import Config, Overrides, load_or_default
from smartarray_agent.daemon.agent import web_security
from smartarray_agent.daemon.notify import Notifier
from smartarray_agent.exporter.publish import PublishedExposition
from smartarray_agent.exporter.server import ExporterServer
from smartarray_agent.probe.prober import Prober

_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
log = logging.getLogger("smartarray_agent.serve")


def serve_published(config: Path | None, web: Overrides) -> None:
    """Serve what ``run`` publishes in the ``[web] publish_dir`` of ``config`` (the file,
    or the default one) with ``web`` laid over it, until SIGTERM or SIGINT; exits 2 for a bad
    configuration, 7 when it cannot listen."""
    loaded = _load(config, web)
    directory = loaded.web.publish_dir
    if directory is None:
        raise fail("[web] publish_dir is not set: 'run' serves HTTP itself",
                   exitcodes.BAD_INPUT)
    address = loaded.web.address
    try:
        published = PublishedExposition(directory)
    except OSError as error:
        raise fail(f"[web] publish_dir: {error.strerror or error}", exitcodes.BAD_INPUT) from None
    signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)  # before any thread starts
    try:
        server = ExporterServer(address, published.body, web_security(loaded),
                                telemetry_path=loaded.web.telemetry_path)
    except ConfigError as error:
        raise fail(f"invalid configuration:\n{error}", exitcodes.BAD_INPUT) from None
    except OSError as error:
        raise fail(f"cannot listen on {address[0]}:{address[1]}: {error.strerror or error}",
                   exitcodes.CANNOT_SERVE) from None
    server.prober = _prober(loaded)
    server.start()
    notifier = Notifier.from_environment()
    log.info("serving %s on %s", directory, server.url)
    notifier.ready(f"serving {directory} on {server.url}")
    try:
        while (received := signal.sigwait(_SIGNALS)) == signal.SIGHUP:
            notifier.reloading()
            try:
                reloaded = _load(config, web)
                server.security = web_security(reloaded)
                _swap_prober(server, _prober(reloaded))
                notifier.ready("web config reloaded")
            except (ConfigError, SystemExit):  # _load's message is printed
                notifier.ready("reload failed, running web config kept")
        log.info("%s: stopping", signal.Signals(received).name)
    finally:
        notifier.stopping()
        _swap_prober(server, None)  # its reads are cancelled on the loop, then it stops
        server.stop()


def _prober(config: Config) -> Prober | None:
    """``[probe]``'s prober, each module's files taken from systemd's credentials directory
    where the unit loads them there under the same names (``LoadCredential=ilo-credentials.
    toml:/etc/smartarray-agent/ilo-credentials.toml``): the unprivileged user cannot read
    root's."""
    probe = config.probe
    if probe is None:
        return None
    modules = {name: module.model_copy(update={
        key: handed_over(named) for key in ("credentials_file", "ca_file")
        if (named := getattr(module, key)) is not None
    }) for name, module in probe.modules.items()}
    probe = probe.model_copy(update={"modules": modules})
    return Prober(probe, config.policy.battery_threshold_percent)


def _swap_prober(server: ExporterServer, prober: Prober | None) -> None:
    """Answer /probe with ``prober`` from now on; the old one's probes under way end."""
    old, server.prober = server.prober, prober
    if old is not None:
        old.close()


def _load(path: Path | None, web: Overrides) -> Config:
    try:
        return web.apply(load_or_default(path))
    except ConfigError as error:
        raise fail(f"invalid configuration:\n{error}", exitcodes.BAD_INPUT) from None
