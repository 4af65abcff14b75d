"""The ``[probe]`` table: the allow-list's patterns, the modules (the ``[redfish]`` login
keys), the bounds, the file:line errors, and root's trust rules for the modules' files."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from smartarray_agent.config import ConfigError, load_config

from .redfish_ilo import certificate, credentials_file

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the trust rules apply to root")


@pytest.fixture
def private(tmp_path) -> Path:
    """A directory only root can write, as /etc is."""
    directory = tmp_path / "etc"
    directory.mkdir(mode=0o755)
    return directory


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value.problems


def test_a_probe_table_with_relative_paths(private):
    credentials_file(private)
    path = private / "config.toml"
    path.write_text('[probe]\ntargets = ["ILO-*.Example.net", "10.1.2.3:8443", "[FE80::1]"]\n'
                    "max_sessions = 2\n\n[probe.modules.default]\n"
                    'credentials_file = "ilo-credentials.toml"\n')
    probe = load_config(path).probe
    assert probe is not None
    assert probe.targets == ["ilo-*.example.net:443", "10.1.2.3:8443", "[fe80::1]:443"]
    assert (probe.max_sessions, probe.timeout_s, probe.min_interval_s,
            probe.refresh_timeout_s) == (2, 9.0, 60.0, 60.0)
    module = probe.modules["default"]
    assert module.credentials_file == private / "ilo-credentials.toml"
    assert module.verify_tls and module.ca_file is None


def test_probe_problems_are_named_with_their_line(private):
    creds = credentials_file(private)
    path = private / "config.toml"
    path.write_text('[probe]\ntargets = ["*", "ilo/1"]\ntimeout_s = 0\nmax_sessions = 2000\n'
                    f'[probe.modules."a b"]\ncredentials_file = "{creds}"\n')
    assert problems(path) == [
        f"{path}:2: probe.targets.0: '*' would allow any host: name the iLOs",
        f"{path}:2: probe.targets.1: 'ilo/1' is not a host[:port] pattern such as "
        "'ilo-*.example.net', '10.1.2.3:443' or '10.99.0.0/24'",
        f"{path}:3: probe.timeout_s: Input should be greater than 0 (got 0)",
        f"{path}:4: probe.max_sessions: Input should be less than or equal to 1024 (got 2000)",
        f"{path}:5: probe.modules: module name 'a b': use letters, digits, _ and - only",
    ]
    path.write_text('[probe]\ntargets = ["ilo-1"]\nrefresh_timeout_s = 601\n'
                    '[probe.modules.default]\n'
                    f'credentials_file = "{creds}"\naddress = "ilo-1"\nread_timeout_s = 601\n')
    assert problems(path) == [
        f"{path}:3: probe.refresh_timeout_s: Input should be less than or equal to 600 "
        "(got 601)",
        f"{path}:6: probe.modules.default.address: unknown key",
        f"{path}:7: probe.modules.default.read_timeout_s: Input should be less than or equal "
        "to 600 (got 601)",
    ]


def test_address_patterns_are_addresses_and_cidr_ranges(private):
    """An address pattern admits addresses alone: a glob on a dotted quad would also admit
    names (``10.99.0.*`` matched ``10.99.0.5.evil.test``), so ranges are CIDR (issue #39
    item 1)."""
    creds = credentials_file(private)
    path = private / "config.toml"
    module = f'[probe.modules.default]\ncredentials_file = "{creds}"\n'
    path.write_text('[probe]\ntargets = ["10.99.0.0/24", "10.1.2.3/32:8443", "[FD00::/64]:*",'
                    ' "ilo-?.example.net"]\n' + module)
    probe = load_config(path).probe
    assert probe is not None
    assert probe.targets == ["10.99.0.0/24:443", "10.1.2.3:8443", "[fd00::/64]:*",
                             "ilo-?.example.net:443"]
    path.write_text('[probe]\ntargets = ["10.99.0.*", "10.99.?.1:443", "10.1.2", "010.1.2.3",'
                    ' "10.99.0.1/24", "0.0.0.0/0", "[fd00::*]"]\n' + module)
    assert problems(path) == [
        f"{path}:2: probe.targets.0: '10.99.0.*' is not an address: give an address range "
        "as CIDR, such as '10.99.0.0/24'",
        f"{path}:2: probe.targets.1: '10.99.?.1:443' is not an address: give an address range "
        "as CIDR, such as '10.99.0.0/24'",
        f"{path}:2: probe.targets.2: '10.1.2' is not an address: give an address range "
        "as CIDR, such as '10.99.0.0/24'",
        f"{path}:2: probe.targets.3: '010.1.2.3' is not an address: give an address range "
        "as CIDR, such as '10.99.0.0/24'",
        f"{path}:2: probe.targets.4: '10.99.0.1/24' has host bits set: the range is "
        "'10.99.0.0/24'",
        f"{path}:2: probe.targets.5: '0.0.0.0/0' would allow any host: name the iLOs",
        f"{path}:2: probe.targets.6: '[fd00::*]' is not an address: give an address range "
        "as CIDR, such as '10.99.0.0/24'",
    ]


def test_a_probe_table_needs_targets_and_a_module(private):
    path = private / "config.toml"
    path.write_text("[probe]\ntargets = []\n")
    assert problems(path) == [
        f"{path}:1: probe.modules: required but not given",
        f"{path}:2: probe.targets: must not be empty",
    ]


@as_root
def test_root_refuses_module_files_others_can_change(private, tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o777)
    theirs.chmod(0o777)
    creds = credentials_file(theirs)
    ca = private / "ca.pem"
    ca.write_bytes(certificate()[0].read_bytes())
    ca.chmod(0o666)
    path = private / "config.toml"
    path.write_text('[probe]\ntargets = ["ilo-1"]\n[probe.modules.default]\n'
                    f'credentials_file = "{creds}"\nca_file = "{ca}"\n')
    assert problems(path) == [
        f"{path}:4: probe.modules.default.credentials_file: refused: {theirs} is writable by "
        "everyone (mode 0777): only root may be able to change what root reads and runs",
        f"{path}:5: probe.modules.default.ca_file: refused: {ca} is writable by everyone "
        "(mode 0666): only root may be able to change what root reads and runs",
    ]


def test_the_packaged_probe_example_loads_and_shows_the_defaults(private):
    """packaging/config.toml's commented [probe] table, made live with files that exist."""
    packaged = (Path(__file__).resolve().parents[1] / "packaging" / "config.toml").read_text()
    start = packaged.index("# [probe]\n")
    example = packaged[start:packaged.index("\n\n", start)]
    live = "\n".join(line[2:] for line in example.splitlines()
                     if line.startswith("# [") or re.match(r"# [a-z_]+ = ", line))
    creds = credentials_file(private)
    ca = private / "ilo-ca.pem"
    ca.write_bytes(certificate()[0].read_bytes())
    live = live.replace("/etc/smartarray-agent/ilo-credentials.toml", str(creds)).replace(
        "/etc/smartarray-agent/ilo-ca.pem", str(ca))
    path = private / "config.toml"
    path.write_text(live)
    probe = load_config(path).probe
    assert probe is not None and probe.targets == ["ilo-*.example.net:443", "10.1.2.3:443"]
    fields = type(probe).model_fields
    for name in ("timeout_s", "max_sessions", "min_interval_s"):
        assert getattr(probe, name) == fields[name].default, name
    assert probe.modules["default"].verify_tls is True
