import numpy as np
import pytest
import scipy.sparse as sp
import torch

from graphleaks.attacks.base import Output
from graphleaks.attacks.gbase_mia import GBASEMIA, ball, balls, batched_pairs, loss_gaps
from graphleaks.attacks.harness import run_attack
from graphleaks.errors import CapabilityError
from graphleaks.metrics import binary_metrics


def _path(n):
    rows = np.r_[np.arange(n - 1), np.arange(1, n)]
    cols = np.r_[np.arange(1, n), np.arange(n - 1)]
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))


def test_ball_respects_mask_and_hops():
    adj = _path(6)
    allowed = np.array([True, True, True, False, True, True])
    np.testing.assert_array_equal(ball(adj, allowed, 1, 4), [1, 0, 2])
    np.testing.assert_array_equal(np.sort(ball(adj, np.ones(6, bool), 0, 2)), [0, 1, 2])


def test_loss_gap_is_in_minus_out():
    adj = _path(4)
    balls = [np.array([1, 0, 2])]
    nodes, gid, ei = batched_pairs(adj, balls)
    assert nodes.tolist() == [1, 0, 2, 0, 2] and gid.tolist() == [0, 0, 0, 1, 1]
    assert ei.shape[1] == 4  # two undirected edges in G_in, none in G_out

    def model(x, edge_index):  # ignores the graph: Δ is minus v's own loss
        return x

    x = torch.log(torch.tensor([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8], [0.5, 0.5]]))
    y = torch.tensor([0, 0, 1, 0])
    gap = loss_gaps(model, x, y, nodes, gid, ei, 1)
    np.testing.assert_allclose(gap, [np.log(0.5)], rtol=1e-6)


def test_overfit_target_leaks(trained_target):
    r = run_attack(GBASEMIA(variant="online", num_references=4, ref_epochs=40, num_samples=2),
                   trained_target, seed=0)
    m = binary_metrics(r.scores, r.labels, n_bootstrap=200, seed=0)
    assert m.auc.lo > 0.55


def test_needs_feature_queries(trained_target):
    with pytest.raises(CapabilityError, match="FEATURE_QUERIES"):
        run_attack(GBASEMIA(), trained_target, seed=0, exposed=frozenset({Output.POSTERIORS}))


def test_edgeless_graph_reduces_to_base():
    """Without edges every ball is the node alone, so G-BASE is zero-hop BASE exactly.

    With the same references, the default offline configs must give the same log-odds: the
    reference scale ``a`` of G-BASE (and of its zero-hop sampler) is BASE's (0.7, as in the
    authors' code, where both read one ``threshold_scale_factor``).
    """
    from graphleaks.attacks.base import ALL_OUTPUTS, TargetView
    from graphleaks.attacks.base_mia import BASEMIA
    from graphleaks.audit.runner import train_target
    from graphleaks.data import tiny_graph
    from graphleaks.models.gnn import ArchitectureSpec
    from graphleaks.seeding import Rngs

    t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=30))
    # The adversary's query graph has no edges (the target was trained with them).
    t.graph.edge_index = torch.empty(2, 0, dtype=torch.long)
    t.clear_cache()
    assert t.edges("target").shape[1] == 0
    gb, b = GBASEMIA(num_references=2, ref_epochs=20, num_samples=2), BASEMIA(
        num_references=2, ref_epochs=20)
    from graphleaks.attacks.harness import sample_challenge

    ch = sample_challenge(gb, t, seed=0).challenge
    s_g = gb._score(TargetView(t, gb.threat_model, exposed=ALL_OUTPUTS, attack=gb.name), ch,
                    Rngs.from_seed(0, "same-references")).values
    s_b = b._score(TargetView(t, b.threat_model, exposed=ALL_OUTPUTS, attack=b.name), ch,
                   Rngs.from_seed(0, "same-references")).values
    np.testing.assert_allclose(s_g, s_b, atol=1e-4)


