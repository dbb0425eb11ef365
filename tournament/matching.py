"""The one door to networkx: a maximum-weight matching, typed.

networkx ships no type hints, so its import is the one untyped line, kept here.
"""

from __future__ import annotations

from collections.abc import Iterable

import networkx  # type: ignore[import-untyped]


def max_weight_matching(nodes: int, edges: Iterable[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The pairs of a matching of greatest cardinality on nodes ``0..nodes-1`` and, among
    those, of greatest total weight; each pair (smaller, larger), sorted. Integer weights keep
    networkx's arithmetic exact, so equal inputs give equal matchings in every process."""
    graph = networkx.Graph()
    graph.add_nodes_from(range(nodes))
    graph.add_weighted_edges_from(edges)
    matched = networkx.max_weight_matching(graph, maxcardinality=True)
    return sorted((min(pair), max(pair)) for pair in matched)
