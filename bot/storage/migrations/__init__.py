"""Numbered SQL migrations per dialect, shipped as package data.

Files are named ``NNNN_description.sql`` in a subpackage per dialect (``sqlite`` and
``postgresql``); each backend applies the ones its ``schema_migrations`` table lacks.

A migration whose data SQL cannot compute names a :class:`DataStep` in :data:`DATA_STEPS`:
each backend runs it in Python right after the migration's SQL, in the same transaction, so
that the schema change, its data and the migration's ``schema_migrations`` row commit together
or not at all (and a second process, waiting on the migration lock, finds all three done).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from importlib.resources import files

_NAME = re.compile(r"(\d+)_[A-Za-z0-9_]+\.sql")


def migration_files(dialect: str) -> list[tuple[int, str]]:
    """``(version, sql)`` for every migration of ``dialect``, lowest version first."""
    found: dict[int, str] = {}
    for entry in files(__name__).joinpath(dialect).iterdir():
        if not entry.name.endswith(".sql"):
            continue
        match = _NAME.fullmatch(entry.name)
        if match is None:
            # A misnamed file would silently never run; better to refuse to start.
            raise ValueError(f"migration {dialect}/{entry.name} is not named NNNN_name.sql")
        version = int(match.group(1))
        if version in found:
            raise ValueError(f"two {dialect} migrations share version {version}")
        found[version] = entry.read_text(encoding="utf-8")
    if not found:
        raise ValueError(f"no migrations found for dialect {dialect!r}")
    return sorted(found.items())


class DataStep(enum.Enum):
    """A migration's step in Python, run by each backend in the migration's transaction."""

    # 0011: every rating recomputed by replaying the stored rated games in the order they
    # finished (bot.results.replay).
    REPLAY_RATINGS = "replay ratings"


# The migrations (same version in every dialect) followed by a step in Python.
DATA_STEPS: Mapping[int, DataStep] = {11: DataStep.REPLAY_RATINGS}
