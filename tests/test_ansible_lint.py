"""The collection is clean under ``ansible-lint --profile production`` (issue #29, finding 7),
its role's argument spec says what its options are, and every ansible-core version it claims
has its sanity ignore file."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from tests.test_ansible import BIN, COLLECTION

pytestmark = pytest.mark.ansible

ROLE = COLLECTION / "roles" / "smartarray_agent"
# What ansible's argument spec allows on an option (ansible.module_utils.common.arg_spec).
OPTION_KEYS = {"type", "default", "description", "choices", "elements", "required", "no_log",
               "options", "aliases", "version_added", "apply_defaults"}


@pytest.mark.skipif(not (BIN / "ansible-lint").exists(),
                    reason="ansible-lint is not installed (pip install '.[test]')")
def test_ansible_lint_production_profile_passes():
    result = subprocess.run([str(BIN / "ansible-lint"), "--profile", "production", "--offline",
                             "--nocolor"], cwd=COLLECTION, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 failure(s), 0 warning(s)" in result.stdout + result.stderr


def test_the_role_argument_spec_has_only_option_keys_and_one_sentence_each():
    """A description with a comma in a flow mapping was split, and ansible-doc showed an
    option 'to validate config.toml.'."""
    spec = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())
    options = spec["argument_specs"]["main"]["options"]
    for name, option in options.items():
        assert name.startswith("smartarray_agent_"), name
        assert set(option) <= OPTION_KEYS, (name, set(option) - OPTION_KEYS)
        assert isinstance(option["description"], str) and option["description"], name


def test_every_claimed_ansible_core_version_has_a_sanity_ignore_file():
    runtime = yaml.safe_load((COLLECTION / "meta" / "runtime.yml").read_text())
    low = tuple(int(part) for part in re.findall(r"\d+", runtime["requires_ansible"])[:2])
    assert low == (2, 15)
    ignores = COLLECTION / "tests" / "sanity"
    for minor in range(low[1], 21):
        assert (ignores / f"ignore-2.{minor}.txt").exists(), f"2.{minor}"
