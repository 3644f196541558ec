import numpy as np
import pytest
import scipy.sparse as sp

from graphleaks.attacks._pairs import bfs_subgraphs
from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.tia import TIA, pair_distance
from graphleaks.errors import DataError
from graphleaks.metrics import binary_metrics
from graphleaks.metrics.topology import topology_leakage


def test_bfs_subgraphs_are_disjoint_and_sized():
    n = 40
    rows = np.arange(n - 1)
    adj = sp.csr_matrix((np.ones(n - 1), (rows, rows + 1)), shape=(n, n))
    adj = ((adj + adj.T) > 0).tocsr()
    subs = bfs_subgraphs(adj, 3, 8, 5, np.random.default_rng(0))
    assert len(subs) == 3 and all(5 <= len(s) <= 8 for s in subs)
    assert len(np.unique(np.concatenate(subs))) == sum(len(s) for s in subs)
    assert len(bfs_subgraphs(adj, 3, 30, 30, np.random.default_rng(0), max_tries=200)) == 1
    with pytest.raises(DataError, match="no subgraph"):
        bfs_subgraphs(adj, 3, 100, 50, np.random.default_rng(0), max_tries=50)


def test_distances():
    p = np.array([[1.0, 0.0]])
    q = np.array([[0.0, 1.0]])
    np.testing.assert_allclose(pair_distance(p, q, "cosine"), [1.0])
    np.testing.assert_allclose(pair_distance(p, q, "chebyshev"), [1.0])
    np.testing.assert_allclose(pair_distance(p, q, "euclidean"), [np.sqrt(2)])


def test_topology_leakage_is_jaccard_at_k():
    assert topology_leakage([3, 2, 1, 0], [1, 1, 0, 0]) == 1.0
    assert topology_leakage([0, 1, 2, 3], [1, 1, 0, 0]) == 0.0
    assert topology_leakage([3, 2, 1, 0], [0, 0, 0, 0]) == 0.0


@pytest.mark.parametrize("variant,floor", [("metric", 0.55), ("classifier", 0.55),
                                           ("influence", 0.8)])
def test_non_private_target_leaks_topology(trained_target, variant, floor):
    r = run_attack(TIA(variant=variant, n_subgraphs=2, subgraph_size=40, min_size=10),
                   trained_target, seed=0)
    assert binary_metrics(r.scores, r.labels, n_bootstrap=100, seed=0).auc.lo > floor
