"""The one error every Redfish failure becomes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from smartarray_agent.collectors.base import CollectionError


class RedfishError(CollectionError):
    """A Redfish collection failed (as any other, for the collection loop). The message is
    one line and never holds a password or a session token."""


# What mapping a JSON document that parsed can still raise on a hostile value (a wrong type
# where a helper trusted one, a number too large to convert, nesting too deep to copy).
UNREADABLE = (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError)


@contextlib.contextmanager
def answers_read(where: str) -> Iterator[None]:
    """Around the reading of an iLO's answers: any of :data:`UNREADABLE` is a RedfishError,
    "the iLO could not be read", never a traceback."""
    try:
        yield
    except UNREADABLE as error:
        raise RedfishError(f"{where}: an answer could not be read: "
                           f"{type(error).__name__}") from None
