"""Per-instance simulator state on disk, the single-instance lock, and the invocation log.

A state directory holds ``state.json`` (the scenario as modified so far, created from the
scenario file on first use and again when that file changes, and after a :func:`reset`),
``state.lock`` (flock around every create, modify and reset), ``instance.lock`` (held while
a simulator process runs) and
``invocations.jsonl``: one JSON object a line, ``event`` being ``start`` (id, pid, argv, mode),
``command`` (id, command) or ``end`` (id, pid, exit_code); every event also has ``monotonic``
(CLOCK_MONOTONIC, comparable between processes) and ``wall`` (epoch seconds).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from smartarray_agent.common.trust import distrust
from smartarray_agent.simulator.scenario import Scenario, ScenarioError, load_scenario

STATE_DIR_ENV = "SMARTARRAY_SIM_STATE_DIR"


def default_state_dir(scenario_name: str) -> Path:
    """``$SMARTARRAY_SIM_STATE_DIR``, else a per-scenario folder in the runtime directory,
    else in ``/tmp/smartarray-sim-UID``, which must then be this user's own private
    directory (a name in a shared directory could be planted by another user)."""
    if os.environ.get(STATE_DIR_ENV):
        return Path(os.environ[STATE_DIR_ENV])
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "smartarray-sim" / scenario_name
    return private_directory(Path(f"/tmp/smartarray-sim-{os.getuid()}")) / scenario_name


def private_directory(directory: Path) -> Path:
    """``directory``, made 0700 when missing; refused unless it is a real directory of this
    user that no one else may write."""
    with suppress(FileExistsError):
        directory.mkdir(mode=0o700)
    if distrust(directory.lstat(), kind="directory", owners=(os.getuid(),)) is not None:
        raise ScenarioError(
            f"{directory} is not a private directory of uid {os.getuid()}: refusing to keep "
            f"the simulator's state there (set {STATE_DIR_ENV} to a directory of yours)")
    return directory


@contextmanager
def _state_lock(directory: Path) -> Iterator[None]:
    """The state lock: around every create, modify and reset of ``state.json``."""
    with open(directory / "state.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class SimulatorBusy(RuntimeError):
    """A simulator process of that host runs: its state is not reset under it."""


def reset(directory: Path) -> bool:
    """Forget what changes did to the simulated host in ``directory``: its next command
    starts again from the scenario file. False when there was nothing to forget; raises
    SimulatorBusy while one of its simulator processes runs (its instance lock is held)."""
    state_file = directory / "state.json"
    if not state_file.exists():
        return False
    instance = os.open(directory / "instance.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(instance, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SimulatorBusy(f"a simulator process of {directory} runs: not reset under "
                                "it (let it finish, or end it)") from None
        with _state_lock(directory):
            state_file.unlink(missing_ok=True)
    finally:
        os.close(instance)  # and with it the instance lock
    return True


def state_dirs() -> list[Path]:
    """Every simulated host's state directory of this user: ``$SMARTARRAY_SIM_STATE_DIR``
    alone when it is set, else each scenario's under the runtime directory."""
    if os.environ.get(STATE_DIR_ENV):
        return [Path(os.environ[STATE_DIR_ENV])]
    base = default_state_dir("x").parent
    return sorted(entry for entry in base.iterdir() if entry.is_dir()) if base.is_dir() else []


