"""The cases of a test matrix: every combination with ``--full-matrix`` (what .ci/run runs),
else a fixed sample that still has every value of every dimension, and every pair of values
of any two dimensions, in some case (issue #42). A list of cases that is not a product (each
case with its own expected result) takes a sample chosen by hand instead (:func:`chosen`).

The sample rule (all-pairs, a covering array of strength 2): go through the full product in
its order; keep the combination that covers the most pairs not yet covered (the first one
on a tie), until every pair is covered. Each state then meets each fault and each kind at
least once; what the sample leaves out is only a triple (and more) not yet seen together.
The rule has no randomness: the same cases on every run and every xdist worker."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

Case = TypeVar("Case")

_full = False


def run_every_case(full: bool) -> None:
    """Set from the ``--full-matrix`` option (tests/conftest.py) before the tests are
    collected."""
    global _full
    _full = full


def cases(*dimensions: Iterable[Any]) -> list[tuple[Any, ...]]:
    """Every combination of the dimensions' values, or the all-pairs sample of them."""
    values = [list(dimension) for dimension in dimensions]
    product = list(itertools.product(*values))
    return product if _full else all_pairs(product, len(values))


def chosen(every: Sequence[Case], sampled: Callable[[Case], bool]) -> list[Case]:
    """Every case with ``--full-matrix``, else the ones ``sampled`` keeps."""
    return list(every) if _full else [case for case in every if sampled(case)]


def all_pairs(product: Sequence[tuple[Any, ...]], width: int) -> list[tuple[Any, ...]]:
    """The combinations of ``product`` the sample rule (above) keeps, in product order."""
    indices = list(itertools.combinations(range(width), 2))
    pairs = [{(i, case[i], j, case[j]) for i, j in indices} for case in product]
    uncovered = set().union(*pairs)
    chosen: set[int] = set()
    while uncovered:
        best = max(range(len(product)), key=lambda n: len(pairs[n] & uncovered))
        chosen.add(best)
        uncovered -= pairs[best]
    return [product[n] for n in sorted(chosen)]
