"""Modules imported on first use: the one place in the engine that imports by name.

The computer players (:mod:`game.ai`) need the 4x4 table's lookup, the 5x5 opening book, the
exact search and the budgeted search only on those boards; importing them with the engine cost
every program (the terminal game on 3x3, every test process) about 15 ms it may never use. So
:mod:`game.ai` names them here, and each is imported when one of its attributes is first read:

    if TYPE_CHECKING:
        from game import exact  # the type checker reads the real module
    else:
        exact = ModuleOnFirstUse("game.exact")

The tournament engine names networkx the same way (:mod:`tournament.matching`): some 0.2 s
to import, for the pairing of a Swiss round only.

The project imports nothing inside functions (``tests/test_structure.py``), so that what a
module needs is written at its top; this is the exception, and the test allows it here only.
Importing is thread-safe (:func:`importlib.import_module` takes the module's import lock), so
two threads reading at once both get the one module.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["ModuleOnFirstUse"]


class ModuleOnFirstUse:
    """Stands for the module called ``name``: reading any attribute imports it (once) and reads
    the attribute there."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        # Only called for what the object itself lacks: every attribute of the module. Probes
        # for special names (inspect and doctest look for ``__wrapped__`` on whatever a module
        # holds) are not the module's business: they would import it, and doctest, walking the
        # holder's namespace, would see it change under it.
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<module {self._name!r}, imported on first use: {state}>"
