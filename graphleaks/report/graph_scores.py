"""Per-graph risk: every scored graph, its slices, and the graph form of ``scores.csv``.

A graph-membership attack's candidates are graph ids. Each gets its size (nodes), class,
membership side (``train``: members, ``test``: non-members) and, for molecules, its SMILES
and Bemis–Murcko scaffold. Slices group candidates by size bucket, class and (molecules)
the most frequent scaffolds; the slice metrics are computed in :mod:`graphleaks.metrics`.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphleaks._io import csv_cell
from graphleaks.report.scores import CandidateTable

#: Graph-size buckets (inclusive bounds on the node count) and their slice keys.
SIZE_BUCKETS: tuple[tuple[int, float, str], ...] = (
    (0, 10, "nodes<=10"), (11, 20, "nodes=11-20"), (21, 30, "nodes=21-30"),
    (31, float("inf"), "nodes>=31"),
)
#: Scaffold slices: the most frequent scaffolds with at least this many candidates.
MIN_SCAFFOLD_CANDIDATES = 20
MAX_SCAFFOLD_SLICES = 5
GRAPH_CSV_COLUMNS = ("attack", "task", "graph_id", "smiles", "num_nodes", "class", "scaffold",
                     "part", "score", "label")


@dataclass(frozen=True)
class GraphCandidateTable(CandidateTable):
    """One graph attack's candidates: ``nodes`` holds graph ids and ``degree`` graph sizes.

    Attributes:
        smiles: SMILES of each candidate (molecule sets), else None.
        scaffold: Bemis–Murcko scaffold of each candidate (None entries where unknown).
    """

    smiles: np.ndarray | None = None
    scaffold: np.ndarray | None = None


def graph_slice_masks(table: GraphCandidateTable) -> dict[str, np.ndarray]:
    """Slice key to candidate mask: size buckets, classes and the frequent scaffolds."""
    masks: dict[str, np.ndarray] = {}
    if (np.asarray(table.degree) >= 0).all():  # sizes unknown (-1) from scores only
        for lo, hi, key in SIZE_BUCKETS:
            masks[key] = (table.degree >= lo) & (table.degree <= hi)
    names = np.asarray(table.cls).astype(str)
    for c in sorted(np.unique(names).tolist()):
        masks[f"class={c}"] = names == c
    if table.scaffold is not None:
        scaf = np.asarray(table.scaffold, dtype=object)
        counts = Counter(s for s in scaf.tolist() if s is not None)
        common = [s for s, k in counts.most_common(MAX_SCAFFOLD_SLICES)
                  if k >= MIN_SCAFFOLD_CANDIDATES]
        for s in common:
            masks[f"scaffold={s}"] = scaf == s
    return masks


def graph_most_exposed(table: GraphCandidateTable, k: int = 10) -> list[dict[str, Any]]:
    """The ``k`` member graphs the attack ranks highest (ties by graph id).

    Entries carry ``node`` (the graph id) and ``degree`` (its node count) as the report's
    node tables read them, plus ``graph_id``, ``num_nodes`` and the SMILES when known.
    """
    ids = np.asarray(table.nodes, dtype=np.int64)
    order = np.lexsort((ids, -np.asarray(table.scores, dtype=np.float64)))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    out: list[dict[str, Any]] = []
    for i in order:
        if table.labels[i] != 1:
            continue
        entry: dict[str, Any] = {"node": int(ids[i]), "graph_id": int(ids[i]),
                                 "degree": int(table.degree[i]),
                                 "num_nodes": int(table.degree[i]), "class": str(table.cls[i]),
                                 "score": float(table.scores[i]), "rank": int(rank[i])}
        if table.smiles is not None:
            entry["smiles"] = str(table.smiles[i])
        out.append(entry)
        if len(out) == k:
            break
    return out


def is_graph_tables(tables: Sequence[CandidateTable]) -> bool:
    """Whether every table holds graph candidates (the graph form of ``scores.csv``)."""
    return all(isinstance(t, GraphCandidateTable) for t in tables)


def graph_scores_csv(tables: Sequence[CandidateTable]) -> str:
    """Every graph candidate of every attack as CSV text (:data:`GRAPH_CSV_COLUMNS`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(GRAPH_CSV_COLUMNS)
    for t in tables:
        smiles = getattr(t, "smiles", None)
        scaffold = getattr(t, "scaffold", None)
        for i in range(len(t.scores)):
            # SMILES and scaffolds are strings from a file: never a spreadsheet formula
            w.writerow((csv_cell(t.attack), csv_cell(t.task), int(t.nodes[i]),
                        csv_cell(str(smiles[i])) if smiles is not None else "",
                        int(t.degree[i]), csv_cell(str(t.cls[i])),
                        csv_cell(str(scaffold[i])) if scaffold is not None
                        and scaffold[i] is not None else "",
                        csv_cell(str(t.part[i])), repr(float(t.scores[i])), int(t.labels[i])))
    return buf.getvalue()
