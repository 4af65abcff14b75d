"""The sample of a large test matrix the default run takes (tests/matrix.py, issue #42)."""

from __future__ import annotations

import itertools

from . import matrix
from .test_policy import CACHE_STATES, CHARGES, STATUSES, TABLE
from .test_write_property import BACKUP, CHANGES, FAULTS, SWITCHES

MATRICES = [(STATUSES, list(CHARGES), list(CACHE_STATES), list(TABLE)),
            (list(BACKUP), list(SWITCHES), list(CHANGES), list(FAULTS))]


def test_the_sample_has_every_pair_of_values_in_a_few_cases():
    for dimensions in MATRICES:
        product = list(itertools.product(*dimensions))
        sample = matrix.all_pairs(product, len(dimensions))
        assert set(sample) <= set(product) and len(set(sample)) == len(sample)
        for (i, first), (j, second) in itertools.combinations(enumerate(dimensions), 2):
            seen = {(case[i], case[j]) for case in sample}
            assert seen == set(itertools.product(first, second)), (i, j)
        widest = max(len(a) * len(b) for a, b in itertools.combinations(dimensions, 2))
        assert len(sample) <= widest * 1.2, "a sample near the fewest cases that can hold it"
        assert matrix.all_pairs(product, len(dimensions)) == sample  # the same on every run


def test_the_full_matrix_is_every_combination(monkeypatch):
    dimensions = (["a", "b"], [1, 2, 3], ["x", "y"])
    monkeypatch.setattr(matrix, "_full", True)  # --full-matrix
    assert matrix.cases(*dimensions) == list(itertools.product(*dimensions))
    monkeypatch.setattr(matrix, "_full", False)
    assert len(matrix.cases(*dimensions)) == 6  # 3 x 2 pairs


def test_a_sample_chosen_by_hand_is_every_case_with_the_full_matrix(monkeypatch):
    every = [("crash", 0), ("hang", 5), ("garbage", 2)]
    monkeypatch.setattr(matrix, "_full", False)
    assert matrix.chosen(every, lambda case: case[0] != "hang") == [("crash", 0), ("garbage", 2)]
    monkeypatch.setattr(matrix, "_full", True)  # --full-matrix
    assert matrix.chosen(every, lambda case: case[0] != "hang") == every
