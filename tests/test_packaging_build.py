"""The .deb and .rpm as built by packaging/build-deb.sh and build-rpm.sh: their metadata, their
files, lintian and rpmlint without an error, and the program they install running from its own
virtual environment, with the bash completion and the man page that come with it.

Marked ``packages`` (left out of the default run; ``pytest -m ''`` runs it): each build
installs the dependencies from PyPI."""

from __future__ import annotations

import base64
import csv
import gzip
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.core import TyperOption

from .agent_cli import commands
from .run_once import build_once

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
# A package is built for the release it is built on (docs/packaging.md): its venv links to the
# release's python3 under its versioned name, and the .deb's version names the release.
RELEASE_PYTHON = subprocess.run(
    ["/usr/bin/python3", "-c", 'import sys; print("python%d.%d" % sys.version_info[:2])'],
    capture_output=True, text=True).stdout.strip() if Path("/usr/bin/python3").exists() else ""
TARGET_PYTHON = Path("/usr/bin", RELEASE_PYTHON)
_OS = platform.freedesktop_os_release()
RELEASE = _OS["ID"].replace("debian", "deb") + _OS.get("VERSION_ID", "")
PREFIX = "opt/smartarray-agent"
SITE = f"{PREFIX}/lib/{RELEASE_PYTHON}/site-packages"
CHANGELOG = ROOT / "packaging" / "deb" / "changelog"

pytestmark = pytest.mark.packages

needs_deb_tools = pytest.mark.skipif(
    not (shutil.which("dpkg-deb") and RELEASE_PYTHON >= "python3.11"),
    reason="needs dpkg-deb and the release's /usr/bin/python3 at 3.11 or newer (Debian 12, 13)",
)
needs_rpmbuild = pytest.mark.skipif(
    not (shutil.which("rpmbuild") and shutil.which("rpm") and RELEASE_PYTHON >= "python3.11"),
    reason="needs rpmbuild (apt-get install rpm) and /usr/bin/python3 at 3.11 or newer",
)


def build_package(script: str, out: Path) -> Path:
    result = subprocess.run([str(ROOT / "packaging" / script), str(out)], capture_output=True,
                            text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    package = Path(result.stdout.strip().splitlines()[-1])
    assert package.is_file() and package.parent == out
    return package


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> Path:
    return build_once(tmp_path_factory, "deb", lambda out: build_package("build-deb.sh", out))


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


def changelog_field(field: str) -> str:
    return subprocess.run(["dpkg-parsechangelog", "-l", str(CHANGELOG), "-S", field],
                          capture_output=True, text=True, check=True).stdout.strip()


def lint_counts(output: str, prefix: str) -> dict[str, int]:
    """``{"E": n, "W": n}`` from lintian (``E: pkg: tag``) or rpmlint (``pkg.arch: E: tag``)."""
    counts = {"E": 0, "W": 0}
    for line in output.splitlines():
        match = re.match(prefix, line)
        if match:
            counts[match.group(1)] += 1
    return counts


@needs_deb_tools
def test_deb_metadata(deb):
    assert deb.name == f"smartarray-agent_{VERSION}-1+{RELEASE}_amd64.deb"
    assert deb_field(deb, "Package") == "smartarray-agent"
    assert deb_field(deb, "Version") == f"{changelog_field('Version')}+{RELEASE}"
    assert changelog_field("Version") == f"{VERSION}-1"
    maintainer = deb_field(deb, "Maintainer")
    assert maintainer == changelog_field("Maintainer")
    assert "localhost" not in maintainer and "root@" not in maintainer
    depends = [d.strip() for d in deb_field(deb, "Depends").split(",")]
    # libc from dpkg-shlibdeps (the bundled pydantic_core and bcrypt link to it), the interpreter
    # the venv links to, and deb-systemd-helper/-invoke for the maintainer scripts.
    assert any(re.fullmatch(r"libc6 \(>= 2\.\d+\)", d) for d in depends), depends
    assert RELEASE_PYTHON in depends
    assert any(d.startswith("init-system-helpers (>= ") for d in depends), depends
    # A dependency, not a recommendation: the README installs with --no-install-recommends,
    # which keeps logrotate's own (cron, a mail server) off the server (issue #43 finding 2).
    assert "logrotate" in depends
    assert deb_field(deb, "Recommends") == "ssacli"
    conffiles = subprocess.run(["dpkg-deb", "--info", str(deb), "conffiles"], capture_output=True,
                               text=True, check=True).stdout.split()
    assert conffiles == ["/etc/smartarray-agent/config.toml", "/etc/logrotate.d/smartarray-agent"]
    for script in ("preinst", "postinst", "prerm", "postrm"):
        text = subprocess.run(["dpkg-deb", "--info", str(deb), script], capture_output=True,
                              text=True, check=True).stdout
        syntax = subprocess.run(["sh", "-n"], input=text, capture_output=True, text=True)
        assert syntax.returncode == 0, f"{script}: {syntax.stderr}"


# What the releases that no root here can be made of have (docs/packaging.md, "One package per
# release", says how it is known): Ubuntu 24.04's packages (packages.ubuntu.com, noble) with the
# lowest versions the .deb may ask for, and the C library of the oldest release an .rpm is for.
NOBLE = {"python3.12": "3.12.3", "libc6": "2.39", "libgcc-s1": "14", "libstdc++6": "14",
         "systemd": "255", "init-system-helpers": "1.66", "libseccomp2": "2.5.5",
         "logrotate": "3.21"}
RHEL9_GLIBC = (2, 34)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:2])


