"""``run`` with a ``[redfish]`` table: the iLO's charge in the exposition, on its own
schedule, and an iLO that fails or hangs never stops the ssacli data being served."""

from __future__ import annotations

from .agent_process import AgentInProcess, value
from .redfish_ilo import Ilo, battery_ilo5, certificate, closed_port, credentials_file, ilo5, serve


def config(tmp_path, address: str, interval_s: int = 60) -> str:
    credentials = credentials_file(tmp_path)
    return (
        '[ssacli]\nsimulate = "gen10"\n'
        f'lock_file = "{tmp_path / "cli.lock"}"\n'
        '[collect]\ninterval_s = 3600\n[sysfs]\nenabled = false\nudev_debounce_s = 0\n'
        f'[redfish]\naddress = "{address}"\ncredentials_file = "{credentials}"\n'
        f'ca_file = "{certificate()[0]}"\nconnect_timeout_s = 2\nread_timeout_s = 2\n'
        f"interval_s = {interval_s}\nmax_age_s = 600\n"
    )


def test_the_ilo_charge_is_exported_and_laid_over_the_controller(tmp_path):
    with serve(Ilo(ilo5(batteries=[battery_ilo5(charge=62)]))) as ilo:
        agent = AgentInProcess(tmp_path, config(tmp_path, ilo.address)).start()
        try:
            samples = agent.wait_for(lambda s: value(
                s, "smartarray_collector_success", collector="redfish") == 1)
            # more ssacli rounds, but the iLO is read on its own schedule (interval_s 60)
            agent.collect()
            agent.collect()
            logins = len(ilo.logins)
        finally:
            agent.stop()
    labels = {"battery": "1", "controller": "0", "model": "875241-B21"}
    assert value(samples, "smartarray_battery_charge_ratio", **labels) == 0.62
    assert value(samples, "smartarray_backup_power_charge_ratio", controller="0") == 0.62
    # 62 % is below the interlock's 80 %: the controller's write cache counts as unprotected
    assert value(samples, "smartarray_unprotected_write_cache", controller="0") == 1
    assert logins == 1


def test_an_unreachable_ilo_fails_its_collector_only(tmp_path):
    agent = AgentInProcess(tmp_path, config(tmp_path, closed_port())).start()
    try:
        samples = agent.wait_for(lambda s: all(  # both attempted: a series only from then on
            value(s, "smartarray_collector_success", collector=name) is not None
            for name in ("redfish", "ssacli")))
    finally:
        agent.stop()
    assert value(samples, "smartarray_collector_success", collector="redfish") == 0
    assert value(samples, "smartarray_collector_success", collector="ssacli") == 1
    assert value(samples, "smartarray_cache_status", controller="0", state="ok") == 1
    assert value(samples, "smartarray_backup_power_charge_ratio", controller="0") is None
