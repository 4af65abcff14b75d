"""The .deb and .rpm as built by packaging/build-deb.sh and build-rpm.sh: their metadata, their
files, and the program they install running from its own virtual environment, with the bash
completion and the man page that come with it."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer

from smartarray_agent import cli

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
TARGET_PYTHON = Path("/usr/bin/python3.11")  # Debian 12's; the package's venv links to it
PREFIX = "opt/smartarray-agent"
BUILD_ENV = {**os.environ, "PIP": f"{sys.executable} -m pip"}

needs_deb_tools = pytest.mark.skipif(
    not (shutil.which("dpkg-deb") and TARGET_PYTHON.exists()),
    reason="needs dpkg-deb and /usr/bin/python3.11 (Debian 12)",
)
needs_rpmbuild = pytest.mark.skipif(
    not (shutil.which("rpmbuild") and shutil.which("rpm") and TARGET_PYTHON.exists()),
    reason="needs rpmbuild (apt-get install rpm) and /usr/bin/python3.11",
)


def _build(script: str, out: Path) -> Path:
    result = subprocess.run([str(ROOT / "packaging" / script), str(out)], capture_output=True,
                            text=True, env=BUILD_ENV, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    package = Path(result.stdout.strip().splitlines()[-1])
    assert package.is_file() and package.parent == out
    return package


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> Path:
    return _build("build-deb.sh", tmp_path_factory.mktemp("deb"))


@pytest.fixture(scope="module")
def installed(deb, tmp_path_factory) -> Path:
    """The .deb's files unpacked under a directory, as dpkg would lay them out under /."""
    root = tmp_path_factory.mktemp("root")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=120)
    return root


def deb_field(deb: Path, field: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), field], capture_output=True, text=True,
                          check=True).stdout.strip()


def run_installed(root: Path, *args: str) -> subprocess.CompletedProcess:
    """The installed program, from its own venv only: isolated from this test's environment."""
    python = root / PREFIX / "bin" / "python"
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(root),
           "SMARTARRAY_SIM_STATE_DIR": str(root / "sim-state")}
    return subprocess.run([str(python), "-I", "-m", "smartarray_agent", *args],
                          capture_output=True, text=True, env=env, timeout=120)


@needs_deb_tools
def test_deb_metadata(deb):
    assert deb.name == f"smartarray-agent_{VERSION}-1_amd64.deb"
    assert deb_field(deb, "Package") == "smartarray-agent"
    assert deb_field(deb, "Version") == f"{VERSION}-1"
    assert "python3.11" in deb_field(deb, "Depends")
    assert deb_field(deb, "Recommends") == "ssacli"
    conffiles = subprocess.run(["dpkg-deb", "--info", str(deb), "conffiles"], capture_output=True,
                               text=True, check=True).stdout.split()
    assert conffiles == ["/etc/smartarray-agent/config.toml"]
    for script in ("postinst", "prerm", "postrm"):
        text = subprocess.run(["dpkg-deb", "--info", str(deb), script], capture_output=True,
                              text=True, check=True).stdout
        syntax = subprocess.run(["sh", "-n"], input=text, capture_output=True, text=True)
        assert syntax.returncode == 0, f"{script}: {syntax.stderr}"


@needs_deb_tools
def test_deb_files(installed):
    expected = [
        "etc/smartarray-agent/config.toml",
        "lib/systemd/system/smartarray-agent.service",
        "lib/systemd/system/smartarray-agent-textfile.service",
        "lib/systemd/system/smartarray-agent-textfile.timer",
        "usr/lib/modules-load.d/smartarray-agent.conf",
        "usr/share/bash-completion/completions/smartarray-agent",
        "usr/share/man/man8/smartarray-agent.8.gz",
        "usr/share/doc/smartarray-agent/prometheus/alerts.yml",
        "usr/share/doc/smartarray-agent/grafana/dashboard.json",
        f"{PREFIX}/bin/smartarray-agent",
        f"{PREFIX}/pyvenv.cfg",
    ]
    missing = [path for path in expected if not (installed / path).exists()]
    assert not missing
    assert os.readlink(installed / "usr/bin/smartarray-agent") == f"/{PREFIX}/bin/smartarray-agent"
    assert os.readlink(installed / PREFIX / "bin/python3.11") == str(TARGET_PYTHON)
    assert (installed / "etc/smartarray-agent/config.toml").read_bytes() == (
        ROOT / "packaging/config.toml").read_bytes()
    assert sorted(p.name for p in (installed / PREFIX / "bin").iterdir()) == [
        "python", "python3", "python3.11", "smartarray-agent", "smartarray-sim"]


