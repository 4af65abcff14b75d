"""Configuration that a hostile local user could shape (issue 17, items 5 and 7): files
others can write are refused when running as root, and every file is bounded (type, size,
depth, finite numbers), with ``file:line`` reasons, on load, on ``config check`` and on a
SIGHUP reload that must leave the daemon running."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.config import Config, ConfigError, load_config
from smartarray_agent.exporter.webconfig import load_web_config
from smartarray_agent.probe.settings import ProbeConfig
from smartarray_agent.simulator import resolve_scenario

from .agent_cli import agent as run_agent
from .agent_process import AgentInProcess, simulated
from .redfish_ilo import credentials_file
from .secret_files import tls_files, write_secret

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the trust rules apply to root")


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value.problems


@pytest.fixture
def private(tmp_path) -> Path:
    """A directory only root can write, as /etc is (pytest's own are 0700 under /tmp)."""
    directory = tmp_path / "etc"
    directory.mkdir(mode=0o755)
    return directory


# -- trust --------------------------------------------------------------------------------
@as_root
def test_a_config_file_others_can_write_is_refused(private):
    path = private / "config.toml"
    path.write_text("[collect]\ninterval_s = 30\n")
    assert load_config(path).collect.interval_s == 30  # root's, 0644, under a sticky /tmp
    path.chmod(0o646)
    assert problems(path) == [f"{path}: refused: {path} is writable by everyone (mode 0646): "
                              "only root may be able to change what root reads and runs"]
    path.chmod(0o664)
    os.chown(path, 0, NOBODY)
    assert f"{path} is writable by group {NOBODY}" in problems(path)[0]
    os.chown(path, 0, 0)
    assert load_config(path).collect.interval_s == 30  # group root may write
    os.chown(path, NOBODY, 0)
    assert f"{path} belongs to uid {NOBODY}, not root" in problems(path)[0]


@as_root
def test_a_directory_others_can_write_or_a_link_out_of_root_s_reach_is_refused(private):
    path = private / "config.toml"
    path.write_text("")
    private.chmod(0o1777)  # sticky is enough for /tmp, not for the file's own directory
    assert f"{private} is writable by everyone (mode 1777" in problems(path)[0]
    private.chmod(0o755)
    theirs = private.parent / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    (theirs / "config.toml").write_text("")
    link = private / "linked.toml"
    link.symlink_to(theirs / "config.toml")
    assert f"{theirs} belongs to uid {NOBODY}" in problems(link)[0]


@as_root
def test_files_the_config_names_must_be_root_s_too(private):
    cli = private / "ssacli"
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o757)
    path = private / "config.toml"
    path.write_text(f'[ssacli]\npath = "{cli}"\n[audit]\nfile = "/tmp/audit.jsonl"\n')
    assert problems(path) == [
        f"{path}:2: ssacli.path: refused: {cli} is writable by everyone (mode 0757): only root "
        "may be able to change what root reads and runs",
        f"{path}:4: audit.file: refused: /tmp is writable by everyone (mode 1777): only root "
        "may be able to change what root reads and runs",
    ]
    cli.chmod(0o755)
    path.write_text(f'[ssacli]\npath = "{cli}"\n')
    assert load_config(path).ssacli.path == cli


@as_root
def test_every_path_the_file_names_is_checked_relative_ones_beside_it(private):
    """A walk of the validated configuration finds what root acts on, so that no key holding
    a path is left out; a relative path is the file's directory's."""
    shared = private / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    credentials_file(shared)
    (shared / "ca.pem").write_text("")
    (shared / "sim.toml").write_bytes(resolve_scenario("gen9-battery").read_bytes())
    login = 'credentials_file = "shared/ilo-credentials.toml"\nca_file = "shared/ca.pem"\n'
    path = private / "config.toml"
    path.write_text('[ssacli]\npath = "shared/ssacli"\nlock_file = "shared/cli.lock"\n[web]\n'
                    'config_file = "shared/web.yml"\npublish_dir = "shared"\n[audit]\n'
                    f'file = "shared/audit.jsonl"\n[redfish]\n{login}[probe]\n'
                    f'targets = ["ilo-1"]\n[probe.modules.default]\n{login}')
    found = problems(path)
    assert [problem.split(": ")[1] for problem in found] == [
        "ssacli.path", "ssacli.lock_file", "web.config_file", "web.publish_dir", "audit.file",
        "redfish.credentials_file", "redfish.ca_file", "probe.modules.default.credentials_file",
        "probe.modules.default.ca_file"]
    assert all(f"refused: {shared} is writable by everyone" in problem for problem in found)
    path.write_text('[ssacli]\nsimulate = "shared/sim.toml"\n')
    assert problems(path) == [f"{path}:2: ssacli.simulate: refused: {shared} is writable by "
                              "everyone (mode 0777): only root may be able to change what root "
                              "reads and runs"]
    shared.chmod(0o755)
    assert load_config(path).ssacli.simulate == str(shared / "sim.toml")


