"""The configuration file, the web config, and ``config check``."""

from __future__ import annotations

import base64
from pathlib import Path

import bcrypt
import pytest

from smartarray_agent.cli import exitcodes
from smartarray_agent.config import (
    CONSOLE_GONE,
    DEFAULT_LISTEN_ADDRESS,
    Config,
    ConfigError,
    load_config,
    parse_listen_address,
)
from smartarray_agent.exporter.auth import BasicAuth, credentials
from smartarray_agent.exporter.webconfig import load_web_config

from .agent_cli import agent
from .secret_files import tls_files, write_secret


def write(directory: Path, name: str, text: str) -> Path:
    """``text`` in ``directory/name``, mode 0600 (web configs and keys are secrets)."""
    return write_secret(directory / name, text)


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value.problems


def web_problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_web_config(path)
    return caught.value.problems


def test_defaults():
    config = Config()
    assert config.collect.interval_s == 60 and config.stale_after == 3 * 60 + 120
    assert config.ssacli.timeout_s == 120 and config.warnings == []
    assert config.ssacli.simulate is None and config.ssacli.path is None
    assert config.web.listen_address == DEFAULT_LISTEN_ADDRESS == "127.0.0.1:9712"
    assert config.web.address == ("127.0.0.1", 9712)
    assert config.sysfs.enabled is True
    assert config.policy.battery_threshold_percent == 80
    assert config.policy.disable_unprotected_write_cache is False
    assert config.audit.file is None


def test_a_full_file_loads_and_relative_paths_follow_the_file(tmp_path):
    path = write(tmp_path, "agent.toml", """
[ssacli]
path = "bin/ssacli"
timeout_s = 30
lock_file = "run/cli.lock"
lock_wait_s = 5

[collect]
interval_s = 15
stale_after_s = 45

[web]
listen_address = "[::1]:9712"
config_file = "web.yml"

[sysfs]
enabled = false
udev_debounce_s = 1

[policy]
battery_threshold_percent = 90
disable_unprotected_write_cache = true

[audit]
file = "/var/lib/smartarray-agent/audit.jsonl"
""")
    config = load_config(path)
    assert config.ssacli.path == tmp_path / "bin/ssacli"
    assert config.ssacli.lock_file == tmp_path / "run/cli.lock"
    assert config.web.config_file == tmp_path / "web.yml"
    assert config.web.address == ("::1", 9712)
    assert config.stale_after == 45
    assert config.audit.path == Path("/var/lib/smartarray-agent/audit.jsonl")


def test_every_problem_is_named_with_its_line_and_key(tmp_path):
    path = write(tmp_path, "agent.toml", """\
[ssacli]
timeout_s = 0
bogus = 1
[collect]
interval_s = 60
stale_after_s = 30
[web]
listen_address = "9712"
[redfish]
host = "ilo"
""")
    assert problems(path) == [
        f"{path}:2: ssacli.timeout_s: Input should be greater than 0 (got 0)",
        f"{path}:3: ssacli.bogus: unknown key",
        f"{path}:6: collect.stale_after_s: must be at least interval_s (60), or the values "
        "would be dropped between collections",
        f"{path}:8: web.listen_address: '9712' is not host:port",
        f"{path}:9: redfish.credentials_file: required but not given",
        f"{path}:10: redfish.host: unknown key",
    ]


