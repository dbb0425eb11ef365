"""Numbered SQL migrations per dialect, shipped as package data.

Files are named ``NNNN_description.sql`` in a subpackage per dialect (``sqlite`` and
``postgresql``); each backend applies the ones its ``schema_migrations`` table lacks.
"""

from __future__ import annotations

import re
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
