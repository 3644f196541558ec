"""Per-candidate risk: every scored node or edge, its slices, and ``scores.csv``.

An attack's candidates are node ids (membership, attribute inference) or node pairs (link
attacks). This module attaches what an engineer can act on to each candidate (its degree,
class and split part) and groups candidates into slices; the slice metrics themselves are
computed in :mod:`graphleaks.metrics.slices`.

Degrees are counted in the original graph (``target.graph``), undirected, so a node has the
same degree whatever the attack's query graph.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphleaks._io import csv_cell
from graphleaks.attacks._pairs import edge_keys
from graphleaks.attacks.base import AttackResult, Task
from graphleaks.models.target import TrainedTarget

#: Degree buckets (inclusive bounds) and their slice keys. Four buckets keep enough
#: candidates per bucket for an interval on graphs of a few thousand nodes.
DEGREE_BUCKETS: tuple[tuple[int, float, str], ...] = (
    (0, 2, "degree<=2"), (3, 5, "degree=3-5"), (6, 10, "degree=6-10"),
    (11, float("inf"), "degree>=11"),
)
CSV_COLUMNS = ("attack", "task", "node", "src", "dst", "degree", "class", "part", "score",
               "label")


@dataclass(frozen=True)
class CandidateTable:
    """One attack's candidates with their scores, truth and node attributes.

    Attributes:
        attack: Attack name.
        task: Task value (``membership``, ``link``, ``attribute``).
        nodes: Node ids ``[n]`` or endpoint pairs ``[n, 2]``.
        scores: Score per candidate (predicted attribute for attribute inference).
        labels: Truth per candidate.
        degree: Degree of the node, or the smaller endpoint degree of a pair.
        cls: Class of the node, or ``same``/``different`` for a pair.
        part: Split part of the node (``train``, ``val``, ``test``, ``aux``), or of a pair
            (``train-train``, ``train-other``, ``other-other``).
        names: The user's id of every node of the graph (indexed by node), when the ids
            are strings; ``scores.csv`` and the report then give these, not the indices.
    """

    def node_id(self, node: int) -> int | str:
        """A node as the user named it: its string id, or the integer id."""
        return str(self.names[node]) if self.names is not None else int(node)

    attack: str
    task: str
    nodes: np.ndarray
    scores: np.ndarray
    labels: np.ndarray
    degree: np.ndarray
    cls: np.ndarray
    part: np.ndarray
    names: np.ndarray | None = None

    @property
    def is_pairs(self) -> bool:
        """True for link candidates (node pairs)."""
        return self.nodes.ndim == 2


def node_attributes(target: TrainedTarget) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Degree, class and split part of every node of the target's graph."""
    g = target.graph
    n = int(g.num_nodes)
    # count each undirected edge once per endpoint, whether stored once or twice
    keys = edge_keys(g.edge_index, n)
    degree = (np.bincount(keys // n, minlength=n) + np.bincount(keys % n, minlength=n))
    y = g.y.numpy() if getattr(g, "y", None) is not None else np.full(n, -1)
    part = np.full(n, "other", dtype=object)
    for name in ("aux", "val", "test", "train"):
        part[np.asarray(getattr(target.split, name), dtype=np.int64)] = name
    return degree, y.astype(np.int64), part


_PAIR_CLASSES = np.array(["same", "different"], dtype=object)
_PAIR_PARTS = np.array(["train-train", "train-other", "other-other"], dtype=object)


def candidate_table(
    result: AttackResult, target: TrainedTarget,
    attributes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> CandidateTable | None:
    """The candidates of ``result`` with their attributes; None for repeated scores.

    Results of the original code's bug reproductions carry several scores per candidate;
    they have no per-candidate reading and get no table. ``attributes`` is
    :func:`node_attributes` of ``target`` when the caller already has it (an audit computes
    it once for all its attacks).
    """
    cand = np.asarray(result.candidates)
    if len(result.scores) != len(cand):
        return None
    degree, y, part = node_attributes(target) if attributes is None else attributes
    if cand.ndim == 2:
        a, b = cand[:, 0].astype(np.int64), cand[:, 1].astype(np.int64)
        deg = np.minimum(degree[a], degree[b])
        # one shared string object per category: ``np.where(...).astype(object)`` made a
        # new str per candidate (~60 B each; about 0.9 GB for the 7M pairs of a 1M-node
        # graph reconstruction, kept all audit long); same values, same object dtype
        cls = _PAIR_CLASSES[(y[a] != y[b]).astype(np.intp)]
        ta, tb = part[a] == "train", part[b] == "train"
        ppart = _PAIR_PARTS[np.where(ta & tb, 0, np.where(ta | tb, 1, 2))]
        return CandidateTable(result.attack, result.task.value, cand.astype(np.int64),
                              result.scores, result.labels, deg, cls, ppart,
                              names=graph_names(target))
    idx = cand.astype(np.int64)
    return CandidateTable(result.attack, result.task.value, idx, result.scores, result.labels,
                          degree[idx], y[idx].astype(object), part[idx],
                          names=graph_names(target))


def graph_names(target: Any) -> np.ndarray | None:
    """The user's string node ids of the target's graph (``node_names``), or None."""
    g = target.graph
    names = getattr(g, "node_names", None) if "node_names" in g else None
    return np.asarray(names, dtype=object) if isinstance(names, list) else None


def slice_masks(table: CandidateTable) -> dict[str, np.ndarray]:
    """Slice key to candidate mask: degree buckets, classes and (for pairs) split parts.

    Membership candidates are not sliced by part: their part *is* the truth (members are
    the training nodes), so such a slice has one side only.
    """
    masks: dict[str, np.ndarray] = {}
    for lo, hi, key in DEGREE_BUCKETS:
        masks[key] = (table.degree >= lo) & (table.degree <= hi)
    # str() of every class once (a vectorised astype), not once per class and candidate
    names = np.asarray(table.cls).astype(str)
    for c in sorted(np.unique(names).tolist(), key=_natural):
        masks[f"class={c}"] = names == c
    if table.is_pairs:
        for p in ("train-train", "train-other", "other-other"):
            masks[f"part={p}"] = table.part == p
    return masks


def _natural(s: str) -> tuple[int, str]:
    return (int(s), "") if s.lstrip("-").isdigit() else (1 << 30, s)


def most_exposed(table: CandidateTable, k: int = 10) -> list[dict[str, Any]]:
    """The ``k`` true positives the attack ranks highest (the candidates it exposes most).

    Each entry has the candidate (``node`` or ``src``/``dst``, the user's ids), its degree,
    class, score and ``rank`` among all candidates (1 = highest score). Candidates are
    ordered by score, equal scores by node id (:data:`TIE_BREAK`), so ties never keep
    the order the attack happened to list them in.
    """
    if table.task == Task.ATTRIBUTE.value:
        return []
    # by score, ties broken by node id (then the pair's second endpoint): never file order
    nodes = table.nodes.reshape(len(table.scores), -1)
    if table.names is not None:  # the user's ids, as the report shows them
        nodes = np.asarray(table.names, dtype=str)[nodes]
    keys = tuple(nodes[:, j] for j in reversed(range(nodes.shape[1])))
    order = np.lexsort((*keys, -np.asarray(table.scores, dtype=np.float64)))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    out: list[dict[str, Any]] = []
    for i in order:
        if table.labels[i] != 1:
            continue
        entry: dict[str, Any] = {"degree": int(table.degree[i]), "class": str(table.cls[i]),
                                 "score": float(table.scores[i]), "rank": int(rank[i])}
        if table.is_pairs:
            entry["src"] = table.node_id(int(table.nodes[i, 0]))
            entry["dst"] = table.node_id(int(table.nodes[i, 1]))
        else:
            entry["node"] = table.node_id(int(table.nodes[i]))
        out.append(entry)
        if len(out) == k:
            break
    return out


#: How "most exposed" orders candidates of equal score (stated in the reports).
TIE_BREAK = ("equal scores ordered by node id (ascending; by the string id when nodes are "
             "named by strings)")


def _cell(v: int | str) -> object:
    # a user's string id is a string cell: one starting with "=" must not run in a spreadsheet
    return csv_cell(v) if isinstance(v, str) else v


def scores_csv(tables: Sequence[CandidateTable]) -> str:
    """Every candidate of every attack as CSV text (columns :data:`CSV_COLUMNS`).

    Node candidates fill ``node``; edge candidates fill ``src`` and ``dst``. For attribute
    inference ``score`` is the predicted attribute value and ``label`` the true one.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    node: object
    src: object
    dst: object
    for t in tables:
        for i in range(len(t.scores)):
            if t.is_pairs:
                node, src = "", _cell(t.node_id(int(t.nodes[i, 0])))
                dst = _cell(t.node_id(int(t.nodes[i, 1])))
            else:
                node, src, dst = _cell(t.node_id(int(t.nodes[i]))), "", ""
            # string cells only: a name starting with "=" must not run in a spreadsheet
            w.writerow((csv_cell(t.attack), csv_cell(t.task), node, src, dst,
                        int(t.degree[i]), csv_cell(str(t.cls[i])), csv_cell(str(t.part[i])),
                        repr(float(t.scores[i])), int(t.labels[i])))
    return buf.getvalue()