@needs_deb_tools
def test_the_deb_built_on_ubuntu_24_04_would_find_its_dependencies_there(deb):
    """The release's python3.X aside, the .deb built here depends on what noble has, at
    versions noble meets; built on noble, it would depend on noble's python3.12."""
    for dependency in deb_field(deb, "Depends").split(","):
        name, _, minimum = dependency.strip().partition(" ")
        name = "python3.12" if name == RELEASE_PYTHON else name
        assert name in NOBLE, name
        if minimum:
            assert _version(minimum.strip("(>=~ )")) <= _version(NOBLE[name]), dependency


@needs_deb_tools
def test_the_bundled_objects_need_no_newer_c_library_than_rhel_9_has(installed):
    """The wheels pip picked need at most glibc 2.34 (RHEL 9's; Debian 12 has 2.36): the
    lowest C library of the releases the packages are for."""
    needed = set()
    for path in (installed / PREFIX).rglob("*.so*"):
        symbols = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True,
                                 check=True).stdout
        needed |= {_version(v) for v in re.findall(r"GLIBC_(\d+\.\d+)", symbols)}
    assert needed and max(needed) <= RHEL9_GLIBC, max(needed)


@needs_deb_tools
@pytest.mark.skipif(shutil.which("lintian") is None, reason="needs lintian")
def test_lintian_finds_no_error(deb, installed):
    result = subprocess.run(["lintian", "--tag-display-limit", "0", str(deb)],
                            capture_output=True, text=True, timeout=600)
    counts = lint_counts(result.stdout, r"([EW]): smartarray-agent")
    assert counts == {"E": 0, "W": 0}, result.stdout
    assert result.returncode == 0, result.stdout + result.stderr
    print(f"lintian: {counts['E']} errors, {counts['W']} warnings")
    # Every override ships in the package with its reason: a comment right above it.
    overrides = (installed / "usr/share/lintian/overrides/smartarray-agent").read_text()
    lines = overrides.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("smartarray-agent:"):
            assert number > 0 and lines[number - 1].startswith(("#", "smartarray-agent:")), line


