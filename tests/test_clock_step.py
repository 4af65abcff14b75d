"""Ages on the monotonic clock (issue #50 item 3): with the wall clock stepped back an hour
(``date -s``, an NTP step) as the iLO stops answering, ``run`` stops serving its charge
after ``max_age_s``; stepped back another hour as the vendor CLI stops, the controllers'
values after ``stale_after_s``, as without a step. Before, each was served as current for
the hour.
The step is the agent process's own (tests/stepped_clock/sitecustomize.py), not the
machine's."""

from __future__ import annotations

import time
from pathlib import Path

from .agent_process import AgentProcess, names, scenario_file, value
from .redfish_ilo import CHASSIS, Ilo, battery_ilo5, certificate, credentials_file, ilo5, serve

STEPPED = Path(__file__).resolve().parent / "stepped_clock"
CHARGE = "smartarray_backup_power_charge_ratio"


def test_a_wall_clock_stepped_back_keeps_no_stale_value(tmp_path):
    scenario = scenario_file(tmp_path, "gen10")
    step = tmp_path / "clock-step"
    step.write_text("0")
    with serve(Ilo(ilo5(batteries=[battery_ilo5(charge=97)]))) as ilo:
        agent = AgentProcess(tmp_path, (
            f'[ssacli]\nsimulate = "{scenario}"\nconsole = false\ntimeout_s = 30\n'
            f'lock_file = "{tmp_path / "cli.lock"}"\n'
            "[collect]\ninterval_s = 1\nstale_after_s = 10\n[sysfs]\nenabled = false\n"
            f'[redfish]\naddress = "{ilo.address}"\n'
            f'credentials_file = "{credentials_file(tmp_path)}"\n'
            f'ca_file = "{certificate()[0]}"\nconnect_timeout_s = 1\nread_timeout_s = 1\n'
            "interval_s = 10\nmax_age_s = 10\n"),
            env={"PYTHONPATH": str(STEPPED), "SMARTARRAY_TEST_CLOCK_STEP": str(step)}).start()
        try:
            before = agent.wait_for(lambda s: value(s, CHARGE, controller="0") == 0.97)
            assert "smartarray_controller_info" in names(before)
            shown = value(before, "smartarray_collector_last_success_timestamp_seconds",
                          collector="ssacli")
            assert shown is not None and abs(shown - time.time()) < 60  # Unix time, shown
            step.write_text("3600")
            ilo.hang.add(CHASSIS)  # the iLO stops answering: its charge expires at max_age_s
            agent.wait_for(lambda s: value(s, CHARGE, controller="0") is None
                           and "smartarray_controller_info" in names(s),  # the CLI answers
                           timeout_s=60)
            step.write_text("7200")  # a second step back, as the CLI stops answering
            scenario_file(tmp_path, "gen10", {"hang": ["*"]})  # stale after stale_after_s
            after = agent.wait_for(lambda s: "smartarray_controller_info" not in names(s),
                                   timeout_s=60)
        finally:
            agent.stop()
    # the last success is shown as the agent's wall clock had it then, an hour behind
    last = value(after, "smartarray_collector_last_success_timestamp_seconds",
                 collector="ssacli")
    assert last is not None and abs(last - (time.time() - 3600)) < 60