def test_types_are_strict_and_each_refusal_says_what_it_got(tmp_path):
    path = write(tmp_path, "agent.toml", """\
audit = "/var/log"
[collect]
interval_s = true
stale_after_s = "45"
[web]
listen_address = 9712
publish_dir = 3
[sysfs]
enabled = "yes"
udev_debounce_s = -1
[policy]
battery_threshold_percent = 100.5
[check]
charge_critical_percent = nan
[wat]
""")
    assert problems(path) == [
        f"{path}:1: audit: Input should be a valid dictionary or instance of "
        "AuditConfig (got '/var/log')",
        f"{path}:3: collect.interval_s: Input should be a valid number (got True)",
        f"{path}:4: collect.stale_after_s: Input should be a valid number (got '45')",
        f"{path}:6: web.listen_address: Input should be a valid string (got 9712)",
        f"{path}:7: web.publish_dir: Input should be a path (got 3)",
        f"{path}:9: sysfs.enabled: Input should be a valid boolean (got 'yes')",
        f"{path}:10: sysfs.udev_debounce_s: Input should be greater than or equal to 0 "
        "(got -1)",
        f"{path}:12: policy.battery_threshold_percent: Input should be less than or equal "
        "to 100 (got 100.5)",
        f"{path}:14: check.charge_critical_percent: Input should be a finite number "
        "(got nan)",
        f"{path}:15: wat: unknown section",
    ]


def test_an_integer_is_stored_as_a_float_and_a_path_as_a_path(tmp_path):
    path = write(tmp_path, "agent.toml", '[collect]\ninterval_s = 30\n[audit]\nfile = "a.jsonl"\n')
    config = load_config(path)
    assert type(config.collect.interval_s) is float and config.collect.interval_s == 30
    assert config.audit.path == tmp_path / "a.jsonl"


def test_a_syntax_error_names_its_line(tmp_path):
    path = write(tmp_path, "agent.toml", "[collect]\ninterval_s = 60\ninterval_s = 30\n")
    [problem] = problems(path)
    assert problem.startswith(f"{path}:3: not valid TOML: ")


def test_path_and_simulate_exclude_each_other(tmp_path):
    path = write(tmp_path, "agent.toml", '[ssacli]\npath = "/usr/sbin/ssacli"\n'
                                         'simulate = "gen10"\n')
    assert problems(path) == [f"{path}:1: ssacli: path and simulate exclude each other"]


@pytest.mark.parametrize(("text", "expected"), [
    ("127.0.0.1:9712", ("127.0.0.1", 9712)),
    (":9712", ("0.0.0.0", 9712)),
    ("[::]:0", ("::", 0)),
    ("localhost:80", ("localhost", 80)),
])
def test_listen_addresses(text, expected):
    assert parse_listen_address(text) == expected


@pytest.mark.parametrize("text", ["9712", "::1:9712", "host:port", "host:70000", "host:"])
def test_bad_listen_addresses(text):
    with pytest.raises(ValueError):
        parse_listen_address(text)


def test_web_config_in_exporter_toolkit_yaml(tmp_path):
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode().replace("$2b$", "$2y$")
    cert, key = tls_files(tmp_path)
    path = write(tmp_path, "web.yml", f"""\
tls_server_config:
  cert_file: {cert}
  key_file: {key}
  min_version: TLS13
basic_auth_users:
  prometheus: {hashed}
""")
    security = load_web_config(path)
    assert security.tls is not None and security.auth is not None


def test_web_config_in_toml_with_the_same_keys(tmp_path):
    tls_files(tmp_path)
    path = write(tmp_path, "web.toml", '[tls_server_config]\ncert_file = "server.crt"\n'
                                       'key_file = "server.key"\n')
    assert load_web_config(path).tls is not None


def test_a_web_config_handed_over_by_load_credential_finds_its_files_there(tmp_path,
                                                                           monkeypatch):
    """serve's user cannot read root's key: the unit hands it web.yml, the certificate and
    the key with LoadCredential= under their own names, and web.yml still names the paths
    under /etc that the root daemon reads."""
    etc, credentials = tmp_path / "etc", tmp_path / "credentials"
    etc.mkdir()
    credentials.mkdir()
    tls_files(credentials)
    text = f"tls_server_config:\n  cert_file: {etc}/server.crt\n  key_file: {etc}/server.key\n"
    handed = write_secret(credentials / "web.yml", text)
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(credentials))
    assert load_web_config(handed).tls is not None
    # Outside the credentials directory the names mean what they say.
    monkeypatch.delenv("CREDENTIALS_DIRECTORY")
    [problem] = web_problems(handed)
    assert problem.startswith(f"{handed}:2: tls_server_config.cert_file: cannot use it: ")


