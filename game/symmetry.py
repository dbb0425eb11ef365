"""The eight symmetries of a square board (rotations and reflections), applied to bitmasks.

A position and its seven images have the same value, so solvers and searches store one of them:
the *canonical* image, the one whose pair of masks is smallest.

>>> from game.board import geometry
>>> symmetry = BoardSymmetry(geometry(3))
>>> sorted(symmetry.images(0b1, 0))  # a corner's images are the four corners
[(1, 0), (1, 0), (4, 0), (4, 0), (64, 0), (64, 0), (256, 0), (256, 0)]
>>> symmetry.canonical(0b100, 0) == symmetry.canonical(0b1, 0)
True
"""

from __future__ import annotations

from game.board import Geometry

__all__ = ["BoardSymmetry", "cell_permutations"]

_CHUNK_BITS = 8


def cell_permutations(size: int) -> tuple[tuple[int, ...], ...]:
    """For each of the 8 symmetries, where each cell goes: ``permutation[cell]``. The first is
    the identity."""
    last = size - 1
    permutations = []
    for symmetry in range(8):
        targets = []
        for cell in range(size * size):
            row, column = _moved(symmetry, *divmod(cell, size), last)
            targets.append(row * size + column)
        permutations.append(tuple(targets))
    return tuple(permutations)


def _moved(symmetry: int, row: int, column: int, last: int) -> tuple[int, int]:
    """Where (row, column) goes under one of the 8 symmetries: 0-3 rotate by quarter turns,
    4-7 reflect (across the vertical axis, the horizontal one, and the two diagonals)."""
    images = (
        (row, column),
        (column, last - row),
        (last - row, last - column),
        (last - column, row),
        (row, last - column),
        (last - row, column),
        (column, row),
        (last - column, last - row),
    )
    return images[symmetry]


class BoardSymmetry:
    """Fast images of masks under the board's symmetries: each symmetry is a few table lookups
    (one per byte of the mask) rather than a loop over cells."""

    def __init__(self, geo: Geometry) -> None:
        self.cell_count = geo.cell_count
        self.permutations = cell_permutations(geo.size)
        chunks = (geo.cell_count + _CHUNK_BITS - 1) // _CHUNK_BITS
        # tables[s][chunk][byte]: the image under symmetry s of ``byte`` placed at ``chunk``.
        self._tables: list[list[list[int]]] = []
        for permutation in self.permutations:
            per_chunk = []
            for chunk in range(chunks):
                images = []
                for byte in range(1 << _CHUNK_BITS):
                    image = 0
                    for bit in range(_CHUNK_BITS):
                        cell = chunk * _CHUNK_BITS + bit
                        if byte >> bit & 1 and cell < geo.cell_count:
                            image |= 1 << permutation[cell]
                    images.append(image)
                per_chunk.append(images)
            self._tables.append(per_chunk)

    def image(self, symmetry: int, mask: int) -> int:
        image = 0
        for table in self._tables[symmetry]:
            image |= table[mask & 0xFF]
            mask >>= _CHUNK_BITS
        return image

    def all_images(self, mask: int) -> list[int]:
        """``mask``'s image under each symmetry, the identity first: for the 5x5 search, which
        takes them at every node of the opening (four bytes a mask at most)."""
        images = [0] * len(self._tables)
        for symmetry, table in enumerate(self._tables):
            image = 0
            rest = mask
            for chunk in table:
                image |= chunk[rest & 0xFF]
                rest >>= _CHUNK_BITS
            images[symmetry] = image
        return images

    def images(self, x_mask: int, o_mask: int) -> list[tuple[int, int]]:
        """The position's image under each symmetry, the identity first."""
        return [
            (self.image(symmetry, x_mask), self.image(symmetry, o_mask))
            for symmetry in range(len(self._tables))
        ]

    def canonical(self, x_mask: int, o_mask: int) -> tuple[int, int]:
        """The smallest image, as (X's mask, O's mask): the same for every image of a position."""
        return min(self.images(x_mask, o_mask))
