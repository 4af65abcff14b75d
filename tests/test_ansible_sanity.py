"""ansible-test sanity on the collection, and ansible-doc on its modules and role.

The sanity tests that need a virtual environment of their own (validate-modules, pylint,
pep8, yamllint, import, ansible-doc, changelog, runtime-metadata) bootstrap pip with a
script from ci-files.testing.ansible.com, which this machine cannot reach: they run only
where that script is already in ansible-test's cache."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_ansible import BIN, COLLECTION, ansible_env

pytestmark = [
    pytest.mark.ansible,
    pytest.mark.skipif(not (BIN / "ansible-test").exists(),
                       reason="ansible-core is not installed (pip install '.[test]')"),
]

OFFLINE = ["action-plugin-docs", "compile", "empty-init", "ignores", "line-endings",
           "no-assert", "no-get-exception", "no-illegal-filenames", "no-smart-quotes",
           "replace-urlopen", "shebang", "symlinks", "use-argspec-type-path", "use-compat-six"]
WITH_REQUIREMENTS = ["validate-modules", "pylint", "pep8", "yamllint", "import", "ansible-doc",
                     "changelog", "runtime-metadata"]
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
PIP_BOOTSTRAP = Path.home() / ".ansible" / "test" / "cache"


def sanity(tmp_path: Path, tests: list[str]) -> subprocess.CompletedProcess:
    selection = [argument for test in tests for argument in ("--test", test)]
    return subprocess.run(
        [str(BIN / "ansible-test"), "sanity", "--python", PYTHON, *selection],
        cwd=COLLECTION, capture_output=True, text=True, env=ansible_env(tmp_path),
        timeout=900)


def test_offline_sanity_tests_pass(tmp_path):
    result = sanity(tmp_path, OFFLINE)
    assert result.returncode == 0, result.stdout + result.stderr
    for test in OFFLINE:
        assert f'Running sanity test "{test}"' in result.stdout


@pytest.mark.skipif(not any(PIP_BOOTSTRAP.glob("get_pip_*.py")),
                    reason=f"no pip bootstrap script in {PIP_BOOTSTRAP}: ansible-test downloads "
                           "it from ci-files.testing.ansible.com, out of reach here")
def test_sanity_tests_with_requirements_pass(tmp_path):
    result = sanity(tmp_path, WITH_REQUIREMENTS)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("module", ["cache", "facts"])
def test_ansible_doc_reads_the_module_documentation(tmp_path, module):
    result = subprocess.run(
        [str(BIN / "ansible-doc"), "--json", f"smartarray.agent.{module}"],
        capture_output=True, text=True, env=ansible_env(tmp_path), timeout=120)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)[f"smartarray.agent.{module}"]
    assert doc["doc"]["options"]["executable"]["type"] == "path"
    assert doc["examples"].strip() and doc["return"]


def test_ansible_doc_reads_the_role_argument_spec(tmp_path):
    result = subprocess.run(
        [str(BIN / "ansible-doc"), "--json", "-t", "role", "smartarray.agent.smartarray_agent"],
        capture_output=True, text=True, env=ansible_env(tmp_path), timeout=120)
    assert result.returncode == 0, result.stderr
    role = json.loads(result.stdout)["smartarray.agent.smartarray_agent"]
    options = role["entry_points"]["main"]["options"]
    assert options["smartarray_agent_mode"]["choices"] == ["service", "textfile"]
