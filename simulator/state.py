"""A simulated host's state directory, which only this user or root may have written
(docs/cli.md, "simulate"): ``state.json``, the scenario as changed so far; ``state.lock``
around every create, modify and reset; ``instance.lock`` while a simulator process runs;
``invocations.jsonl``, every run's events (:meth:`StateStore.log`)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from pydantic import ValidationError

from smartarray_agent.common.files import replace_file
from smartarray_agent.common.trust import distrust, distrusted_entry
from smartarray_agent.simulator.scenario import Scenario, ScenarioError, load_scenario

STATE_DIR_ENV = "SMARTARRAY_SIM_STATE_DIR"


def default_state_dir(scenario_name: str) -> Path:
    """``$SMARTARRAY_SIM_STATE_DIR``, else a folder per scenario in the runtime directory,
    else in this user's private ``/tmp/smartarray-sim-UID`` (a name another could plant)."""
    if os.environ.get(STATE_DIR_ENV):
        return Path(os.environ[STATE_DIR_ENV])
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "smartarray-sim" / scenario_name
    return private_directory(Path(f"/tmp/smartarray-sim-{os.getuid()}")) / scenario_name


def private_directory(directory: Path) -> Path:
    """``directory``, made 0700 when missing; refused unless no one else may write it."""
    with suppress(FileExistsError):
        directory.mkdir(mode=0o700)
    if distrust(directory.lstat(), kind="directory", owners=(os.getuid(),)) is not None:
        raise ScenarioError(
            f"{directory} is not a private directory of uid {os.getuid()}: refusing to keep "
            f"the simulator's state there (set {STATE_DIR_ENV} to a directory of yours)")
    return directory


def make_state_dir(directory: Path) -> Path:
    """``directory``, the missing ones on the way made 0700; ScenarioError, before anything is
    made, unless only this user or root could have changed it and every directory above."""
    directory = Path(os.path.abspath(directory))
    missing: list[Path] = []
    existing = directory
    while not os.path.lexists(existing):
        missing.append(existing)
        existing = existing.parent
    _refuse_untrusted(directory, existing, sticky_ok=True)  # nothing made through a link
    for entry in reversed(missing):
        try:
            entry.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile: checked below like the rest
            pass
        except OSError as error:
            raise ScenarioError(f"cannot make {entry}: {error.strerror or error}") from None
    _refuse_untrusted(directory, directory / "state.json")
    return directory


def _refuse_untrusted(directory: Path, path: Path, *, sticky_ok: bool = False) -> None:
    """ScenarioError unless only this user or root could have changed ``path`` and every
    directory above it (its own even when sticky, unless ``sticky_ok``)."""
    try:
        found = distrusted_entry(path, owners=(0, os.geteuid()), sticky_ok=sticky_ok)
    except OSError as error:
        raise ScenarioError(f"cannot check {error.filename}: {error.strerror or error}: "
                            f"refusing to keep the simulator's state in {directory}") from None
    if found is None:
        return
    entry, why = found
    raise ScenarioError(f"{why.describe(entry)}: refusing to keep the simulator's state in "
                        f"{directory} (set {STATE_DIR_ENV} to a directory of yours)")


def _no_follow(path: str, flags: int) -> int:  # open()'s opener for the state files
    return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)


@contextmanager
def _state_lock(directory: Path) -> Iterator[None]:
    with open(directory / "state.lock", "a", opener=_no_follow) as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _instance_lock(directory: Path) -> int | None:
    """The single-instance lock's descriptor, taken; None while another process has it."""
    fd = _no_follow(str(directory / "instance.lock"), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


class SimulatorBusy(RuntimeError):
    """A simulator process of that host runs: its state is not reset under it."""


def reset(directory: Path) -> bool:
    """Forget the changes made to the host in ``directory``; False when there were none.
    SimulatorBusy while one of its simulator processes runs."""
    state_file = directory / "state.json"
    if not os.path.lexists(state_file):
        return False
    _refuse_untrusted(directory, state_file)
    instance = _instance_lock(directory)
    if instance is None:
        raise SimulatorBusy(f"a simulator process of {directory} runs: not reset under it "
                            "(let it finish, or end it)")
    try:
        with _state_lock(directory):
            state_file.unlink(missing_ok=True)
    finally:
        os.close(instance)  # and with it the instance lock
    return True


def state_dirs() -> list[Path]:
    """This user's simulated hosts: ``$SMARTARRAY_SIM_STATE_DIR``, else each scenario's."""
    if os.environ.get(STATE_DIR_ENV):
        return [Path(os.environ[STATE_DIR_ENV])]
    base = default_state_dir("x").parent
    return sorted(entry for entry in base.iterdir() if entry.is_dir()) if base.is_dir() else []


class StateStore:
    def __init__(self, directory: Path, scenario_path: Path) -> None:
        self.directory = directory
        self.scenario_path = scenario_path
        self.state_file = directory / "state.json"
        self.log_file = directory / "invocations.jsonl"
        make_state_dir(directory)

    def load(self) -> tuple[Scenario, float]:
        """The current scenario state and the wall time it was created."""
        digest = hashlib.sha256(self.scenario_path.read_bytes()).hexdigest()
        saved = self._read()
        state = self._valid(saved, digest)
        if state is None:
            with _state_lock(self.directory):
                saved = self._read()
                state = self._valid(saved, digest)
                if state is None:
                    saved = self._create(digest)
                    state = Scenario.model_validate(saved["state"])
        assert saved is not None
        return state, saved["created_wall"]

    @staticmethod
    def _valid(saved: dict | None, digest: str) -> Scenario | None:
        """The saved state, if it is this scenario file's and still validates."""
        if saved is None or saved["scenario_sha256"] != digest:
            return None
        try:
            return Scenario.model_validate(saved["state"])
        except ValidationError:
            return None

    def update(self, change: Callable[[Scenario], Scenario]) -> Scenario:
        self.load()
        with _state_lock(self.directory):
            saved = self._read()
            assert saved is not None
            new = change(Scenario.model_validate(saved["state"]))
            saved["state"] = new.model_dump(mode="json")
            self._write(saved)
        return new

    def _create(self, digest: str) -> dict:
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
            with open(self.state_file, encoding="utf-8", opener=_no_follow) as handle:
                return json.load(handle)
        except FileNotFoundError:
            return None

    def _write(self, saved: dict) -> None:
        replace_file(self.state_file, json.dumps(saved, indent=1).encode(), 0o644)

    def claim_instance(self) -> int | None:
        """Take the single-instance lock: its descriptor, to close at the run's end; None if
        another has it."""
        return _instance_lock(self.directory)

    def log(self, event: str, ident: str, **fields: object) -> None:
        """One event a line, with the run's id and times: ``start`` (pid, argv, mode),
        ``command`` (command) or ``end`` (pid, exit_code)."""
        record = {"event": event, "id": ident, "monotonic": time.monotonic(), "wall": time.time()}
        line = json.dumps({**record, **fields}) + "\n"
        with open(self.log_file, "a", encoding="utf-8", opener=_no_follow) as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.write(line)