@as_root
def test_the_web_config_and_the_key_it_names_must_be_root_s(private):
    tls_files(private)
    web = write_secret(private / "web.yml",
                       "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n")
    assert load_web_config(web).tls is not None
    os.chown(private / "server.key", NOBODY, 0)
    with pytest.raises(ConfigError) as caught:
        load_web_config(web)
    assert caught.value.problems[0].startswith(
        f"{web}:3: tls_server_config.key_file: refused: {private}/server.key belongs to uid")


@as_root
@pytest.mark.parametrize("secret", ["web.yml", "server.key"])
def test_a_key_or_web_config_others_may_read_is_refused_like_the_ilo_credentials(private,
                                                                                 secret):
    # issue #31, finding 5: a 0644 key and web.yml were accepted, and a local user read them.
    tls_files(private)
    web = write_secret(private / "web.yml",
                       "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n")
    (private / secret).chmod(0o644)
    with pytest.raises(ConfigError) as caught:
        load_web_config(web)
    [problem] = caught.value.problems
    assert f"{private / secret} holds a secret and its group or others may read it (mode " \
        f"0644; chmod 600 {private / secret})" in problem
    (private / secret).chmod(0o640)
    with pytest.raises(ConfigError):
        load_web_config(web)
    (private / secret).chmod(0o400)
    assert load_web_config(web).tls is not None


# -- bounds -------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e300"])
def test_interval_must_be_finite_and_sane(private, value):
    path = private / "config.toml"
    path.write_text(f"[collect]\n\ninterval_s = {value}\n")
    [problem] = problems(path)
    assert problem.startswith(f"{path}:3: collect.interval_s: ")


def _numeric_settings() -> list[tuple[str, str, object]]:
    """(section, key, bounds) of every number in the configuration file, [redfish] and
    [probe] included (a [probe.modules.NAME] has the keys of [redfish])."""
    sections = {name: field.annotation for name, field in Config.model_fields.items()}
    sections["redfish"] = RedfishSettings
    sections["probe"] = ProbeConfig
    found = []
    for section, model in sections.items():
        for key, field in model.model_fields.items():  # type: ignore[union-attr]
            if field.annotation in (int, float, int | None, float | None):
                found.append((section, key, field.metadata))
    return found


NUMERIC = _numeric_settings()


def test_every_numeric_setting_has_an_upper_bound():
    assert {"collect.interval_s", "redfish.interval_s", "redfish.max_age_s",
            "probe.timeout_s", "probe.max_sessions", "probe.min_interval_s"} <= {
        f"{section}.{key}" for section, key, _ in NUMERIC}
    unbounded = [f"{section}.{key}" for section, key, bounds in NUMERIC
                 if not any(getattr(bound, "le", None) is not None
                            or getattr(bound, "lt", None) is not None for bound in bounds)]
    assert unbounded == []


@pytest.mark.parametrize("value", ["inf", "nan", "1e300"])
@pytest.mark.parametrize(("section", "key"), [(s, k) for s, k, _ in NUMERIC])
def test_every_numeric_setting_must_be_finite_and_sane(private, tmp_path, section, key, value):
    """``config check`` and every load name the line; [redfish] alone once refused
    nothing (interval_s = 1e300 passed)."""
    path = private / "config.toml"
    table = f'address = "ilo.example.net"\ncredentials_file = "{credentials_file(tmp_path)}"\n'
    path.write_text(f"[{section}]\n" + (table if section == "redfish" else "")
                    + f"{key} = {value}\n")
    line = 4 if section == "redfish" else 2
    assert [p for p in problems(path) if p.startswith(f"{path}:{line}: {section}.{key}: ")]
    if value != "1e300":
        return
    checked = run_agent("config", "check", str(path))
    assert checked.returncode == 2
    assert f"{path}:{line}: {section}.{key}: " in checked.stdout


