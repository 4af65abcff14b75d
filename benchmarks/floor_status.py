"""The named stack's floor for ``status --input FILE --json``: a typer command that reads
the same file into a pydantic model and prints it as JSON (benchmarks/status_bench.py).

    python benchmarks/floor_status.py CAPTURE
"""

from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel


class Line(BaseModel):
    key: str
    value: str | None = None


class Capture(BaseModel):
    lines: list[Line]


def main(capture: Annotated[Path, typer.Argument(exists=True, dir_okay=False)]) -> None:
    pairs = (line.partition(":") for line in capture.read_text().splitlines() if line.strip())
    model = Capture(lines=[Line(key=k.strip(), value=v.strip() if sep else None)
                           for k, sep, v in pairs])
    print(model.model_dump_json(indent=2))


if __name__ == "__main__":
    typer.run(main)
