"""Write the alert rules, the Alertmanager example and the Grafana dashboards from the
monitoring mixin (mixin.libsonnet), with the jsonnet package from PyPI (`pip install jsonnet`).

    python3 packaging/mixin/generate.py                  # into the checkout's packaging/ files
    python3 generate.py --config mine.libsonnet --out DIR   # your settings, into DIR

`--config` names a jsonnet file holding an object merged over the mixin's _config (for
example `{ agentJob: 'hpe', runbookURLPattern: 'https://wiki.example.com/smartarray#%s' }`).
With `--out` the four files go flat into DIR: alerts.yml, alertmanager.yml, dashboard.json,
fleet.json. tests/test_mixin.py fails when the checkout's files are not what this writes."""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import _jsonnet
import yaml

MIXIN = Path(__file__).resolve().parent
CHECKOUT = MIXIN.parent.parent
ROLE_FILES = ("packaging/ansible/ansible_collections/smartarray/agent/roles/smartarray_agent/"
              "files")
# Each output file and where the checkout keeps it (the role renders the rules from its copy).
PLACES = {
    "alerts.yml": ("packaging/prometheus/alerts.yml", f"{ROLE_FILES}/alerts.yml"),
    "alertmanager.yml": ("packaging/prometheus/alertmanager.yml",),
    "dashboard.json": ("packaging/grafana/dashboard.json",),
    "fleet.json": ("packaging/grafana/fleet.json",),
}
# jsonnet sorts an object's keys; YAML readers expect a rule's name first and its text last.
KEY_ORDER = ["name", "alert", "expr", "for", "labels", "annotations", "summary", "description",
             "runbook_url", "rules", "route", "receiver", "group_by", "group_wait",
             "group_interval", "repeat_interval", "receivers", "inhibit_rules",
             "source_matchers", "target_matchers", "equal"]
SNIPPET = """
local mixin = (import 'mixin.libsonnet') + { _config+:: std.extVar('config') };
{
  alerts: mixin.prometheusAlerts,
  alertsHeader: mixin.alertsHeader,
  alertmanager: mixin.alertmanagerConfig,
  alertmanagerHeader: mixin.alertmanagerHeader,
  dashboards: mixin.grafanaDashboards,
}
"""


class Folded(str):
    """A description: written in YAML's folded style (`>-`), wrapped at the dumper's width."""


class _Dumper(yaml.SafeDumper):
    """Lists indented under their key, one line per PromQL expression or summary however long
    (only folded descriptions wrap), multi-line expressions as literal blocks."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def write_plain(self, text: str, split: bool = True) -> None:
        super().write_plain(text, False)

    def write_single_quoted(self, text: str, split: bool = True) -> None:
        super().write_single_quoted(text, False)

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        super().write_double_quoted(text, False)

    def write_folded(self, text: str) -> None:
        """PyYAML's folding, but never inside a `{{ ... }}` template action."""
        if "\n" in text:
            super().write_folded(text)
            return
        self.write_indicator(">" + self.determine_block_hints(text), True)
        for line in _wrap(text, self.best_width - (self.indent or 0)):
            self.write_line_break()
            self.write_indent()
            self.column += len(line)
            self.stream.write(line)
        self.write_line_break()


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width` (a longer word stays whole) that fold back into `text`."""
    kept = re.sub(r"\{\{.*?\}\}", lambda m: m.group(0).replace(" ", "\0"), text)
    lines = textwrap.wrap(kept, width, break_long_words=False, break_on_hyphens=False)
    return [line.replace("\0", " ") for line in lines]


def _string(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = ">" if isinstance(text, Folded) else "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _string)
_Dumper.add_representer(Folded, _string)


def _ordered(value: Any) -> Any:
    """KEY_ORDER's order, descriptions folded."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (KEY_ORDER.index(k) if k in KEY_ORDER else 99, k))
        return {k: Folded(value[k]) if k == "description" else _ordered(value[k]) for k in keys}
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return value


def _yaml(header: str, document: dict) -> str:
    comment = "".join(f"# {line}".rstrip() + "\n" for line in header.rstrip("\n").split("\n"))
    body = yaml.dump(_ordered(document), Dumper=_Dumper, sort_keys=False, width=96,
                     allow_unicode=True)
    if yaml.safe_load(body) != document:  # a fold that loses a space, say
        raise ValueError("the YAML written does not read back as the mixin's document")
    return comment + body


def render(config: str = "{}") -> dict[str, str]:
    """Every output file's name and text, the mixin's _config extended by `config` (jsonnet)."""
    out = json.loads(_jsonnet.evaluate_snippet(str(MIXIN / "generate.jsonnet"), SNIPPET,
                                               ext_codes={"config": config}))
    files = {
        "alerts.yml": _yaml(out["alertsHeader"], out["alerts"]),
        "alertmanager.yml": _yaml(out["alertmanagerHeader"], out["alertmanager"]),
    }
    for name, board in out["dashboards"].items():
        files[name] = json.dumps(board, indent=2, ensure_ascii=False) + "\n"
    assert set(files) == set(PLACES), sorted(files)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, help="a jsonnet object merged over _config")
    parser.add_argument("--out", type=Path, help="write the files flat into this directory")
    args = parser.parse_args(argv)
    if not args.out and not (CHECKOUT / "pyproject.toml").exists():
        parser.error("not in a checkout of smartarray-agent: say where with --out DIR")
    config = args.config.read_text(encoding="utf-8") if args.config else "{}"
    for name, text in render(config).items():
        targets = [args.out / name] if args.out else [CHECKOUT / p for p in PLACES[name]]
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
