"""``smartarray-agent simulate list|run|reset|ilo|charge``: the bundled simulator from the
agent's command."""

import json
import secrets
from pathlib import Path
from typing import Annotated, Literal

import typer

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.context import fail

ScenarioName = Annotated[str, typer.Argument(
    metavar="SCENARIO", help="A bundled scenario name or a scenario file.")]
StateDir = Annotated[Path | None, typer.Option(
    "--state-dir", metavar="DIR", help="State directory of the simulated host.")]


def list_scenarios() -> None:
    """One bundled scenario per line: name, a tab, its description."""
    from smartarray_agent import simulator

    for name, description in simulator.list_scenarios():
        print(f"{name}\t{description}")


def run(
    scenario: ScenarioName,
    words: Annotated[list[str] | None, typer.Argument(
        metavar="WORDS", help="One vendor CLI command, after --.")] = None,
    state_dir: StateDir = None,
) -> None:
    """Answer like ssacli for SCENARIO (a bundled scenario name or a file).

    With WORDS, after --, that one command: `simulate run gen9-battery -- ctrl all show
    status`; with none, the interactive console."""
    from smartarray_agent.simulator import cli as simulator_cli

    argv = ["--scenario", scenario]
    if state_dir is not None:
        argv += ["--state-dir", str(state_dir)]
    raise SystemExit(simulator_cli.main([*argv, *(words or [])]))


def reset(scenario: Annotated[str | None, typer.Argument(
        metavar="SCENARIO", help="A bundled scenario name or a scenario file (default: "
                                 "every simulated host of yours).")] = None) -> None:
    """Forget what changes did to a simulated host: its next command starts again from
    the scenario file. A simulated host keeps its state between commands in
    $SMARTARRAY_SIM_STATE_DIR, else $XDG_RUNTIME_DIR/smartarray-sim/SCENARIO, else
    /tmp/smartarray-sim-UID/SCENARIO."""
    from smartarray_agent import simulator
    from smartarray_agent.simulator import state

    if scenario is None:
        directories = state.state_dirs()
    else:
        try:
            directories = [state.default_state_dir(simulator.resolve_scenario(scenario).stem)]
        except simulator.ScenarioError as error:
            raise fail(str(error), exitcodes.BAD_INPUT) from None
    done = False
    for directory in directories:
        try:
            if state.reset(directory):
                print(f"reset {directory}")
                done = True
        except state.SimulatorBusy as error:
            raise fail(str(error), exitcodes.VENDOR_ERROR) from None
        except simulator.ScenarioError as error:  # a directory someone else could change
            raise fail(str(error), exitcodes.BAD_INPUT) from None
    if not done:
        print("nothing to reset")


Form = Literal["smartstorage", "dmtf"]
# what simulate ilo writes beside its certificate, for status --ilo, write-cache and serve
_CONFIG = """# written by `smartarray-agent simulate ilo` at its start
[redfish]
address = "{address}"
credentials_file = "{credentials}"
ca_file = "{cert}"

[probe]
targets = ["127.0.0.1:*"]

[probe.modules.default]
credentials_file = "{credentials}"
ca_file = "{cert}"

[web]
publish_dir = "{published}"

[audit]
file = "{audit}"
"""


def ilo(
    scenario: ScenarioName,
    form: Annotated[Form, typer.Option(
        help="smartstorage: iLO 5 (HPE's SmartStorage model); dmtf: iLO 6 and 7 (the DMTF "
             "Storage model).")] = "smartstorage",
    port: Annotated[int, typer.Option(min=0, max=65535, help="The first port (0: free "
                                                           "ports).")] = 8443,
    count: Annotated[int, typer.Option(min=1, max=20000, help="How many iLOs: one per port, "
                                                             "from --port on.")] = 1,
    delay: Annotated[tuple[float, float], typer.Option(
        metavar="MIN MAX", help="Each answer waits this long, in seconds, as a real iLO's "
                                "1-3 s do.")] = (0.0, 0.0),
    files: Annotated[Path | None, typer.Option(
        "--dir", metavar="DIR", help="Where to write the certificate, login and config.toml "
                                     "(default: the simulated host's state directory).")] = None,
    state_dir: StateDir = None,
) -> None:
    """Serve SCENARIO's host as its iLO: Redfish over HTTPS on 127.0.0.1, until Ctrl-C.

    It writes, in DIR, ilo.pem (the certificate, made now: ca_file), ilo-credentials.toml,
    targets.json (each iLO, for Prometheus' file_sd) and config.toml, which status --ilo,
    write-cache and serve take with --config. The battery's charge is the simulated host's,
    which `simulate charge` sets."""
    from smartarray_agent import simulator
    from smartarray_agent.simulator import ilo as simulated
    from smartarray_agent.simulator.redfish import FORMS
    from smartarray_agent.simulator.state import StateStore, default_state_dir, make_state_dir

    try:
        path = simulator.resolve_scenario(scenario)
        store = StateStore(state_dir or default_state_dir(path.stem), path)
        folder = make_state_dir(files or store.directory / "ilo")
        password = secrets.token_urlsafe(16)
        service = simulated.SimulatedIlo(store, form, password, delay)
    except simulator.ScenarioError as error:
        raise fail(str(error), exitcodes.BAD_INPUT) from None
    try:
        cert, tls = simulated.certificate(folder)
    except ImportError:
        raise fail("simulate ilo makes its certificate with the cryptography library: pip "
                   "install 'smartarray-agent[simulate]'", exitcodes.BAD_INPUT) from None
    credentials = folder / "ilo-credentials.toml"
    credentials.touch(mode=0o600)
    credentials.write_text(f'username = "{simulated.USERNAME}"\npassword = "{password}"\n')
    (folder / "published").mkdir(mode=0o750, exist_ok=True)

    def started(addresses: list[str]) -> None:
        (folder / "targets.json").write_text(json.dumps([{"targets": addresses}], indent=1))
        config = folder / "config.toml"
        config.write_text(_CONFIG.format(address=addresses[0], credentials=credentials,
                                         cert=cert, published=folder / "published",
                                         audit=folder / "audit.jsonl"))
        more = f" and {len(addresses) - 1} more (targets.json)" if len(addresses) > 1 else ""
        print(f"simulated {FORMS[form]} of {path.stem} on https://{addresses[0]}{more}\n"
              f"certificate (ca_file): {cert}\nconfiguration: {config}\n"
              f"try: smartarray-agent status --ilo {addresses[0]} --config {config}", flush=True)

    try:
        simulated.serve(service, tls, port, count, started)
    except OSError as error:
        raise fail(f"cannot listen on 127.0.0.1:{port}: {error.strerror or error}",
                   exitcodes.CANNOT_SERVE) from None


def charge(
    scenario: ScenarioName,
    percent: Annotated[int, typer.Argument(min=0, max=100, metavar="PERCENT")],
    state_dir: StateDir = None,
) -> None:
    """Set the charge the simulated host's Smart Storage Batteries report through its iLO
    (`simulate ilo`); `simulate reset` puts back the scenario's."""
    from smartarray_agent import simulator
    from smartarray_agent.simulator.scenario import Scenario
    from smartarray_agent.simulator.state import StateStore, default_state_dir

    def charged(state: Scenario) -> Scenario:
        for ctrl in state.controllers:
            ctrl.backup_power.charge_percent = percent
        return state

    try:
        path = simulator.resolve_scenario(scenario)
        StateStore(state_dir or default_state_dir(path.stem), path).update(charged)
    except simulator.ScenarioError as error:
        raise fail(str(error), exitcodes.BAD_INPUT) from None
    print(f"{path.stem}: battery charge {percent}%")