def test_batched_gaps_match_separate_forward_passes():
    """The disjoint-union batch gives each ball's Δ exactly as two separate GCN passes do."""
    import torch.nn.functional as F
    from torch_geometric.utils import subgraph

    from graphleaks.data import tiny_graph
    from graphleaks.models.gnn import GNN, ArchitectureSpec

    g = tiny_graph()
    torch.manual_seed(0)
    model = GNN(g.x.shape[1], 3, ArchitectureSpec()).eval()
    ei = g.edge_index
    adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0].numpy(), ei[1].numpy())),
                        shape=(g.num_nodes, g.num_nodes))
    mask = np.random.default_rng(0).random(g.num_nodes) < 0.5
    balls = [ball(adj, mask, v, 4) for v in (0, 7, 19)]
    nodes, gid, uei = batched_pairs(adj, balls)
    got = loss_gaps(model, g.x, g.y, nodes, gid, uei, len(balls))

    def loss(part):
        idx = torch.as_tensor(part, dtype=torch.long)
        sub, _ = subgraph(idx, ei, relabel_nodes=True, num_nodes=g.num_nodes)
        with torch.no_grad():
            return F.cross_entropy(model(g.x[idx], sub).double(), g.y[idx], reduction="sum")

    want = [float(loss(b[1:]) - loss(b)) for b in balls]
    assert all(len(b) > 2 for b in balls)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _sliced_pairs(adj, balls):
    """The former batched_pairs: one scipy slice per part (the reference for equivalence)."""
    nodes, gid, edges = [], [], []
    offset = 0
    for i, b in enumerate(balls):
        for j, part in enumerate((b, b[1:])):
            sub = adj[part][:, part].tocoo()
            edges.append(np.vstack([sub.row, sub.col]) + offset)
            nodes.append(part)
            gid.append(np.full(len(part), 2 * i + j))
            offset += len(part)
    ei = torch.as_tensor(np.concatenate(edges, axis=1), dtype=torch.long)
    return np.concatenate(nodes), torch.as_tensor(np.concatenate(gid)), ei


def test_batched_pairs_equal_per_part_slicing():
    """Same union nodes, graph ids and edges, in the same order, as slicing each part."""
    from graphleaks.data import tiny_graph

    g = tiny_graph()
    ei = g.edge_index
    adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0].numpy(), ei[1].numpy())),
                        shape=(g.num_nodes, g.num_nodes))
    adj = ((adj + adj.T) > 0).astype(np.float64).tocsr()
    mask = np.random.default_rng(1).random(g.num_nodes) < 0.6
    balls = [ball(adj, mask, v, 4) for v in range(g.num_nodes)]
    assert any(len(b) > 3 for b in balls) and any(len(b) == 1 for b in balls)
    got, want = batched_pairs(adj, balls), _sliced_pairs(adj, balls)
    np.testing.assert_array_equal(got[0], want[0])
    assert torch.equal(got[1], want[1]) and torch.equal(got[2], want[2])


def test_scores_equal_per_part_slicing(trained_target, monkeypatch):
    """G-BASE's scores with the vectorised union equal those of the former slicing."""
    import graphleaks.attacks.gbase_mia as gbase

    attack = GBASEMIA(num_references=2, ref_epochs=20, num_samples=2, chunk=16)
    new = run_attack(attack, trained_target, seed=3).scores
    monkeypatch.setattr(gbase, "batched_pairs", _sliced_pairs)
    old = run_attack(attack, trained_target, seed=3).scores
    np.testing.assert_allclose(new, old, rtol=0, atol=1e-9)


