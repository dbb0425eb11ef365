"""The gateway's events, each read so that one that cannot be read is dropped with a warning
instead of ending the process.

discord.py reads each dispatch with the parser its ``ConnectionState.parsers`` table holds for
the event, inside the gateway's read loop: one that raises (a field Discord's next API version
sends in another shape, a hand-made payload) ends ``connect()``, and with it every server the
process serves. :func:`guard` wraps every parser but READY's (a session that cannot be read is
no session), so that such an event is logged once, with its type and id, and dropped.

An interaction with neither a ``member`` nor a ``user`` is such an event too: discord.py reads
it without complaint, with no user, on which every handler would fail. So is one of a type
discord.py routes to no handler (a type Discord adds later): it reads it and answers nothing,
and no answer the bot could send would mean anything to Discord for a type it does not know.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

# A parser of one event's data, as discord.py's table holds them.
Parser = Callable[[Any], None]
# A guarded parser: whether it could read the event.
Reader = Callable[[Any], bool]

_UNGUARDED = frozenset({"READY"})
# The interaction types discord.py hands to a handler: application commands, components,
# autocompletes and modal submits (a PING never comes but to the endpoint, which answers it).
_ROUTED_TYPES = frozenset({2, 3, 4, 5})


def guard(parsers: dict[str, Parser]) -> dict[str, Reader]:
    """Wrap each parser of ``parsers`` (discord.py's table, changed in place) but READY's;
    returns, by event, the same guard saying whether it read the event (for events that do
    not come through the table: the endpoint's interactions)."""
    readers: dict[str, Reader] = {}
    for event, parse in list(parsers.items()):
        if event not in _UNGUARDED:
            parsers[event] = functools.partial(_read_or_drop, event, parse)
            readers[event] = functools.partial(read, event, parse)
    return readers


def _read_or_drop(event: str, parse: Parser, data: Any) -> None:
    read(event, parse, data)


def read(event: str, parse: Parser, data: Any) -> bool:
    """``parse(data)``; False, with a warning, if it could not read it."""
    try:
        _check(event, data)
        parse(data)
    except Exception as error:
        token = data.get("token") if isinstance(data, dict) else None
        reason = f"{type(error).__name__}: {error}"
        if isinstance(token, str) and token:
            reason = reason.replace(token, "<token>")
        event_id = data.get("id") if isinstance(data, dict) else None
        log.warning(
            "dropped a %s event (id %s) that could not be read: %s", event, event_id, reason
        )
        return False
    return True


def _check(event: str, data: Any) -> None:
    """Refuse, as discord.py refuses what it cannot read, what it reads but no handler can
    use (see the module)."""
    if event != "INTERACTION_CREATE" or not isinstance(data, dict):
        return
    if data.get("member") is None and data.get("user") is None:
        raise ValueError("an interaction with neither a member nor a user")
    kind = data.get("type")
    # type() rather than isinstance(): true is an int to Python, and equal to 1.
    if type(kind) is not int or kind not in _ROUTED_TYPES:
        raise ValueError(f"an interaction of type {kind!r}, which no handler takes")