@pytest.mark.parametrize("value", ["inf", "nan", "1e300", "3601"])
def test_the_timeout_option_is_held_to_the_same_bounds(tmp_path, value):
    """``--timeout 1e300`` once passed and crashed the first CLI call (OverflowError)."""
    done = run_agent("status", "--simulate", "gen9-battery", "--lock-file",
                     str(tmp_path / "cli.lock"), "--timeout", value,
                     env={**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim")})
    assert done.returncode == 2, done.stderr
    assert "--timeout" in done.stderr and "Traceback" not in done.stderr


def test_values_the_parsers_cannot_make_are_config_errors_not_crashes(private):
    """An integer of more than 4300 digits, or a YAML date that does not exist, once raised
    a bare ValueError out of the parser: a traceback, and a reload that killed the daemon."""
    digits = "1" + "0" * 5000
    toml = private / "config.toml"
    toml.write_text(f"[collect]\ninterval_s = {digits}\n")
    assert problems(toml) == [f"{toml}: not valid TOML: Exceeds the limit (4300 digits) for "
                              "integer string conversion: value has 5001 digits"]
    toml.write_text(f"[collect]\ninterval_s = {digits[:401]}\n")
    assert problems(toml) == [f"{toml}:2: collect.interval_s: Input should be a valid number "
                              f"(got {digits[:18]}...{digits[1:20]})"]
    for text, problem in ((f"a: {digits}\n", "Exceeds the limit (4300 digits)"),
                          ("a: 2023-02-30\n", "day is out of range for month")):
        web = write_secret(private / "web.yml", text)
        with pytest.raises(ConfigError) as caught:
            load_web_config(web)
        assert caught.value.problems[0].startswith(f"{web}: not valid YAML: {problem}")


def test_deep_nesting_is_a_config_error_not_a_crash(private):
    deep = private / "deep.toml"
    deep.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert problems(deep) == [f"{deep}:1: nested too deep"]
    tables = private / "tables.toml"
    tables.write_text("[collect]\ninterval_s = 30\n\n[" + ".".join("a" * 5000) + "]\n")
    assert problems(tables) == [f"{tables}:4: a: unknown section"]
    tables.write_text("[collect]\n[collect.interval_s" + ".a" * 5000 + "]\n")
    assert problems(tables) == [f"{tables}:2: collect.interval_s: Input should be a valid "
                                "number (got {'a': {'a': {'a': {'a': {'a': {'a': {...}}}}}}})"]
    yaml_deep = write_secret(private / "web.yml", "a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ConfigError, match="nested too deep"):
        load_web_config(yaml_deep)


def test_yaml_aliases_are_refused(private):
    web = write_secret(private / "web.yml", 'a: &a ["x", "x"]\nb: &b [*a, *a]\nc: [*b, *b]\n')
    with pytest.raises(ConfigError) as caught:
        load_web_config(web)
    assert caught.value.problems == [f"{web}:2: YAML aliases (*name) are not accepted: "
                                     "write the value out"]


def test_fifos_devices_directories_and_huge_files_are_refused(private):
    fifo = private / "fifo.toml"
    os.mkfifo(fifo)
    found: list[list[str]] = []
    reader = threading.Thread(target=lambda: found.append(problems(fifo)), daemon=True)
    reader.start()
    reader.join(60)  # an open() of the FIFO would wait for a writer for good
    assert found == [[f"{fifo}: not a regular file (a directory, FIFO, socket or device is "
                      "refused)"]]
    for other in (Path("/dev/zero"), private):
        assert "not a regular file" in problems(other)[0]
    huge = private / "huge.toml"
    huge.write_text("# padding\n" * 200_000)
    assert problems(huge) == [f"{huge}: larger than 1024 KiB"]


def test_config_check_names_each_problem(private):
    path = private / "config.toml"
    path.write_text("[collect]\ninterval_s = inf\n[ssacli]\ntimeout_s = 1e9\n")
    result = run_agent("config", "check", str(path))
    assert result.returncode == 2
    assert result.stdout.splitlines() == [
        f"{path}:2: collect.interval_s: Input should be a finite number (got inf)",
        f"{path}:4: ssacli.timeout_s: Input should be less than or equal to 3600 "
        "(got 1000000000.0)",
    ]


def test_a_reload_from_a_bad_file_or_a_fifo_keeps_the_daemon_running(tmp_path):
    """What SIGHUP does (the signal itself: test_daemon.py), in this process."""
    agent = AgentInProcess(tmp_path, simulated(tmp_path, "gen9-battery")).start()
    try:
        def reload_fails() -> None:
            before = agent.logs.count("reload failed")
            agent.reload()
            assert agent.logs.count("reload failed") == before + 1, agent.logs

        agent.config_path.write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")
        reload_fails()
        agent.config_path.write_text("[collect]\ninterval_s = inf\n")
        reload_fails()
        agent.config_path.write_text("[collect]\ninterval_s = 1" + "0" * 5000 + "\n")
        reload_fails()
        agent.config_path.unlink()
        os.mkfifo(agent.config_path)
        reload_fails()
        assert agent.request("/-/healthy")[0] == 200
        assert "Traceback" not in agent.logs
    finally:
        agent.stop()