def test_tuned_scale_is_recorded_and_scores_as_that_fixed_scale(trained_target):
    """G-BASE's tune_scale only chooses a (from its own simulated AUC): with the same
    references and masks the scores are G-BASE's at that a, for the score and the sampler."""
    import re

    from graphleaks.attacks._references import SCALE_GRID
    from graphleaks.attacks.harness import run_attack

    kw = {"num_references": 4, "ref_epochs": 20, "num_samples": 2}
    tuned = run_attack(GBASEMIA(tune_scale=True, **kw), trained_target, seed=0)
    note = next(n for n in tuned.notes if "tuned" in n)
    a = float(re.search(r"scale a=([0-9.]+) \(tuned", note).group(1))
    assert a in SCALE_GRID
    fixed = run_attack(GBASEMIA(offline_scale=a, **kw), trained_target, seed=0)
    np.testing.assert_allclose(tuned.scores, fixed.scores)


def _ball_per_centre(adj, allowed, v, hops):
    """The former ball: one search per centre with a fresh N-sized visited array and a
    Python loop over the frontier's rows (the reference for equivalence)."""
    seen = np.zeros(adj.shape[0], dtype=bool)
    seen[v] = True
    order = [np.array([v])]
    frontier = order[0]
    for _ in range(hops):
        if not len(frontier):
            break
        nbrs = np.unique(np.concatenate([adj.indices[adj.indptr[u]:adj.indptr[u + 1]]
                                         for u in frontier]))
        nbrs = nbrs[allowed[nbrs] & ~seen[nbrs]]
        seen[nbrs] = True
        order.append(nbrs)
        frontier = nbrs
    return np.concatenate(order)


@pytest.mark.parametrize("hops", [0, 1, 2, 4])
def test_balls_equal_per_centre_search(hops):
    """Every centre's ball, searched together, equals its own search: nodes, order, dtype."""
    from graphleaks.data import csbm

    g = csbm(150, num_features=4, avg_degree=5, seed=2)
    ei = g.edge_index
    adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0].numpy(), ei[1].numpy())),
                        shape=(g.num_nodes, g.num_nodes))
    adj = ((adj + adj.T) > 0).astype(np.float64).tocsr()
    rng = np.random.default_rng(hops)
    for frac in (0.0, 0.4, 1.0):
        mask = rng.random(g.num_nodes) < frac
        centres = rng.choice(g.num_nodes, 40, replace=False)
        centres[1] = centres[0]  # a repeated centre gets its own ball
        got = balls(adj, mask, centres, hops)
        want = [_ball_per_centre(adj, mask, int(v), hops) for v in centres]
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
        if frac == 1.0 and hops == 4:
            assert max(len(b) for b in want) > 20
    assert [len(b) for b in balls(adj, mask, np.array([], dtype=np.int64), hops)] == []


class _NoSharing:
    """Stands in for the models' shared-matrix tables: never finds, never keeps."""

    def get(self, key, default=None):
        return default

    def __setitem__(self, key, value):
        pass


def test_scores_equal_per_centre_search(trained_target, monkeypatch):
    """G-BASE's scores with the batched search and shared normalisations equal those of one
    search per ball and one normalisation per model, bit for bit."""
    import graphleaks.attacks.gbase_mia as gbase
    import graphleaks.models.gnn as gnn

    built = []
    plain = gnn._normalize

    def counted(*args, **kwargs):
        built.append(1)
        return plain(*args, **kwargs)

    monkeypatch.setattr(gnn, "_normalize", counted)
    attack = GBASEMIA(num_references=2, ref_epochs=20, num_samples=2, chunk=16)
    new = run_attack(attack, trained_target, seed=4).scores
    n_new = len(built)
    monkeypatch.setattr(gbase, "balls", lambda adj, allowed, centres, hops: [
        _ball_per_centre(adj, allowed, int(v), hops) for v in centres])
    monkeypatch.setattr(gnn, "_SHARED_MATRICES", _NoSharing())
    monkeypatch.setattr(gnn, "_SHARED_PROPAGATED", _NoSharing())
    built.clear()
    old = run_attack(attack, trained_target, seed=4).scores
    np.testing.assert_array_equal(new, old)
    # three models (target and two references) see each union graph: one build, not three
    assert n_new < len(built)
