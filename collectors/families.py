"""What every collector's metric families share: the builder of docs/metrics.md's
conventions, and the ``controller`` label. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prometheus_client.core import GaugeMetricFamily, Metric

OTHER, ABSENT = "other", "absent"


class Families:  # gauge families built sample by sample

    def __init__(self, help: Mapping[str, str]) -> None:  # noqa: A002 (Prometheus' word)
        self._help = help
        self._by_name: dict[str, GaugeMetricFamily] = {}

    def gauge(self, name: str, labels: Mapping[str, str], value: float | None) -> None:
        if value is None:
            return
        family = self._by_name.get(name)
        if family is None:
            family = GaugeMetricFamily(name, self._help[name], labels=list(labels))
            self._by_name[name] = family
        family.add_metric(list(labels.values()), value)

    def flag(self, name: str, labels: Mapping[str, str], value: bool | None) -> None:
        self.gauge(name, labels, None if value is None else float(value))

    def state(
        self, name: str, labels: Mapping[str, str], known: Sequence[str], value: str | None,
        label: str = "state",
    ) -> None:
        """One series per known state, ``other`` and ``absent``, the current one 1; ``label``
        tells them apart (``mode``, ``source`` for a kind)."""
        current = ABSENT if value is None else value if value in known else OTHER
        for state in (*known, OTHER, ABSENT):
            self.gauge(name, {**labels, label: state}, 1.0 if state == current else 0.0)

    def unknown_word(
        self, name: str, labels: Mapping[str, str], known: Sequence[str], word: str | None
    ) -> None:
        """The status word when it is outside ``known`` (what alerts on ``other`` quote)."""
        if word is not None and word not in known:
            self.gauge(name, {**labels, "word": word}, 1.0)

    def metrics(self) -> list[Metric]:
        return list(self._by_name.values())


def controller_label(slot: str | None, serial: str | None, index: int | None = None) -> str:
    """The slot (``0``, ``0b``), else ``sn:<serial>``, else ``index:<n>``, else empty."""
    if slot:
        return slot
    if serial and serial.strip():
        return f"sn:{serial.strip()}"
    return f"index:{index}" if index is not None else ""


def unique(labels: Sequence[str]) -> list[str]:
    """A repeated value made unique by ``#2``, ``#3``; linear (4,000 can say ``Slot: 0``)."""
    seen: set[str] = set()
    last: dict[str, int] = {}  # each base's last suffix: every one below it is taken
    out: list[str] = []
    for base in labels:
        n = last.get(base, 1)
        ident = base if n == 1 else f"{base}#{n}"
        while ident in seen:
            n += 1
            ident = f"{base}#{n}"
        last[base] = n
        seen.add(ident)
        out.append(ident)
    return out
