"""Every command loads the configuration: reading and validating it, and the web config,
must not cost the import of pydantic (#13: commands start fast), whose models stay for the
simulator's scenarios and the iLO's JSON."""

from __future__ import annotations

from pathlib import Path

import bcrypt

from .imports import modules_after, pydantic_in
from .redfish_ilo import credentials_file

PACKAGED = Path(__file__).resolve().parent.parent / "packaging" / "config.toml"
TLS = Path(__file__).with_name("tls")

# Loads the configuration as a command does, and its web config as `run` does.
PROBE = """
import sys
from smartarray_agent.cli.context import CommandContext
from smartarray_agent.exporter.webconfig import load_web_config
config = CommandContext(config_path=sys.argv[1], timeout_s=30).config
assert config.web.config_file is None or load_web_config(config.web.config_file).auth
"""


def modules_loading(path: Path) -> set[str]:
    modules = modules_after(PROBE, str(path))
    assert {"smartarray_agent.config", "smartarray_agent.cli.context"} <= modules
    return modules


def test_the_packaged_configuration_loads_without_pydantic():
    assert not pydantic_in(modules_loading(PACKAGED))


def test_every_section_and_the_web_config_load_without_pydantic(tmp_path):
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode()
    (tmp_path / "web.yml").write_text(f"tls_server_config:\n  cert_file: {TLS}/server.crt\n"
                                      f"  key_file: {TLS}/server.key\n"
                                      f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    path = tmp_path / "config.toml"
    path.write_text(f"""\
[ssacli]
simulate = "gen9-battery"
[web]
config_file = "web.yml"
[redfish]
address = "16.1.15.1"
credentials_file = "{credentials_file(tmp_path)}"
""")
    assert not pydantic_in(modules_loading(path))
