"""Mutations of CLI captures for robustness tests: each takes text and a Random."""

from __future__ import annotations

import random

JUNK = ["\x00", "\x1b[0m", "\ufffd", "\xff", "::::", "(", ")", "Error:", "=> ", "\t", "\x0c",
        "in Slot ", "physicaldrive ", "logicaldrive 1 (", "Array: ", "Sensor ID: "]


def drop_line(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    if lines:
        del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def duplicate_line(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    index = rng.randrange(len(lines))
    lines.insert(index, lines[index])
    return "\n".join(lines)


def swap_lines(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


def truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randrange(len(text) + 1)]


def reindent(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    index = rng.randrange(len(lines))
    lines[index] = " " * rng.randrange(12) + lines[index].lstrip()
    return "\n".join(lines)


def indent_all(text: str, rng: random.Random) -> str:
    pad = " " * rng.randrange(1, 9)
    return "\n".join(pad + line for line in text.split("\n"))


def trailing_blanks(text: str, rng: random.Random) -> str:
    return "\n".join(line + " " * rng.randrange(4) for line in text.split("\n"))


def crlf(text: str, rng: random.Random) -> str:
    return text.replace("\n", rng.choice(["\r\n", "\r", "\n\n"]))


def junk(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(JUNK) + text[at:]


def random_bytes(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
    return text[:at] + noise.decode("latin-1") + text[at:]


MUTATIONS = [drop_line, duplicate_line, swap_lines, truncate, reindent, indent_all,
             trailing_blanks, crlf, junk, random_bytes]


def mutate(text: str, rng: random.Random, rounds: int) -> str:
    for _ in range(rounds):
        text = rng.choice(MUTATIONS)(text, rng)
    return text