def test_config_check_reads_the_web_config_serve_is_handed(tmp_path, monkeypatch):
    """The serve unit's reload runs ``config check`` (issue #48 item 5) as serve's user, who
    reads the web config handed over in the credentials directory, not root's under /etc:
    the check judges that one, as serve does."""
    etc, credentials = tmp_path / "etc", tmp_path / "credentials"
    etc.mkdir()
    credentials.mkdir()
    write_secret(etc / "web.yml", "basic_auth_users:\n  prometheus: not-a-hash\n")
    config = write(etc, "config.toml", f'[web]\nconfig_file = "{etc}/web.yml"\n')
    assert agent("config", "check", config).returncode == exitcodes.BAD_INPUT
    handed = write_secret(credentials / "web.yml", "basic_auth_users: {}\n")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(credentials))
    assert agent("config", "check", config).stdout == f"{config}: OK\n"
    handed.write_text("basic_auth_users:\n  prometheus: plain\n")
    refused = agent("config", "check", config)
    assert refused.returncode == exitcodes.BAD_INPUT
    assert refused.stdout.startswith(f"{handed}:2: basic_auth_users.prometheus: "), refused.stdout


def test_web_config_problems(tmp_path):
    path = write(tmp_path, "web.yml", """\
tls_server_config:
  cert_file: missing.crt
  key_file: missing.key
  cipher_suites: [TLS_AES_128_GCM_SHA256]
basic_auth_users:
  alice: plain-text
""")
    assert web_problems(path) == [
        f"{path}:4: tls_server_config.cipher_suites: unknown key",
        f"{path}:6: basic_auth_users.alice: not a bcrypt hash ($2y$10$... from "
        "'htpasswd -nBC 10 \"\" | tr -d :'); plain passwords are not accepted",
    ]
    path.write_text("tls_server_config:\n  cert_file: missing.crt\n  key_file: missing.key\n")
    [problem] = web_problems(path)
    assert problem.startswith(f"{path}:2: tls_server_config.cert_file: cannot use it: ")


@pytest.mark.parametrize("cost", ["99", "03", "32", "31", "14", "13"])
def test_config_check_refuses_a_bcrypt_cost_a_login_cannot_finish(tmp_path, cost):
    """Issue #50 item 4: bcrypt refuses a cost outside 4-31 (a $2y$99$ hash made every unknown
    user's login a 500 with a traceback), and one of 31 held the single checker thread for
    hours. A login must finish in about a second: cost 12 at most (docs/agent.md)."""
    valid = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode()
    web = write(tmp_path, "w.yml", f"basic_auth_users:\n  ok: {valid}\n"
                                   f"  bob: $2y${cost}${valid[7:]}\n")
    config = write(tmp_path, "c.toml", '[web]\nconfig_file = "w.yml"\n')
    result = agent("config", "check", str(config))
    assert result.returncode == 2
    assert result.stdout.startswith(f"{web}:3: basic_auth_users.bob: bcrypt cost {int(cost)}: ")
    assert "with a cost of 4 to 12" in result.stdout


@pytest.mark.parametrize("cost", ["04", "10", "12"])
def test_config_check_takes_the_bcrypt_costs_a_login_finishes_in_time(tmp_path, cost):
    valid = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode()
    write(tmp_path, "w.yml", f"basic_auth_users:\n  bob: $2y${cost}${valid[7:]}\n")
    config = write(tmp_path, "c.toml", '[web]\nconfig_file = "w.yml"\n')
    assert agent("config", "check", str(config)).returncode == 0


