"""The soak's accounting: every interaction the sim sent must have its answer, or be
accounted for by a kill, by a fault injected on its callback, or by a session Discord
invalidated; a Discord rule broken only because of an injected fault is excused, any other is
a failure. Over HTTP a kill accounts only for a request whose connection it dropped or
refused: there is no callback to fault and no session to lose.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from tests.discord_sim import DiscordSim, InteractionRecord
from tests.discord_sim.faults import Injected

# -- 4. every interaction got an answer, or is accounted for ------------------------------------


@dataclass(frozen=True)
class Kill:
    at: float  # time.monotonic() of the SIGKILL
    # When the restarted bot had IDENTIFYed; over HTTP, when every worker answered again.
    back: float
    worker: int | None = None  # over HTTP, the one worker killed (gunicorn replaced it)


@dataclass(frozen=True)
class GatewayClose:
    at: float
    done: float  # when the bot had resumed or identified again (or the wait gave up)
    resumable: bool


@dataclass
class Faulted:
    """The injected faults that hit one interaction's callback, and its webhook calls."""

    callback: list[Injected] = field(default_factory=list)
    webhook: list[Injected] = field(default_factory=list)


def faulted_interactions(
    injected: Iterable[Injected], records: Iterable[InteractionRecord]
) -> dict[int, Faulted]:
    by_token = {record.token: record.id for record in records}
    found: dict[int, Faulted] = {}
    for fault in injected:
        parts = fault.path.strip("/").split("/")
        if len(parts) >= 3 and parts[0] == "interactions" and parts[1].isdigit():
            found.setdefault(int(parts[1]), Faulted()).callback.append(fault)
        elif len(parts) >= 3 and parts[0] == "webhooks" and parts[2] in by_token:
            found.setdefault(by_token[parts[2]], Faulted()).webhook.append(fault)
    return found


@dataclass
class Accounting:
    counts: Counter[str]
    unexplained: list[str]
    # What an injected fault did to an interaction's first answer: made it "late" (held past
    # the deadline) or "refused" it (never applied). A kill soon after does not undo that.
    effects: dict[int, set[str]]


def account(
    sim: DiscordSim, kills: list[Kill], closes: list[GatewayClose], kill_window: float
) -> Accounting:
    records = list(sim.interactions)
    faulted = faulted_interactions(sim.faults.injected, records)
    counts: Counter[str] = Counter()
    unexplained: list[str] = []
    effects: dict[int, set[str]] = {}
    for record in records:
        sent = record.sent_at or 0.0
        hit = faulted.get(record.id, Faulted())
        # Over HTTP, an interaction a kill took is one whose request the endpoint dropped (its
        # worker died holding it) or refused (no worker left): an interaction a live worker
        # answered with an error, or never, is no kill's doing, even inside the window; nor
        # is one sent while one worker was down, which the other must answer.
        killed = any(
            kill.at - kill_window <= sent <= kill.back
            and (record.endpoint is None or record.dropped is not None)
            for kill in kills
        )
        # Replayed after a RESUME, an interaction's 3 s count from when it was queued.
        closed = any(close.at <= sent <= close.done + sim.response_deadline for close in closes)
        refused = not record.answered and any(not fault.applied for fault in hit.callback)
        late = record.answered and record.rejected == "late" and bool(hit.callback or closed)
        effects[record.id] = {"refused"} if refused else {"late"} if late else set()
        if record.answered and record.rejected is None:
            category = "answered"
        elif late:
            category = "late: fault on its callback" if hit.callback else "late: gateway close"
        elif record.answered:
            category = ""
        elif refused:
            category = "unanswered: callback refused by a fault"
        elif killed and record.endpoint is not None:
            category = "unanswered: its worker killed (connection dropped or refused)"
        elif killed:
            category = "unanswered: bot killed"
        elif record.lost:
            category = "unanswered: session invalidated"
        elif closed:
            category = "unanswered: gateway close"
        else:
            category = ""
        if category:
            counts[category] += 1
        else:
            counts["UNEXPLAINED"] += 1
            unexplained.append(
                f"{record.describe()} (id {record.id}): response {record.response_type}, "
                f"rejected {record.rejected}, faults {[f.summary() for f in hit.callback]}"
            )
    return Accounting(counts, unexplained, effects)


# The Discord rules a fault makes the bot break, each with what the fault must have done to
# that interaction: a callback held past the deadline (by a delay, or by a retry after a 5xx or
# a 429) is late; the bot's deferral timer then tries again, which Discord refuses as answered
# twice; and after a refused or late callback the bot asks whether its answer went through, or
# follows it up, before Discord ever acknowledged it.
FAULT_VIOLATIONS = {
    "s after the interaction was sent; Discord allows": {"late"},
    "the interaction was answered twice": {"late"},
    "before the interaction was acknowledged": {"late", "refused"},
}


def unexcused_violations(
    violations: list[str], sim: DiscordSim, accounting: Accounting
) -> tuple[list[str], list[str]]:
    """The violations a fault does not explain, and those it does."""
    left: list[str] = []
    excused: list[str] = []
    for violation in violations:
        allowed = next(
            (effects for kind, effects in FAULT_VIOLATIONS.items() if kind in violation), set()
        )
        if any(
            record.describe() in violation and accounting.effects.get(record.id, set()) & allowed
            for record in sim.interactions
        ):
            excused.append(violation)
        else:
            left.append(violation)
    return left, excused
