"""``--all`` and the command line's own words, through the real commands."""

from __future__ import annotations

import json

from .test_change import Host
from .test_write_faults import scenario_file


def test_all_changes_every_controller_with_a_cache_each_on_its_own(tmp_path):
    host = Host(tmp_path, "two-controllers")
    result = host.agent("set-cache-ratio", "25/75", "--all", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["changed"] is True
    slot0, slot1 = report["results"]
    assert (slot0["controller"]["slot"], slot0["verdict"], slot0["changed"]) == ("0", "changed",
                                                                                True)
    assert (slot1["controller"]["slot"], slot1["verdict"], slot1["changed"]) == ("1",
                                                                                "unchanged",
                                                                                False)
    for one in (slot0, slot1):
        assert set(one) == {"changed", "verdict", "before", "after", "requested", "command",
                            "controller", "message", "audit"}
        assert one["audit"] == {"outcome": one["verdict"], "file": str(host.audit)}
    assert slot0["command"] == ["ctrl", "slot=0", "modify", "cacheratio=25/75"]
    assert host.modifies() == ["ctrl slot=0 modify cacheratio=25/75"]
    assert [(e["controller"]["slot"], e["event"], e["outcome"])
            for e in host.audit_entries()] == [("0", "intent", None), ("0", "outcome", "changed"),
                                               ("1", "outcome", "unchanged")]
    again = host.agent("set-cache-ratio", "25/75", "--all", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["changed"] is False


def test_all_exits_non_zero_when_one_controller_is_refused(tmp_path):
    scenario = scenario_file(tmp_path, "two-controllers", "Failed (Replace Batteries)")
    host = Host(tmp_path, scenario)
    result = host.agent("write-cache", "enable", "--what", "no-battery", "--all", "--yes",
                        "--json")
    assert result.returncode == 4, result.stderr
    report = json.loads(result.stdout)
    assert [r["verdict"] for r in report["results"]] == ["refused", "changed"]
    assert report["changed"] is True
    assert host.modifies() == ["ctrl slot=1 modify nobatterywritecache=enable"]
    assert "refused: Smart Array P440ar in slot 0" in result.stderr


def test_all_slot_and_serial_are_exclusive(tmp_path):
    result = Host(tmp_path, "two-controllers").agent("set-cache-ratio", "25/75", "--all",
                                                     "--slot", "0")
    assert result.returncode == 2
    assert "--slot or --serial, or give --all (one of them)" in result.stderr


def test_a_refusal_reads_as_a_sentence(tmp_path):
    result = Host(tmp_path, "failed-battery").agent("write-cache", "enable", "--what",
                                                    "no-battery", "--slot", "0", "--yes")
    assert result.returncode == 4
    assert " on on " not in result.stderr
    assert result.stderr.startswith("smartarray-agent: refused: Smart Array P440ar in slot 0")
    assert ": no-battery write cache on would put writes in cache" in result.stderr


def test_already_set_names_the_controller_and_the_value(tmp_path):
    result = Host(tmp_path, "gen9-battery").agent("write-cache", "disable", "--what",
                                                  "no-battery", "--slot", "0")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("Smart Array P440ar in slot 0, serial PSIM9P440AR001: no-battery "
                             "write cache off is already set: nothing sent\n")


def test_usage_on_a_controller_without_per_usage_policies_is_bad_input(tmp_path):
    host = Host(tmp_path, "gen9-battery")
    result = host.agent("write-cache", "disable", "--what", "drive", "--usage", "hba",
                        "--slot", "0")
    assert result.returncode == 2
    assert "has one drive write cache switch" in result.stderr
    assert "leave out --usage hba" in result.stderr
    assert host.modifies() == []


def test_all_leaves_out_a_controller_with_no_cache_module_and_says_so(tmp_path):
    host = Host(tmp_path, "no-cache-module")
    result = host.agent("set-cache-ratio", "25/75", "--all", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["results"] == []
    assert report["skipped"] == [{"slot": "0", "serial": "PSIM8NOCACHE01",
                                  "model": "Smart Array P410i"}]
    assert "no controller with a cache: nothing to do" in result.stderr


def test_all_judges_a_controller_whose_cache_is_unknown_never_takes_it_as_none(tmp_path):
    host = Host(tmp_path, "hba-mode")  # the CLI prints nothing of its cache
    result = host.agent("set-cache-ratio", "25/75", "--all", "--json")
    assert result.returncode == 4, result.stderr
    report = json.loads(result.stdout)
    assert [(r["controller"]["slot"], r["verdict"]) for r in report["results"]] == [
        ("0", "refused")]
    assert report["skipped"] == []
    assert host.modifies() == []
