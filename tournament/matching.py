"""The one door to networkx: a maximum-weight matching, typed.

networkx ships no type hints, so what it returns is typed here. It is imported on first use
(:mod:`game.lazy`): importing it loads every algorithm it has, some 0.2 s of CPU, which only
pairing a Swiss round needs; a bot process that pairs none, or exits on a bad setting, never
loads it.
"""

from __future__ import annotations

from collections.abc import Iterable

from game.lazy import ModuleOnFirstUse

networkx = ModuleOnFirstUse("networkx")


def max_weight_matching(nodes: int, edges: Iterable[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The pairs of a matching of greatest cardinality on nodes ``0..nodes-1`` and, among
    those, of greatest total weight; each pair (smaller, larger), sorted. Integer weights keep
    networkx's arithmetic exact, so equal inputs give equal matchings in every process."""
    graph = networkx.Graph()
    graph.add_nodes_from(range(nodes))
    graph.add_weighted_edges_from(edges)
    matched = networkx.max_weight_matching(graph, maxcardinality=True)
    return sorted((min(pair), max(pair)) for pair in matched)
