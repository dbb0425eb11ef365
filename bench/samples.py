"""What the benchmarks read off their samples."""

from __future__ import annotations


def percentile(samples: list[float], fraction: float) -> float:
    """The sample below which ``fraction`` of them lie (the nearest rank, no interpolation)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