class StateStore:
    """The state directory of one simulated host."""

    def __init__(self, directory: Path, scenario_path: Path) -> None:
        self.directory = directory
        self.scenario_path = scenario_path
        self._instance_fd: int | None = None
        directory.mkdir(parents=True, exist_ok=True)

    @property
    def state_file(self) -> Path:
        return self.directory / "state.json"

    @property
    def log_file(self) -> Path:
        return self.directory / "invocations.jsonl"

    def _locked(self) -> AbstractContextManager[None]:
        return _state_lock(self.directory)

    def load(self) -> tuple[Scenario, float]:
        """The current scenario state and the wall time it was created."""
        digest = hashlib.sha256(self.scenario_path.read_bytes()).hexdigest()
        saved = self._read()
        state = self._valid(saved, digest)
        if state is None:
            with self._locked():
                saved = self._read()
                state = self._valid(saved, digest)
                if state is None:
                    saved = self._create(digest)
                    state = Scenario.model_validate(saved["state"])
        assert saved is not None
        return state, saved["created_wall"]

    @staticmethod
    def _valid(saved: dict | None, digest: str) -> Scenario | None:
        """The saved state, when it is of this scenario file and still validates (another
        version of the simulator may have saved it); None otherwise."""
        if saved is None or saved["scenario_sha256"] != digest:
            return None
        try:
            return Scenario.model_validate(saved["state"])
        except ValidationError:
            return None

    def update(self, change: Callable[[Scenario], Scenario]) -> Scenario:
        """Apply ``change`` to the saved state under the state lock."""
        self.load()
        with self._locked():
            saved = self._read()
            assert saved is not None
            new = change(Scenario.model_validate(saved["state"]))
            saved["state"] = new.model_dump(mode="json")
            self._write(saved)
        return new

    def _create(self, digest: str) -> dict:
        """Validate the scenario file and save its state, keyed by the file's digest."""
        scenario = load_scenario(self.scenario_path)
        saved = {
            "scenario_path": str(self.scenario_path),
            "scenario_sha256": digest,
            "created_wall": time.time(),
            "state": scenario.model_dump(mode="json"),
        }
        self._write(saved)
        return saved

    def _read(self) -> dict | None:
        try:
            return json.loads(self.state_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def _write(self, saved: dict) -> None:
        tmp = self.directory / ".state.json.tmp"  # one name: every write holds the state lock
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(saved, handle, indent=1)
        os.replace(tmp, self.state_file)

    def claim_instance(self) -> bool:
        """Hold the single-instance lock until the process ends; False if another has it."""
        fd = os.open(self.directory / "instance.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._instance_fd = fd
        return True

    def log(self, event: str, ident: str, **fields: object) -> None:
        """Append one invocation-log event."""
        record = {"event": event, "id": ident, "monotonic": time.monotonic(), "wall": time.time()}
        line = json.dumps({**record, **fields}) + "\n"
        with open(self.log_file, "a", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.write(line)


@dataclass
class Invocation:
    """One simulator process, from its ``start`` and ``end`` events."""

    id: str
    pid: int
    argv: list[str]
    mode: str
    start_monotonic: float
    start_wall: float
    end_monotonic: float | None = None  # None: still running, or killed by SIGKILL
    end_wall: float | None = None
    exit_code: int | None = None
    commands: list[str] = field(default_factory=list)


def read_invocations(directory: Path) -> list[Invocation]:
    """Invocations recorded in ``directory``, in start order."""
    found: dict[str, Invocation] = {}
    path = directory / "invocations.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    for record in map(json.loads, lines):
        ident = record["id"]
        if record["event"] == "start":
            found[ident] = Invocation(
                ident, record["pid"], record["argv"], record["mode"],
                record["monotonic"], record["wall"],
            )  # fmt: skip
        elif record["event"] == "command":
            found[ident].commands.append(record["command"])
        else:
            found[ident].end_monotonic = record["monotonic"]
            found[ident].end_wall = record["wall"]
            found[ident].exit_code = record["exit_code"]
    return sorted(found.values(), key=lambda inv: inv.start_monotonic)


def overlaps(invocations: list[Invocation]) -> list[tuple[Invocation, Invocation]]:
    """Pairs of invocations that ran at the same time (an unfinished one never ends)."""
    pairs = []
    ordered = sorted(invocations, key=lambda inv: inv.start_monotonic)
    for index, first in enumerate(ordered):
        end = first.end_monotonic if first.end_monotonic is not None else float("inf")
        pairs += [(first, later) for later in ordered[index + 1 :] if later.start_monotonic < end]
    return pairs