@needs_deb_tools
def test_the_venv_names_only_its_final_path(installed):
    script = (installed / PREFIX / "bin" / "smartarray-agent").read_text()
    assert script.startswith(f"#!/{PREFIX}/bin/python\n")
    assert "home = /usr/bin" in (installed / PREFIX / "pyvenv.cfg").read_text()
    # build-deb.sh stages under mktemp -d (/tmp/tmp.XXXXXXXXXX): no file, .pyc included, may
    # name it.
    leaks = subprocess.run(["grep", "-rlaE", r"/tmp/tmp\.[A-Za-z0-9]{10}/",
                            str(installed / PREFIX)], capture_output=True, text=True)
    assert leaks.stdout == "", leaks.stdout
    compiled = list((installed / PREFIX).rglob("smartarray_agent/__pycache__/*.pyc"))
    assert compiled, "byte-compiled at build time: the unit's file system is read-only"


@needs_deb_tools
def test_the_installed_program_runs_from_its_own_venv(installed):
    version = run_installed(installed, "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"smartarray-agent {VERSION}"
    status = run_installed(installed, "status", "--json", "--simulate", "gen9-battery")
    assert status.returncode == 0, status.stderr
    controller = json.loads(status.stdout)["controllers"][0]
    assert controller["model"] == "Smart Array P440ar"
    assert controller["backup_power"]["status"] == "ok"
    metrics = run_installed(installed, "metrics", "--once", "--simulate", "gen9-battery")
    assert 'smartarray_collector_success{collector="ssacli"} 1.0' in metrics.stdout, metrics.stderr
    config = installed / "etc/smartarray-agent/config.toml"
    check = run_installed(installed, "config", "check", str(config))
    assert check.returncode == 0, check.stdout + check.stderr


@needs_deb_tools
def test_bash_completion_completes_commands(installed):
    completion = installed / "usr/share/bash-completion/completions/smartarray-agent"
    if not shutil.which("bash"):
        pytest.skip("no bash")
    # The completion calls `smartarray-agent` at completion time: this test's one stands in
    # for the installed one (whose #! names /opt, absent here).
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    script = (f"source {completion}; COMP_WORDS=(smartarray-agent sta); COMP_CWORD=1; "
              "_smartarray_agent_completion smartarray-agent; printf '%s\\n' \"${COMPREPLY[@]}\"")
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                            env={**os.environ, "PATH": path}, timeout=60)
    assert result.returncode == 0, result.stderr
    assert [line.split(":")[0] for line in result.stdout.split()] == ["status"]


@needs_deb_tools
def test_the_man_page_documents_every_command_and_option(installed):
    page = gzip.decompress((installed / "usr/share/man/man8/smartarray-agent.8.gz").read_bytes())
    source = page.decode()
    group = typer.main.get_command(cli.app)

    def walk(command, path):
        if getattr(command, "commands", None):
            for name, sub in command.commands.items():
                yield from walk(sub, [*path, name])
        else:
            yield path, command

    for path, command in walk(group, []):
        assert f".SS {' '.join(path)}".replace("-", "\\-") in source, path
        for param in command.params:
            for option in param.opts if param.param_type_name == "option" else []:
                assert option.replace("-", "\\-") in source, (path, option)
    if shutil.which("man"):
        rendered = subprocess.run(
            ["man", "--warnings", "-l", "-"], input=page, capture_output=True, timeout=60,
            env={**os.environ, "MANWIDTH": "80", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": ""},
        )
        assert rendered.returncode == 0
        assert rendered.stderr == b"", rendered.stderr.decode()
        assert b"SMARTARRAY-AGENT(8)" in rendered.stdout


@needs_rpmbuild
def test_rpm(tmp_path):
    rpm = _build("build-rpm.sh", tmp_path)
    assert rpm.name == f"smartarray-agent-{VERSION}-1.x86_64.rpm"

    def query(*args: str) -> list[str]:
        return subprocess.run(["rpm", "-qp", *args, str(rpm)], capture_output=True, text=True,
                              check=True).stdout.splitlines()

    assert "python3.11" in query("--requires")
    assert query("--recommends") == ["ssacli"]
    listing = query("--qf", "[%{FILENAMES} %{FILEFLAGS:fflags}\n]")
    flags = dict(line.rsplit(" ", 1) for line in listing)
    assert flags["/etc/smartarray-agent/config.toml"] == "cn", "%config(noreplace)"
    files = set(query("-l"))
    for path in ("/usr/lib/systemd/system/smartarray-agent.service",
                 "/usr/lib/systemd/system/smartarray-agent-textfile.timer",
                 "/usr/lib/modules-load.d/smartarray-agent.conf",
                 "/usr/share/man/man8/smartarray-agent.8.gz",
                 "/usr/bin/smartarray-agent", f"/{PREFIX}/bin/smartarray-agent"):
        assert path in files, path
    scripts = "\n".join(query("--scripts"))
    assert "systemctl --no-reload preset smartarray-agent.service" in scripts
    assert "modprobe sg" in scripts
