"""Secrets as the agent accepts them: the test TLS key and web configs written mode 0600
(a checkout leaves tests/tls/server.key 0644, which the agent refuses as root)."""

from __future__ import annotations

import shutil
from pathlib import Path

TLS = Path(__file__).with_name("tls")


def tls_files(directory: Path) -> tuple[Path, Path]:
    """The test certificate and its key, copied into ``directory`` (the key mode 0600)."""
    cert, key = directory / "server.crt", directory / "server.key"
    shutil.copyfile(TLS / "server.crt", cert)
    shutil.copyfile(TLS / "server.key", key)
    key.chmod(0o600)
    return cert, key


def write_secret(path: Path, text: str) -> Path:
    """``text`` in ``path``, readable by its owner only."""
    path.write_text(text)
    path.chmod(0o600)
    return path
