"""``check -w``/``-c`` take the monitoring plugins' ranges (issue #29, finding 6): ``10``,
``10:``, ``~:90``, ``10:90``, ``@10:20``; a value outside the range alerts, ``@`` turns that
round. A bare ``N`` keeps its old meaning here, ``N:`` (alert below N), since a charge is good
when high."""

from __future__ import annotations

import os

import pytest

from smartarray_agent.cli import plugin
from smartarray_agent.cli.plugin import Range, RangeError
from smartarray_agent.common.model import BackupPower, Cache, Controller, Snapshot

from .agent_cli import Ran, agent


@pytest.mark.parametrize(
    ("text", "alerting", "quiet"),
    [
        ("90", [0, 89.9], [90, 100]),  # bare N: N: for this plugin (alert below N)
        ("10:", [0, 9.5], [10, 50, 100]),
        ("~:90", [90.5, 100], [0, 90]),
        ("10:90", [0, 9, 91, 100], [10, 50, 90]),
        (":90", [91, 100], [0, 90]),  # an empty start is 0
        ("@10:20", [10, 15, 20], [9.9, 20.1, 0, 100]),
        ("@~:20", [0, 20], [21]),
        ("@30:", [30, 100], [29]),
        ("@90", [90, 100], [89]),  # the bare N inverted: @N:
        (" 5.5: ", [5], [5.5]),
    ],
)
def test_a_range_alerts_outside_itself_and_at_inside(text, alerting, quiet):
    limit = Range.parse(text)
    assert [value for value in alerting if not limit.alerts(value)] == []
    assert [value for value in quiet if limit.alerts(value)] == []


@pytest.mark.parametrize(
    ("text", "why"),
    [("", "empty"), ("many", "not a number"), ("90:10", "start 90 is above its end 10"),
     ("@", "empty"), (":", "no number"), ("1:2:3", "not a number"), ("nan", "not a number"),
     ("inf:", "not a number"), ("~", "no number"), ("150", "0 to 100"), ("-5:", "0 to 100"),
     ("10:~", "not a number"), ("@@10", "not a number")],
)
def test_a_bad_range_is_refused_with_the_reason(text, why):
    with pytest.raises(RangeError, match=why):
        Range.parse(text)


@pytest.mark.parametrize(
    ("text", "perfdata"),
    [("90", "90:"), ("10:", "10:"), ("~:90", "~:90"), ("10:90", "10:90"), ("@10:20", "@10:20"),
     ("0:", "0:"), ("@90", "@90:"), ("7.5:80", "7.5:80")],
)
def test_perfdata_shows_the_range_in_the_guidelines_syntax(text, perfdata):
    """A bare number in perfdata means 0:N to every reader of it: ours is printed as N:."""
    assert str(Range.parse(text)) == perfdata


def ctrl(charge: float) -> Controller:
    return Controller(slot="0", model="Smart Array P440ar", status="ok",
                      cache=Cache(present=True, status="ok", read_percent=10, write_percent=90,
                                  no_battery_write_cache=False, drive_write_cache=False),
                      backup_power=BackupPower(source="batteries", count=1, status="ok",
                                               charge_percent=charge))


@pytest.mark.parametrize(
    ("warning", "critical", "charge", "code"),
    [("90", "80", 95, plugin.OK), ("90", "80", 85, plugin.WARNING),
     ("90", "80", 75, plugin.CRITICAL), ("~:99", "50", 100, plugin.WARNING),
     ("90:", "@85:88", 86, plugin.CRITICAL), ("90:", "@85:88", 89, plugin.WARNING)],
)
def test_the_charge_is_judged_against_both_ranges(warning, critical, charge, code):
    limits = plugin.Thresholds(Range.parse(warning), Range.parse(critical), protected_percent=0)
    result = plugin.judge(Snapshot(controllers=[ctrl(charge)]), limits)
    assert result.code == code, result.problems
    assert f"'slot0_charge'={charge:g}%;{Range.parse(warning)};{Range.parse(critical)};0;100" \
        in result.perfdata


def check(*args: str) -> Ran:
    env = {k: v for k, v in os.environ.items() if k != "SMARTARRAY_SIM_FAULTS"}
    return agent("check", *args, env=env)


@pytest.mark.parametrize("args", [["-w", "10:"], ["-w", "~:100", "-c", "@0:1"],
                                  ["-w", "10:100", "-c", "5"],
                                  ["--warning", "0:", "--critical", "0:"]])
def test_the_command_takes_ranges(args):
    result = check(*args, "--simulate", "gen9-battery")
    assert result.returncode == plugin.OK, result.stdout + result.stderr
    assert result.stdout.startswith("SMARTARRAY OK - ")


def test_a_bad_range_on_the_command_line_is_unknown_and_says_why():
    result = check("-w", "90:10", "--simulate", "gen9-battery")
    assert result.returncode == plugin.UNKNOWN
    assert result.stdout.startswith("SMARTARRAY UNKNOWN - usage: ")
    assert "'90:10'" in result.stdout and "start 90 is above its end 10" in result.stdout
    assert len(result.stdout.splitlines()) == 1
