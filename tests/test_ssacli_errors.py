"""Every error of the vendor CLI's source shares one base, :class:`SsacliError`, so that a
caller catches it once (issue #52 item 3): a class of collectors/ssacli that did not would
escape every such caller as a crash."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from smartarray_agent.collectors import ssacli
from smartarray_agent.collectors.ssacli.errors import SsacliError


def test_every_exception_of_the_ssacli_source_is_an_ssacli_error():
    found = {}
    for module in pkgutil.iter_modules(ssacli.__path__):
        loaded = importlib.import_module(f"{ssacli.__name__}.{module.name}")
        for name, value in vars(loaded).items():
            if (inspect.isclass(value) and issubclass(value, Exception)
                    and value.__module__ == loaded.__name__ and not name.startswith("_")):
                found[name] = value
    assert len(found) >= 10  # the lock's, the run's, the console's, the parser's, ...
    assert [name for name, kind in found.items() if not issubclass(kind, SsacliError)] == []
