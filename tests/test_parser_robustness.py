"""Mutated captures never raise anything but ParseError, and what parses is a valid model."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smartarray_agent.collectors.ssacli.parser import ParseError, parse
from smartarray_agent.common.model import Snapshot, to_json

from .captures import needs_captures, real_files
from .model_reader import read_snapshot
from .mutations import mutate

CAPTURES = [path.read_text(errors="replace") for path in real_files()]


def _parse_or_refuse(text: str | bytes) -> Snapshot | None:
    try:
        snapshot = parse(text)
    except ParseError:
        return None
    # whatever parses has every value of its declared type and survives its own JSON
    assert read_snapshot(to_json(snapshot)) == snapshot
    return snapshot


@needs_captures
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(min_value=0), rng=st.randoms(use_true_random=False),
       rounds=st.integers(min_value=1, max_value=6))
def test_mutated_captures_parse_or_raise_parse_error(index, rng, rounds):
    text = CAPTURES[index % len(CAPTURES)]
    _parse_or_refuse(mutate(text, rng, rounds))


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_parses_or_raises_parse_error(text):
    _parse_or_refuse(text)


@settings(max_examples=200, deadline=None)
@given(st.binary())
def test_arbitrary_bytes_parse_or_raise_parse_error(data):
    _parse_or_refuse(data)


FUZZ_INPUTS = 100_000


@needs_captures
@pytest.mark.fuzz
def test_fuzz_100k_mutated_captures():
    """The long run: ``pytest -m fuzz -s`` prints inputs, refusals and the rate."""
    rng = random.Random(20261121)
    refused = 0
    started = time.perf_counter()
    for _ in range(FUZZ_INPUTS):
        text = mutate(rng.choice(CAPTURES), rng, rng.randrange(1, 8))
        if _parse_or_refuse(text) is None:
            refused += 1
    elapsed = time.perf_counter() - started
    print(f"\nfuzz: {FUZZ_INPUTS} inputs, {refused} ParseError, no other exception, "
          f"{elapsed:.1f} s ({FUZZ_INPUTS / elapsed:.0f} inputs/s)")
