"""Faults the sim injects into its REST replies, per route and per count (``sim.faults``).

A fault names the requests it hits with a route pattern, ``"METHOD /path"`` written the
way the sim and Discord's spec name routes (``"POST /interactions/{id}/{token}/callback"``):

* ``{anything}`` or ``*`` matches one path segment, ``**`` as the last segment matches the
  rest of the path (none or more segments), any other segment matches only itself (so
  ``"PATCH /channels/123/messages/{id}"`` hits the messages of channel 123 only);
* the method is ``GET``, ``POST``, ``PUT``, ``PATCH``, ``DELETE`` or ``*`` for any;
* ``"*"`` alone matches every REST request.

Paths are relative to ``/api/v10`` and carry no query string. A pattern that matches none of
the sim's routes is refused with :class:`SimUsageError`: a typo must not make a test pass.

What happens to a request that a fault hits, in this order:

1. ``delay``: it reaches the sim ``delay`` s late, as if the network had held it. It counts
   as arriving then: the 3 s interaction deadline and everything else are checked at that
   moment, and the effect is applied then.
2. One outcome, or none (a bare ``delay``):
   ``rate_limit=s``: 429 with ``retry_after`` ``s`` and Discord's rate-limit headers,
   nothing applied; ``global_=True`` makes it the bot's global limit.
   ``status=n``: that status with Discord's error JSON (or ``body``), nothing applied.
   ``reset="before"``: the TCP connection is aborted before anything is applied.
   ``reset="after"``: the request is applied as usual (``applied`` in the record says
   whether the sim accepted it), then the connection is aborted without a response: the
   client sees ``ServerDisconnectedError`` or ``ClientOSError`` and cannot know.
3. ``reply_delay``: applied on arrival, the reply is written ``reply_delay`` s later.

One fault fires per request: the first pending one, in the order they were added, that
matches and has let ``skip`` matching requests through. Every matching request counts
towards each pending fault's ``skip``. A fault fires ``count`` times (``None``: until removed).

After a 429, Discord refuses the same path (every path but the interaction endpoints, for a
global limit) until ``retry_after`` has passed; so does the sim, with another 429 recorded
as ``window=True`` in :attr:`FaultPlan.injected`. discord.py waits as told, so a test can
assert there are none.

Client behaviour worth knowing (aiohttp 3.14 and discord.py 2.7):

* discord.py honours a 429 only if the reply carries a ``Via`` header (else it takes it for
  Cloudflare's ban); the sim sends ``Via: 1.1 google`` on every reply, as Discord does.
* discord.py retries 500, 502, 504 (and 524) after 1, 3, 5... s, and raises
  ``DiscordServerError`` on 503; its webhook and interaction-callback path retries every 5xx.
* aiohttp retries a GET, PUT or DELETE once, by itself, when a reused keep-alive connection
  drops before the response: a ``reset`` with ``count=1`` on those is invisible to the bot
  (and after ``reset="after"`` the retry meets the already applied change: a DELETE then
  gets 404). Use ``count=2`` for the bot to see the error. POST and PATCH are not retried.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from .models import JSON, SimUsageError

ResetWhen = Literal["before", "after"]
Kind = Literal["rate_limit", "status", "reset", "delay", "gateway"]

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
RATE_LIMIT_MESSAGE = "You are being rate limited."
# What Discord reports as a route's limit in the headers of a 429; the sim enforces none.
RATE_LIMIT_LIMIT = 5
# Interaction endpoints are not bound to the bot's global rate limit (Discord's "Rate
# Limits" page), so a global window leaves them alone.
GLOBAL_EXEMPT_PREFIXES = ("/interactions/", "/webhooks/")

_STATUS_TEXT = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def _segments(path: str) -> list[str]:
    return path.strip("/").split("/") if path.strip("/") else []


def _wild(segment: str) -> bool:
    return segment == "*" or (segment.startswith("{") and segment.endswith("}"))


@dataclass(frozen=True)
class RoutePattern:
    """A parsed route pattern (see the module docstring)."""

    text: str
    method: str  # "*" for any
    segments: tuple[str, ...] | None  # None for any path

    @classmethod
    def parse(cls, text: str) -> RoutePattern:
        text = text.strip()
        if text == "*":
            return cls(text, "*", None)
        method, _, path = text.partition(" ")
        method = method.upper()
        path = path.strip()
        if method not in (*METHODS, "*") or not path.startswith("/"):
            raise SimUsageError(
                f"route pattern {text!r}: write it as 'METHOD /path' (METHOD one of "
                f"{', '.join(METHODS)} or *), or '*' for every route"
            )
        if "?" in path:
            raise SimUsageError(f"route pattern {text!r}: patterns match paths, not queries")
        segments = tuple(_segments(path))
        if "**" in segments[:-1]:
            raise SimUsageError(f"route pattern {text!r}: '**' may only be the last segment")
        return cls(text, method, segments)

    def _segments_match(self, parts: list[str], literal: Callable[[str, str], bool]) -> bool:
        assert self.segments is not None
        wanted = list(self.segments)
        if wanted and wanted[-1] == "**":
            wanted.pop()
            parts = parts[: len(wanted)] if len(parts) >= len(wanted) else parts
        if len(wanted) != len(parts):
            return False
        return all(_wild(w) or literal(w, p) for w, p in zip(wanted, parts, strict=True))

    def matches(self, method: str, path: str) -> bool:
        """Whether the request ``method path`` (relative to /api/v10) is hit."""
        if self.method not in ("*", method):
            return False
        if self.segments is None:
            return True
        return self._segments_match(_segments(path), lambda want, got: want == got)

    def covers(self, route: str) -> bool:
        """Whether some request of ``route`` ("METHOD /template") could be hit."""
        method, _, template = route.partition(" ")
        if self.method not in ("*", method):
            return False
        if self.segments is None:
            return True
        return self._segments_match(
            _segments(template), lambda want, got: want == got or _wild(got)
        )


@dataclass(eq=False)
class Fault:
    """One fault as :meth:`FaultPlan.add` made it; ``fired`` counts how often it fired and
    ``seen`` how many matching requests it has counted (those it skipped included)."""

    id: int
    route: str
    pattern: RoutePattern = field(repr=False)
    status: int | None = None
    body: Any = None
    rate_limit: float | None = None
    global_: bool = False
    reset: ResetWhen | None = None
    delay: float = 0.0
    reply_delay: float = 0.0
    count: int | None = 1
    skip: int = 0
    seen: int = 0
    fired: int = 0

    @property
    def kind(self) -> Kind:
        if self.rate_limit is not None:
            return "rate_limit"
        if self.status is not None:
            return "status"
        if self.reset is not None:
            return "reset"
        return "delay"

    @property
    def exhausted(self) -> bool:
        return self.count is not None and self.fired >= self.count

    def summary(self) -> JSON:
        return {
            "id": self.id,
            "route": self.route,
            "kind": self.kind,
            "status": self.status,
            "rate_limit": self.rate_limit,
            "global": self.global_,
            "reset": self.reset,
            "delay": self.delay,
            "reply_delay": self.reply_delay,
            "count": self.count,
            "skip": self.skip,
            "seen": self.seen,
            "fired": self.fired,
        }


@dataclass(frozen=True)
class Injected:
    """A fault that fired: what the request was and what the client got.

    ``route`` is the sim's name for it ("PATCH /channels/{channel_id}/messages/{message_id}";
    the path itself for a route the sim does not serve, "GATEWAY" for a gateway close),
    ``status`` what the client received (None after a reset), ``applied`` whether the
    request's effect is in the sim's state, ``at`` the ``time.monotonic()`` it fired at.
    ``window`` marks a 429 that no fault asked for: a request inside an earlier 429's
    ``retry_after``. ``detail`` says more (the close code of a gateway close...).
    """

    fault: Fault | None
    kind: Kind
    method: str
    path: str
    route: str
    status: int | None
    applied: bool
    at: float
    window: bool = False
    detail: str = ""

    def summary(self) -> JSON:
        return {
            "fault": self.fault.id if self.fault else None,
            "kind": self.kind,
            "method": self.method,
            "path": self.path,
            "route": self.route,
            "status": self.status,
            "applied": self.applied,
            "window": self.window,
            "detail": self.detail,
        }


@dataclass
class _Window:
    method: str | None  # None with path None: the global limit
    path: str | None
    until: float
    global_: bool


class FaultPlan:
    """``sim.faults``: add faults, see what fired. See the module docstring."""

    def __init__(self, routes: Iterable[str]) -> None:
        self._routes = list(routes)
        self._ids = itertools.count(1)
        self._faults: list[Fault] = []
        self._windows: list[_Window] = []
        self.injected: list[Injected] = []

    def add(
        self,
        route: str = "*",
        *,
        status: int | None = None,
        body: Any = None,
        rate_limit: float | None = None,
        global_: bool = False,
        reset: ResetWhen | None = None,
        delay: float = 0.0,
        reply_delay: float = 0.0,
        count: int | None = 1,
        skip: int = 0,
    ) -> Fault:
        """Make the next ``count`` requests matching ``route`` (after ``skip`` of them)
        fail as told: ``status`` (with ``body`` instead of Discord's error JSON),
        ``rate_limit`` (a 429 with that ``retry_after``; ``global_`` for the global limit),
        ``reset`` ("before" or "after" the request is applied), and/or ``delay`` (late
        arrival) or ``reply_delay`` (late reply). Returns the :class:`Fault`."""
        pattern = RoutePattern.parse(route)
        outcomes = [o for o in (status, rate_limit, reset) if o is not None]
        if len(outcomes) > 1:
            raise SimUsageError("a fault has one outcome: status, rate_limit or reset")
        if not outcomes and not delay and not reply_delay:
            raise SimUsageError("a fault needs status, rate_limit, reset, delay or reply_delay")
        if status is not None and not 400 <= status <= 599:
            raise SimUsageError(f"status={status}: a fault answers with a 4xx or 5xx status")
        if status == 429:
            raise SimUsageError("use rate_limit=seconds for a 429, so it carries its headers")
        if rate_limit is not None and rate_limit <= 0:
            raise SimUsageError("rate_limit is the retry_after in seconds: more than 0")
        if global_ and rate_limit is None:
            raise SimUsageError("global_=True qualifies a rate_limit fault")
        if body is not None and status is None:
            raise SimUsageError("body= goes with status=")
        if reset not in (None, "before", "after"):
            raise SimUsageError(f"reset={reset!r}: 'before' or 'after'")
        if delay < 0 or reply_delay < 0 or skip < 0 or (count is not None and count < 1):
            raise SimUsageError("delay, reply_delay and skip are >= 0, count >= 1 or None")
        if not any(pattern.covers(r) for r in self._routes):
            raise SimUsageError(
                f"route pattern {route!r} matches none of the sim's routes: "
                + ", ".join(self._routes)
            )
        fault = Fault(
            next(self._ids),
            route,
            pattern,
            status=status,
            body=body,
            rate_limit=rate_limit,
            global_=global_,
            reset=reset,
            delay=delay,
            reply_delay=reply_delay,
            count=count,
            skip=skip,
        )
        self._faults.append(fault)
        return fault

    @property
    def pending(self) -> list[Fault]:
        """The faults that may still fire, in the order they were added."""
        return [f for f in self._faults if not f.exhausted]

    def remove(self, fault: Fault) -> None:
        if fault in self._faults:
            self._faults.remove(fault)

    def clear(self) -> None:
        """Forget every pending fault and open rate-limit window; ``injected`` stays."""
        self._faults.clear()
        self._windows.clear()

    def fired(self, kind: Kind | None = None, route: str | None = None) -> list[Injected]:
        """The injected faults of that kind, whose request matches the pattern ``route``."""
        pattern = RoutePattern.parse(route) if route is not None else None
        return [
            i
            for i in self.injected
            if (kind is None or i.kind == kind)
            and (pattern is None or pattern.matches(i.method, i.path))
        ]

    # ------------------------------------------------------------------ used by the server

    def take(self, method: str, path: str) -> Fault | None:
        """The fault that fires for this request, if any (counting it everywhere)."""
        chosen: Fault | None = None
        for fault in self.pending:
            if not fault.pattern.matches(method, path):
                continue
            fault.seen += 1
            if chosen is None and fault.seen > fault.skip:
                chosen = fault
        if chosen is not None:
            chosen.fired += 1
        return chosen

    def window(self, method: str, path: str, now: float) -> _Window | None:
        """The open 429 window that refuses this request, if any."""
        self._windows = [w for w in self._windows if w.until > now]
        for window in self._windows:
            if window.global_:
                if not path.startswith(GLOBAL_EXEMPT_PREFIXES):
                    return window
            elif (window.method, window.path) == (method, path):
                return window
        return None

    def open_window(self, method: str, path: str, retry_after: float, global_: bool) -> None:
        until = time.monotonic() + retry_after
        if global_:
            self._windows.append(_Window(None, None, until, True))
        else:
            self._windows.append(_Window(method, path, until, False))

    def record(self, injected: Injected) -> None:
        # No wake-up here: the server wakes waiters once its reply is on the wire.
        self.injected.append(injected)


def rate_limit_reply(
    route: str, retry_after: float, global_: bool
) -> tuple[int, JSON, dict[str, str]]:
    """A 429 as Discord sends it: what discord.py's HTTPClient and webhook adapter read."""
    retry_after = round(max(retry_after, 0.001), 3)
    bucket = hashlib.sha256(route.encode()).hexdigest()[:32]
    headers = {
        "Retry-After": str(math.ceil(retry_after)),
        "X-RateLimit-Limit": str(RATE_LIMIT_LIMIT),
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
        "X-RateLimit-Reset-After": f"{retry_after:.3f}",
        "X-RateLimit-Bucket": bucket,
        "X-RateLimit-Scope": "global" if global_ else "user",
    }
    if global_:
        headers["X-RateLimit-Global"] = "true"
    body: JSON = {"message": RATE_LIMIT_MESSAGE, "retry_after": retry_after, "global": global_}
    return 429, body, headers


def status_reply(status: int, body: Any) -> tuple[int, Any]:
    if body is not None:
        return status, body
    return status, {"message": f"{status}: {_STATUS_TEXT.get(status, 'Error')}", "code": 0}
