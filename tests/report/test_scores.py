"""Candidate tables: degrees, classes, parts and slices of nodes and pairs."""

from __future__ import annotations

import numpy as np

from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.link_stealing import LinkStealingAttack
from graphleaks.report.scores import candidate_table, most_exposed, node_attributes, slice_masks


def test_degree_counts_each_undirected_edge_once(trained_target):
    degree, y, part = node_attributes(trained_target)
    ei = trained_target.graph.edge_index.numpy()
    pairs = {tuple(sorted(p)) for p in ei.T.tolist() if p[0] != p[1]}
    assert degree.sum() == 2 * len(pairs)
    assert set(part[np.asarray(trained_target.split.train)]) == {"train"}


def test_pair_table_and_slices(trained_target):
    r = run_attack(LinkStealingAttack(), trained_target, seed=0)
    t = candidate_table(r, trained_target)
    degree, _, _ = node_attributes(trained_target)
    a, b = t.nodes[:, 0], t.nodes[:, 1]
    assert np.array_equal(t.degree, np.minimum(degree[a], degree[b]))
    masks = slice_masks(t)
    assert {"class=same", "class=different", "part=train-train"} <= set(masks)
    buckets = [k for k in masks if k.startswith("degree")]
    assert sum(masks[k].sum() for k in buckets) == len(t.scores)  # buckets partition
    top = most_exposed(t, k=3)
    assert all(t.labels[(t.nodes[:, 0] == e["src"]) & (t.nodes[:, 1] == e["dst"])][0] == 1
               for e in top)
    assert [e["rank"] for e in top] == sorted(e["rank"] for e in top)


def test_pair_classes_and_parts_share_one_string_per_category(trained_target):
    """The pair table's class and part columns equal the per-pair strings they replace,
    and hold one shared string object per category (not one per candidate)."""
    r = run_attack(LinkStealingAttack(), trained_target, seed=0)
    t = candidate_table(r, trained_target)
    _, y, part = node_attributes(trained_target)
    a, b = t.nodes[:, 0], t.nodes[:, 1]
    ta, tb = part[a] == "train", part[b] == "train"
    want_cls = np.where(y[a] == y[b], "same", "different").astype(object)
    want_part = np.where(ta & tb, "train-train",
                         np.where(ta | tb, "train-other", "other-other")).astype(object)
    assert t.cls.dtype == object and t.part.dtype == object
    assert t.cls.tolist() == want_cls.tolist() and t.part.tolist() == want_part.tolist()
    assert len(set(want_cls)) == 2 and len(set(want_part)) >= 2
    assert len({id(v) for v in t.cls}) == 2
    assert len({id(v) for v in t.part}) == len(set(want_part))
