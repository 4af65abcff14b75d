"""The layers of docs/layout.md, held by the imports: ``common`` imports nothing else of the
package, ``collectors`` and ``simulator`` only ``common`` and themselves, and ``agent``
whatever it needs but the few ways inside it that are closed (``MAY_NOT_IMPORT``); and
imports run one way: no module, and no unit (a module or package of a layer's top level,
such as ``agent/config.py`` or ``collectors/redfish/``), imports one that imports it back.
Every import counts, those under ``TYPE_CHECKING`` and inside functions too: a back-import
is a back-import whenever it runs."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "smartarray_agent"

# layer (its package) -> the packages it may import from
MAY_IMPORT = {
    "smartarray_agent.common": ("smartarray_agent.common",),
    "smartarray_agent.collectors": ("smartarray_agent.common", "smartarray_agent.collectors"),
    "smartarray_agent.simulator": ("smartarray_agent.common", "smartarray_agent.simulator"),
}
# a package inside ``agent`` -> the packages of ``agent`` it may not import from: the prober
# is called by the endpoint (exporter), never the other way round, and takes its settings as
# a collector does (``[probe]``'s models are its own, which agent/config.py imports)
MAY_NOT_IMPORT = {
    "smartarray_agent.probe": ("smartarray_agent.exporter", "smartarray_agent.cli",
                               "smartarray_agent.daemon", "smartarray_agent.write",
                               "smartarray_agent.config"),
}


def _source_dirs() -> dict[str, Path]:
    """Each installed package of pyproject.toml's package-dir, with its source folder."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {name: ROOT / folder
            for name, folder in pyproject["tool"]["setuptools"]["package-dir"].items()}


def imported_modules(path: Path, module: str) -> set[str]:
    """Every module of the package that ``path`` (installed as ``module``) imports; ``from
    smartarray_agent import x`` counts as importing ``smartarray_agent.x``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: level 1 is the package the module is in (or is)
                parts = module.split(".")
                parts = parts[: len(parts) - node.level + (path.name == "__init__.py")]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)  # and each name, which may be a module of the package ``base`` is
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


def _within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(package + ".") for package in packages)


def _sources() -> dict[str, Path]:
    """Every module of the installed package, with its source file."""
    found = {}
    for package, folder in _source_dirs().items():
        for path in folder.rglob("*.py"):
            parts = [p for p in path.relative_to(folder).with_suffix("").parts if p != "__init__"]
            if package != PACKAGE or not parts or (folder / parts[0]) not in {
                    ROOT / other for other in ("collectors", "common", "simulator")}:
                found[".".join([package, *parts])] = path
    return found


def _unit(module: str) -> str:
    """The module or package of its layer's top level that ``module`` is or is in."""
    layer = max((name for name in _source_dirs() if _within(module, (name,))), key=len)
    return ".".join(module.split(".")[: layer.count(".") + 2])


def import_graph(unit: bool = False) -> dict[str, set[str]]:
    """Each module (or unit) -> the modules (or units) of the package it imports."""
    sources = _sources()
    graph: dict[str, set[str]] = {}
    for module, path in sources.items():
        imported = set()
        for name in imported_modules(path, module):
            while name not in sources:  # ``a.b.f``, a function of module ``a.b``: ``a.b``
                name = name.rpartition(".")[0]
            imported.add(name)
        if unit:
            graph.setdefault(_unit(module), set()).update(_unit(name) for name in imported)
        else:
            graph[module] = imported
    return graph


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for each import of ``b`` by ``a`` where ``b`` imports ``a`` back, directly
    or through others."""

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        return False

    return sorted(f"{a} -> {b}" for a, imported in graph.items() for b in imported
                  if b != a and reaches(b, a))


def back_imports(package: str) -> list[str]:
    """``file: module`` for each import of ``package``'s sources that it may not make:
    outside ``MAY_IMPORT`` for a layer, inside ``MAY_NOT_IMPORT`` for a package of agent."""
    if package in MAY_IMPORT:
        folder = _source_dirs()[package]
        allowed = MAY_IMPORT[package]
        refused: tuple[str, ...] = ()
    else:
        folder = _source_dirs()[PACKAGE] / package.removeprefix(PACKAGE + ".").replace(".", "/")
        allowed, refused = (PACKAGE,), MAY_NOT_IMPORT[package]
    problems = []
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(folder).with_suffix("")
        parts = [p for p in relative.parts if p != "__init__"]
        module = ".".join([package, *parts])
        for name in sorted(imported_modules(path, module)):
            if not _within(name, allowed) or _within(name, refused):
                problems.append(f"{path.relative_to(ROOT)}: {name}")
    return problems


@pytest.mark.parametrize("layer", list(MAY_IMPORT))
def test_a_layer_imports_only_the_layers_below_it(layer):
    assert layer in _source_dirs(), f"{layer} has no folder of its own in pyproject.toml"
    assert back_imports(layer) == []


@pytest.mark.parametrize("package", list(MAY_NOT_IMPORT))
def test_a_package_of_the_agent_imports_none_it_may_not(package):
    assert (ROOT / "agent" / package.rsplit(".", 1)[1]).is_dir(), package
    assert back_imports(package) == []


@pytest.mark.parametrize("unit", [False, True], ids=["modules", "units"])
def test_imports_run_one_way(unit):
    assert cycles(import_graph(unit)) == []


def test_the_check_sees_a_cycle():
    """A cycle through a third module, and one of two units only (their modules import no
    module back)."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [
        "a -> b", "b -> c", "c -> a"]
    assert _unit("smartarray_agent.probe.prober") == "smartarray_agent.probe"
    assert _unit("smartarray_agent.config") == "smartarray_agent.config"
    assert _unit("smartarray_agent.collectors.redfish.crawl") == (
        "smartarray_agent.collectors.redfish")
    assert _unit("smartarray_agent.collectors") == "smartarray_agent.collectors"


def test_the_check_sees_a_back_import(tmp_path):
    """What the test above walks: an import in a function, a relative one and a bare
    ``from smartarray_agent import``, each found."""
    source = tmp_path / "reader.py"
    source.write_text("from smartarray_agent import vendor\n"
                      "from ..ssacli import parser\n"
                      "def f():\n    from smartarray_agent.write.audit import AuditLog\n")
    assert imported_modules(source, "smartarray_agent.collectors.redfish.reader") == {
        "smartarray_agent", "smartarray_agent.vendor", "smartarray_agent.collectors.ssacli",
        "smartarray_agent.collectors.ssacli.parser", "smartarray_agent.write.audit",
        "smartarray_agent.write.audit.AuditLog"}
    package = tmp_path / "__init__.py"
    package.write_text("from .. import sources\n")
    assert imported_modules(package, "smartarray_agent.collectors") == {
        "smartarray_agent", "smartarray_agent.sources"}


def test_every_source_folder_is_a_layer_or_the_agent():
    """A new folder in package-dir is placed in the layers (docs/layout.md), not left out."""
    assert set(_source_dirs()) == {PACKAGE, *MAY_IMPORT}
