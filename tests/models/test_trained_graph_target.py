"""GraphSplit (drawn, given, read back from untrusted records) and TrainedGraphTarget's queries."""

from __future__ import annotations

import numpy as np
import pytest

from graphleaks.data.graphsets import motif_graphs
from graphleaks.defenses.graph_base import NoGraphDefense
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.graph_classifier import GraphClassifierSpec
from graphleaks.models.trained_graph_target import GraphSplit, graph_utility


def test_a_drawn_split_is_disjoint_seeded_and_sized() -> None:
    s = GraphSplit.draw(50, train_frac=0.4, val_frac=0.2, seed=3)
    assert (len(s.members), len(s.val), len(s.non_members)) == (20, 10, 20)
    joined = np.concatenate([s.members, s.val, s.non_members])
    assert sorted(joined.tolist()) == list(range(50))
    assert GraphSplit.draw(50, train_frac=0.4, val_frac=0.2, seed=3) == s
    assert GraphSplit.draw(50, train_frac=0.4, val_frac=0.2, seed=4) != s


@pytest.mark.parametrize("record", [
    {"num_graphs": 10, "members": [0, 1], "val": [], "non_members": [1, 2]},  # overlap
    {"num_graphs": 10, "members": [0, 10], "val": [], "non_members": [2]},  # out of range
    {"num_graphs": 10, "members": [0, -1], "val": [], "non_members": [2]},
    {"num_graphs": 10, "members": [0.5], "val": [], "non_members": [2]},  # not an id
    {"num_graphs": 10, "members": [True], "val": [], "non_members": [2]},
    {"num_graphs": 10, "members": [], "val": [], "non_members": [2]},  # no member
    {"num_graphs": "10", "members": [0], "val": [], "non_members": [2]},
    [1, 2, 3],
])
def test_a_bad_split_record_is_refused(record: object) -> None:
    with pytest.raises(DataError):
        GraphSplit.from_dict(record)


def test_a_split_for_another_set_size_is_refused() -> None:
    s = GraphSplit.draw(20, seed=0)
    with pytest.raises(DataError, match="20 graphs"):
        GraphSplit.from_dict(s.to_dict(), num_graphs=21)


def test_fractions_that_leave_no_non_member_are_refused() -> None:
    with pytest.raises(InvalidConfigError):
        GraphSplit.draw(10, train_frac=0.9, val_frac=0.1, seed=0)


def test_target_queries_and_utility() -> None:
    gs = motif_graphs(40, seed=1)
    split = GraphSplit.draw(40, train_frac=0.5, val_frac=0.0, seed=0)
    t = NoGraphDefense().fit(gs, split, model=GraphClassifierSpec(hidden=8, epochs=20), seed=0)
    assert t.logits().shape == (40, 2) and t.logits([3, 5]).shape == (2, 2)
    assert t.embeddings([0, 1, 2]).shape == (3, 8)  # the pooled embedding, hidden wide
    np.testing.assert_allclose(t.posteriors([7]).sum(1).numpy(), [1.0], rtol=1e-6)
    with pytest.raises(DataError):
        t.logits([40])
    y = gs.y.numpy()
    pred = t.logits().argmax(1).numpy()
    u = graph_utility(t.model, gs, split)
    assert u == t.utility
    assert u["train_accuracy"] == pytest.approx(float((pred == y)[split.members].mean()))
    assert u["test_accuracy"] == pytest.approx(float((pred == y)[split.non_members].mean()))
    majority = np.bincount(y[split.members]).argmax()
    assert u["majority_baseline"] == pytest.approx(float((y[split.non_members] == majority).mean()))
