"""``smartarray-agent serve``: the HTTP endpoint alone, without privileges (cli/serving.py
runs it, imported when the command runs)."""

import logging

from smartarray_agent.cli.context import web_overrides
from smartarray_agent.cli.options import ConfigFile, Listen, TelemetryPath, WebConfigFile


def serve(config: ConfigFile = None, listen: Listen = None,
          web_config_file: WebConfigFile = None, telemetry_path: TelemetryPath = None) -> None:
    """Serve the metrics that 'run' publishes in [web] publish_dir, without privileges."""
    from smartarray_agent.cli.serving import serve_published
    from smartarray_agent.daemon.logs import setup_logging

    setup_logging(logging.INFO)
    serve_published(config, web_overrides(listen, web_config_file, telemetry_path))
