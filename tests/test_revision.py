"""``smartarray_build_info{revision}``: the commit the agent was built from (issue #29
finding 9), on the page ``run`` serves over loopback, and the rules that find it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import smartarray_agent
from smartarray_agent.revision import UNKNOWN, checkout_head

from .agent_process import AgentInProcess, simulated, value

ROOT = Path(__file__).resolve().parent.parent
# git is not among what the README installs (a fresh Debian 12 minbase has none, issue #42).
needs_git = pytest.mark.skipif(shutil.which("git") is None,
                               reason="git is not installed (the test makes a checkout)")


def expected_revision() -> str:
    """This checkout's HEAD when the agent under test runs from it (an editable install);
    ``unknown`` when it was installed from the tree without a stamp (``pip install .``), or
    where no git can say."""
    if not Path(smartarray_agent.__file__).resolve().is_relative_to(ROOT) or not shutil.which(
            "git"):
        return UNKNOWN
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_the_served_build_info_names_the_commit(tmp_path):
    agent = AgentInProcess(tmp_path, simulated(tmp_path, "gen10")).start()
    try:
        samples = agent.wait_for(
            lambda s: value(s, "smartarray_collector_success", collector="ssacli") == 1)
        [labels] = [dict(labels) for name, labels in samples
                    if name == "smartarray_build_info"]
        assert labels["revision"] == expected_revision()
    finally:
        agent.stop()


def git(directory: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


@needs_git
def test_a_checkout_says_its_head(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "pyproject.toml")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "x")
    assert checkout_head(tmp_path) == git(tmp_path, "rev-parse", "HEAD")


def test_without_a_checkout_it_is_unknown(tmp_path):
    assert checkout_head(tmp_path) == UNKNOWN  # no pyproject.toml: an installed copy
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    assert checkout_head(tmp_path) == UNKNOWN  # a source tree, not in git