@needs_deb_tools
def test_copyright_names_every_bundled_library(installed):
    copyright_text = (installed / "usr/share/doc/smartarray-agent/copyright").read_text()
    assert copyright_text.startswith(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    bundled = sorted(p.name for p in (installed / SITE).glob("*.dist-info"))
    assert len(bundled) > 10
    for dist_info in bundled:
        name, version = dist_info.removesuffix(".dist-info").rsplit("-", 1)
        if name == "smartarray_agent":
            continue
        assert f"/{dist_info}/*" in copyright_text, dist_info
        assert re.search(rf"^Comment: {re.escape(name)} {re.escape(version)}",
                         copyright_text.replace("-", "_"), re.MULTILINE | re.IGNORECASE), dist_info
    # Each licence named is either in /usr/share/common-licenses or has a paragraph of its own.
    named = {n for line in re.findall(r"^License: (.+)$", copyright_text, re.MULTILINE)
             for n in re.split(r" and | or ", line)}
    for licence in named:
        paragraph = rf"^License: {re.escape(licence)}\n "
        assert re.search(paragraph, copyright_text, re.MULTILINE), licence


@needs_deb_tools
def test_changelog_and_logrotate(installed):
    changelog = gzip.decompress(
        (installed / "usr/share/doc/smartarray-agent/changelog.Debian.gz").read_bytes()).decode()
    assert changelog == CHANGELOG.read_text()
    assert (installed / "etc/logrotate.d/smartarray-agent").read_bytes() == (
        ROOT / "packaging/logrotate").read_bytes()


@needs_deb_tools
def test_shared_objects_are_stripped_and_none_embeds_a_library(installed):
    objects = sorted((installed / PREFIX).rglob("*.so*"))
    assert objects, "pydantic_core and bcrypt ship shared objects"
    for path in objects:
        sections = subprocess.run(["readelf", "-S", "-W", str(path)], capture_output=True,
                                  text=True, check=True).stdout
        assert ".symtab" not in sections and ".debug_" not in sections, path
    assert not list((installed / SITE / "yaml").glob("_yaml*.so")), "embedded libyaml"
    loaded = subprocess.run(
        [str(installed / PREFIX / "bin/python"), "-I", "-c",
         "import yaml; print(yaml.__with_libyaml__, yaml.safe_load('a: [1, 2]'))"],
        capture_output=True, text=True, timeout=60)
    assert loaded.stdout.split("\n")[0] == "False {'a': [1, 2]}", loaded.stderr


@needs_deb_tools
def test_deb_files(installed):
    expected = [
        "etc/smartarray-agent/config.toml",
        "etc/logrotate.d/smartarray-agent",
        "usr/share/doc/smartarray-agent/copyright",
        "usr/share/doc/smartarray-agent/changelog.Debian.gz",
        "usr/share/lintian/overrides/smartarray-agent",
        "usr/lib/systemd/system/smartarray-agent.service",
        "usr/lib/systemd/system/smartarray-agent-textfile.service",
        "usr/lib/systemd/system/smartarray-agent-textfile.timer",
        "usr/lib/modules-load.d/smartarray-agent.conf",
        "usr/share/bash-completion/completions/smartarray-agent",
        "usr/share/man/man8/smartarray-agent.8.gz",
        # What runs (rules, dashboards, runbooks) lives outside /usr/share/doc, which Debian
        # Policy 12.3 lets minimal images strip (issue 29 finding 2).
        "usr/share/smartarray-agent/prometheus/alerts.yml",
        "usr/share/smartarray-agent/prometheus/alertmanager.yml",
        "usr/share/smartarray-agent/grafana/dashboard.json",
        "usr/share/smartarray-agent/grafana/fleet.json",
        "usr/share/smartarray-agent/runbooks.md",
        # ... and the mixin they are generated from (issue 28 item 2)
        "usr/share/smartarray-agent/mixin/mixin.libsonnet",
        "usr/share/smartarray-agent/mixin/alerts.libsonnet",
        "usr/share/smartarray-agent/mixin/dashboards/host.libsonnet",
        "usr/share/smartarray-agent/mixin/generate.py",
        f"{PREFIX}/bin/smartarray-agent",
        f"{PREFIX}/pyvenv.cfg",
    ]
    missing = [path for path in expected if not (installed / path).exists()]
    assert not missing
    doc = installed / "usr/share/doc/smartarray-agent"
    assert not any(doc.rglob("*.yml")) and not any(doc.rglob("*.json"))
    assert os.readlink(installed / "usr/bin/smartarray-agent") == f"/{PREFIX}/bin/smartarray-agent"
    # The Nagios/Icinga plugin, and its examples (tests/test_nagios_bundle.py checks them)
    assert os.readlink(installed / "usr/lib/nagios/plugins/check_smartarray") == (
        f"/{PREFIX}/bin/smartarray-agent")
    for example in ("sudoers", "nrpe.cfg", "icinga2.conf"):
        assert (installed / "usr/share/doc/smartarray-agent/examples" / example).read_bytes() == (
            ROOT / "packaging/nagios" / example).read_bytes()
    assert not (installed / "etc/sudoers.d").exists(), "the sudoers rule is an example only"
    assert os.readlink(installed / PREFIX / "bin" / RELEASE_PYTHON) == str(TARGET_PYTHON)
    assert (installed / "etc/smartarray-agent/config.toml").read_bytes() == (
        ROOT / "packaging/config.toml").read_bytes()
    assert sorted(p.name for p in (installed / PREFIX / "bin").iterdir()) == [
        "python", "python3", RELEASE_PYTHON, "smartarray-agent", "smartarray-sim"]


@needs_deb_tools
def test_the_deb_unpacks_into_opt_without_owning_it(deb):
    """dpkg removes a directory with its last owner: a .deb that shipped ./opt/ took /opt
    away at its purge (issue #43 finding 3)."""
    listed = [line.split()[-1] for line in subprocess.run(
        ["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True
    ).stdout.splitlines()]
    assert "./opt/" not in listed
    assert f"./{PREFIX}/" in listed


@needs_deb_tools
def test_unown_takes_out_the_directory_alone(tmp_path):
    tree = tmp_path / "tree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        "Package: t\nVersion: 1\nArchitecture: all\nMaintainer: A <a@example.org>\n"
        "Description: t\n")
    (tree / "opt" / "t").mkdir(parents=True)
    (tree / "opt" / "t" / "odd").write_bytes(b"x")  # an odd size: ar pads it
    deb = tmp_path / "t.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(tree), str(deb)],
                   check=True, capture_output=True)

    def contents() -> list[str]:
        return subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True,
                              check=True).stdout.splitlines()

    before = contents()
    subprocess.run([sys.executable, "-I", str(ROOT / "packaging" / "unown.py"), str(deb),
                    "./opt/"], check=True)
    after = contents()
    assert after == [line for line in before if not line.endswith(" ./opt/")]
    assert len(after) == len(before) - 1
    assert deb_field(deb, "Package") == "t"


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
def test_every_record_lists_the_files_as_packaged(installed):
    """Each RECORD names files that are there, with their hash and size as packaged (stage.sh
    rewrites console scripts, strips objects and removes files after pip wrote RECORD), and
    the byte-compiled modules; pip's own check finds nothing to complain of."""
    site = installed / SITE
    records = sorted(site.glob("*.dist-info/RECORD"))
    assert len(records) > 10
    for record in records:
        with record.open(newline="") as f:
            rows = list(csv.reader(f))
        assert rows[-1] == [record.relative_to(site).as_posix(), "", ""], record
        for name, digest, size in rows[:-1]:
            data = (site / name).read_bytes()
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert (digest, size) == (f"sha256={expected.decode()}", str(len(data))), name
    agent = (site / f"smartarray_agent-{VERSION}.dist-info/RECORD").read_text()
    assert "../../../bin/smartarray-agent," in agent
    assert "direct_url.json" not in agent
    assert "smartarray_agent/__pycache__/__init__.cpython-311.pyc,sha256=" in agent


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
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert f'revision="{head}"' in metrics.stdout  # stamped by stage.sh (issue #29)
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
@pytest.mark.parametrize(("shell", "path"), [
    ("zsh", "usr/share/zsh/vendor-completions/_smartarray-agent"),
    ("fish", "usr/share/fish/vendor_completions.d/smartarray-agent.fish"),
])
def test_zsh_and_fish_completion_are_installed_too(installed, shell, path):
    """Issue 29 finding 9: only the bash completion was installed."""
    printed = subprocess.run([sys.executable, "-m", "smartarray_agent"], capture_output=True,
                             text=True, timeout=60, check=True,
                             env={**os.environ, "_SMARTARRAY_AGENT_COMPLETE": f"source_{shell}"})
    assert (installed / path).read_text() == printed.stdout
    if shell == "fish" and shutil.which("fish"):
        bin_dir = Path(sys.executable).parent
        done = subprocess.run(["fish", "-c", f"source {installed / path}; "
                               "complete -C 'smartarray-agent sta'"], capture_output=True,
                              text=True, timeout=60,
                              env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
        assert [line.split("\t")[0] for line in done.stdout.split("\n") if line] == ["status"]


@needs_deb_tools
def test_the_man_page_documents_every_command_and_option(installed):
    page = gzip.decompress((installed / "usr/share/man/man8/smartarray-agent.8.gz").read_bytes())
    source = page.decode()
    # -h/--help is said once for all commands, before them
    assert "prints its help with \\fB\\-h\\fR or\n\\fB\\-\\-help\\fR" in source
    for path, command in commands():
        assert f".SS {' '.join(path)}".replace("-", "\\-") in source, path
        for param in command.params:
            options = param.opts if isinstance(param, TyperOption) else []
            for option in options:
                assert option.replace("-", "\\-") in source, (path, option)
    if shutil.which("man"):
        rendered = subprocess.run(
            ["man", "--warnings", "-l", "-"], input=page, capture_output=True, timeout=60,
            env={**os.environ, "MANWIDTH": "80", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": ""},
        )
        assert rendered.returncode == 0
        assert rendered.stderr == b"", rendered.stderr.decode()
        assert b"SMARTARRAY-AGENT(8)" in rendered.stdout


@pytest.fixture(scope="module")
def rpm(tmp_path_factory) -> Path:
    return build_once(tmp_path_factory, "rpm", lambda out: build_package("build-rpm.sh", out))


def rpm_query(rpm: Path, *args: str) -> list[str]:
    return subprocess.run(["rpm", "-qp", *args, str(rpm)], capture_output=True, text=True,
                          check=True).stdout.splitlines()


@needs_rpmbuild
def test_rpm(rpm):
    assert rpm.name == f"smartarray-agent-{VERSION}-1.x86_64.rpm"

    def query(*args: str) -> list[str]:
        return rpm_query(rpm, *args)

    requires = query("--requires")
    assert str(TARGET_PYTHON) in requires  # a file dependency: any package that has it
    assert "libc.so.6()(64bit)" in requires
    assert sorted(query("--recommends")) == ["logrotate", "ssacli"]
    assert query("--qf", "%{PACKAGER}") == [changelog_field("Maintainer")]
    assert query("--qf", "%{GROUP}") == ["Applications/System"]
    assert query("--changelog")[0].endswith(f"- {VERSION}-1")
    listing = query("--qf", "[%{FILENAMES} %{FILEFLAGS:fflags}\n]")
    flags = dict(line.rsplit(" ", 1) for line in listing)
    assert flags["/etc/smartarray-agent/config.toml"] == "cn", "%config(noreplace)"
    files = set(query("-l"))
    for path in ("/usr/lib/systemd/system/smartarray-agent.service",
                 "/usr/lib/systemd/system/smartarray-agent-textfile.timer",
                 "/usr/lib/modules-load.d/smartarray-agent.conf",
                 "/usr/share/man/man8/smartarray-agent.8.gz",
                 "/usr/bin/smartarray-agent", f"/{PREFIX}/bin/smartarray-agent",
                 "/usr/lib64/nagios/plugins/check_smartarray",
                 "/usr/share/doc/smartarray-agent/examples/sudoers",
                 "/usr/share/doc/smartarray-agent/examples/nrpe.cfg",
                 "/usr/share/doc/smartarray-agent/examples/icinga2.conf"):
        assert path in files, path
    links = dict(line.split(" ", 1) for line in query("--qf", "[%{FILENAMES} %{FILELINKTOS}\n]"))
    assert links["/usr/lib64/nagios/plugins/check_smartarray"] == f"/{PREFIX}/bin/smartarray-agent"
    assert not any(path.startswith("/etc/sudoers") for path in files)
    scripts = "\n".join(query("--scripts"))
    assert "systemctl --no-reload preset smartarray-agent.service" in scripts
    assert "modprobe sg" in scripts


# Where node_exporter's RPM (golang-github-prometheus-node-exporter: Fedora, EPEL) reads
# textfiles; Debian's prometheus-node-exporter reads /var/lib/prometheus/node-exporter.
RPM_TEXTFILE_DIR = "/var/lib/node_exporter/textfile_collector"


@needs_rpmbuild
def test_the_rpm_textfile_unit_writes_where_rpm_node_exporter_reads(rpm, tmp_path):
    """Issue 29 finding 5: the .rpm's textfile unit pointed at Debian's directory."""
    subprocess.run(f"rpm2cpio {rpm} | cpio -idm --quiet", shell=True, cwd=tmp_path, check=True)
    unit = (tmp_path / "usr/lib/systemd/system/smartarray-agent-textfile.service").read_text()
    settings = [line for line in unit.splitlines() if line and not line.startswith("#")]
    assert f"ConditionPathIsDirectory={RPM_TEXTFILE_DIR}" in settings
    assert f"Environment=TEXTFILE_DIR={RPM_TEXTFILE_DIR}" in settings
    assert f"ReadWritePaths=-{RPM_TEXTFILE_DIR}" in settings
    assert "node-exporter" not in "\n".join(settings)
    scripts = "\n".join(rpm_query(rpm, "--scripts"))
    assert f"{RPM_TEXTFILE_DIR}/smartarray.prom" in scripts  # removed with the package
    assert "/var/lib/prometheus/node-exporter" not in scripts


@needs_rpmbuild
@pytest.mark.skipif(shutil.which("rpmlint") is None, reason="needs rpmlint")
def test_rpmlint_finds_no_error(rpm):
    """With the filters the package ships, each with its reason."""
    rc = ROOT / "packaging/rpm/smartarray-agent.rpmlintrc"
    assert f"/usr/share/doc/smartarray-agent/{rc.name}" in rpm_query(rpm, "-l")
    result = subprocess.run(["rpmlint", "-r", str(rc), str(rpm)], capture_output=True,
                            text=True, timeout=600)
    counts = lint_counts(result.stdout, r"smartarray-agent\.x86_64: ([EW]): ")
    assert counts["E"] == 0, result.stdout
    assert " 0 errors," in result.stdout, result.stdout
    print(f"rpmlint: {counts['E']} errors, {counts['W']} warnings")