@pytest.mark.parametrize("console", ["true", "false"])
def test_config_check_passes_the_gone_console_key_and_says_it_is_ignored(tmp_path, console):
    """``[ssacli] console`` kept a console open between collections, holding the host's
    vendor CLI: it is gone, and a file that sets it still loads, with a warning."""
    config = write(tmp_path, "c.toml", f"[ssacli]\nconsole = {console}\n")
    result = agent("config", "check", str(config))
    assert result.returncode == 0, result.stdout
    assert result.stdout == f"{config}: warning: {CONSOLE_GONE}\n{config}: OK\n"


def test_web_config_types(tmp_path):
    path = write(tmp_path, "web.yml", """\
tls_server_config:
  cert_file: server.crt
  key_file: ~
  min_version: TLS11
basic_auth_users:
  123: x
  bob: null
""")
    assert web_problems(path) == [
        f"{path}:3: tls_server_config.key_file: Input should be a path (got None)",
        f"{path}:4: tls_server_config.min_version: Input should be 'TLS12' or 'TLS13' "
        "(got 'TLS11')",
        f"{path}:6: basic_auth_users.123: Input should be a valid string (got 123)",
        f"{path}:6: basic_auth_users.123: not a bcrypt hash ($2y$10$... from 'htpasswd -nBC 10 "
        "\"\" | tr -d :'); plain passwords are not accepted",
        f"{path}:7: basic_auth_users.bob: Input should be a valid string (got None)",
    ]
    path.write_text("tls_server_config:\n  cert_file: a\n  key_file: b\n"
                    "  min_version: TLS13\n  max_version: TLS12\n")
    assert web_problems(path) == [
        f"{path}:1: tls_server_config: min_version TLS13 is above max_version"]


def test_basic_auth_checks_bcrypt_and_remembers_success():
    auth = BasicAuth({"prometheus": bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode()})

    def header(user: str, password: str) -> str:
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def check(header: str | None) -> bool:
        given = credentials(header)
        return given is not None and (auth.remembered(given) or auth.verify(given))

    assert check(header("prometheus", "s3cret"))
    given = credentials(header("prometheus", "s3cret"))
    assert given is not None and auth.remembered(given)
    assert not check(header("prometheus", "wrong"))
    assert not check(header("nobody", "s3cret"))
    assert not check(None)
    assert not check("Bearer abc")
    assert not check("Basic not-base64!")


def test_config_check_command(tmp_path):
    good = write(tmp_path, "good.toml", '[collect]\ninterval_s = 30\n')
    result = agent("config", "check", str(good))
    assert (result.returncode, result.stdout) == (0, f"{good}: OK\n")

    bad = write(tmp_path, "bad.toml", '[collect]\ninterval = 30\n[web]\nconfig_file = "w.yml"\n')
    result = agent("config", "check", str(bad))
    assert result.returncode == 2
    assert result.stdout == (f"{bad}:2: collect.interval: unknown key "
                             "(did you mean interval_s?)\n")

    write(tmp_path, "w.yml", "basic_auth_users:\n  bob: hunter2\n")
    web_only = write(tmp_path, "web-only.toml", '[web]\nconfig_file = "w.yml"\n')
    result = agent("config", "check", str(web_only))
    assert result.returncode == 2
    assert result.stdout.startswith(f"{tmp_path}/w.yml:2: basic_auth_users.bob: not a bcrypt")

    result = agent("config", "check", str(tmp_path / "absent.toml"))
    assert (result.returncode, result.stdout) == (2, f"{tmp_path}/absent.toml: no such file\n")


def test_config_check_lists_problems_in_line_order_and_knows_the_scenarios(tmp_path):
    bad = write(tmp_path, "bad.toml", '[ssacli]\nsimulate = "nonexistent-scenario"\n'
                                      '[collect]\ninterval_s = "often"\n[sysfs]\nwat = 1\n')
    result = agent("config", "check", str(bad))
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert [line.split(":")[1] for line in lines] == ["2", "4", "6"]
    assert "ssacli.simulate: unknown scenario 'nonexistent-scenario'" in lines[0]
