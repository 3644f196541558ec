"""Graph classifiers: batching, shapes, the hookable embedding, seeded training that learns."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Batch

from graphleaks.data.graphsets import motif_graphs
from graphleaks.errors import InvalidConfigError
from graphleaks.models.graph_classifier import (
    GraphClassifier,
    GraphClassifierSpec,
    collate,
    fit_graph_classifier,
    graph_accuracy,
    new_graph_classifier,
    predict_graph_logits,
)


def test_collate_matches_pyg_batching() -> None:
    gs = motif_graphs(7, seed=0)
    mine, pyg = collate(gs.graphs), Batch.from_data_list(list(gs.graphs))
    for name in ("x", "edge_index", "batch", "y"):
        assert torch.equal(getattr(mine, name), getattr(pyg, name)), name
    assert mine.num_graphs == 7


@pytest.mark.parametrize("arch", ["gin", "gcn"])
@pytest.mark.parametrize("pooling", ["mean", "sum", "max"])
def test_one_row_per_graph_and_batching_does_not_mix_graphs(arch: str, pooling: str) -> None:
    gs = motif_graphs(6, seed=1)
    model = new_graph_classifier(GraphClassifierSpec(arch=arch, pooling=pooling, hidden=8),
                                 gs.num_features, gs.num_classes, seed=0)
    b = collate(gs.graphs)
    together = model(b.x, b.edge_index, b.batch, b.num_graphs)
    assert together.shape == (6, 2)
    for i, g in enumerate(gs.graphs):  # each graph alone gives its own row
        alone = model(g.x, g.edge_index, torch.zeros(int(g.num_nodes), dtype=torch.long), 1)
        torch.testing.assert_close(alone[0], together[i], rtol=1e-5, atol=1e-6)


def test_a_forward_hook_reads_the_pooled_embedding() -> None:
    gs = motif_graphs(5, seed=2)
    model = new_graph_classifier(GraphClassifierSpec(hidden=8), gs.num_features, 2, seed=0)
    seen: list[torch.Tensor] = []
    layer = dict(model.named_modules())[GraphClassifier.embedding_layer]
    handle = layer.register_forward_hook(lambda m, i, out: seen.append(out.detach()))
    b = collate(gs.graphs)
    model(b.x, b.edge_index, b.batch, b.num_graphs)
    handle.remove()
    assert seen[0].shape == (5, 8)
    torch.testing.assert_close(seen[0], model.embed(b.x, b.edge_index, b.batch))


def test_a_bad_spec_is_refused() -> None:
    with pytest.raises(InvalidConfigError, match="pooling"):
        new_graph_classifier(GraphClassifierSpec(pooling="median"), 4, 2, seed=0)


def test_training_is_seeded() -> None:
    gs = motif_graphs(24, seed=0)
    spec = GraphClassifierSpec(hidden=8, epochs=3, batch_size=8)
    a, _ = fit_graph_classifier(spec, gs.graphs, 2, seed=4)
    b, _ = fit_graph_classifier(spec, gs.graphs, 2, seed=4)
    c, _ = fit_graph_classifier(spec, gs.graphs, 2, seed=5)
    la, lb, lc = (predict_graph_logits(m, gs.graphs) for m in (a, b, c))
    assert torch.equal(la, lb) and not torch.equal(la, lc)


@pytest.mark.parametrize("arch", ["gin", "gcn"])
def test_it_learns_motifs_and_stops_early_on_validation(arch: str) -> None:
    gs = motif_graphs(120, num_classes=2, seed=0)
    train, val, test = gs.graphs[:70], gs.graphs[70:90], gs.graphs[90:]
    spec = GraphClassifierSpec(arch=arch, hidden=16, pooling="sum", epochs=60, patience=8,
                               batch_size=16)
    model, log = fit_graph_classifier(spec, train, 2, seed=0, val=val)
    # validation accuracy stopped improving: stopped `patience` epochs after the best one
    assert log.epochs_run == log.best_epoch + spec.patience < spec.epochs
    assert graph_accuracy(model, val) == log.best_val_accuracy  # the best weights are kept
    assert graph_accuracy(model, test) >= 0.8  # chance is 0.5: class = motif, structure only


def test_graph_store_batches_equal_collate_in_any_order() -> None:
    from graphleaks.models.graph_classifier import GraphStore

    gs = motif_graphs(9, seed=4)
    graphs = list(gs.graphs)
    graphs[3] = graphs[3].clone()
    graphs[3].edge_index = torch.empty(2, 0, dtype=torch.long)  # a graph without edges
    store = GraphStore.of(graphs)
    assert store is not None and len(store) == 9
    for ids in ([8, 0, 3, 5], [3], [2, 7, 1, 6, 4, 0, 8, 3, 5]):
        mine, ref = store.batch(torch.tensor(ids)), collate([graphs[i] for i in ids])
        for name in ("x", "edge_index", "batch", "y"):
            a, b = getattr(mine, name), getattr(ref, name)
            assert a.dtype == b.dtype and torch.equal(a, b), (ids, name)
        assert mine.num_graphs == ref.num_graphs


def test_graph_store_declines_sets_collate_must_serve() -> None:
    from graphleaks.models.graph_classifier import GraphStore

    gs = motif_graphs(3, seed=0)
    mixed = [g.clone() for g in gs.graphs]
    mixed[1].x = mixed[1].x.double()
    assert GraphStore.of(mixed) is None and GraphStore.of([]) is None


def test_training_through_the_store_is_training_through_collate(monkeypatch) -> None:
    from graphleaks.models import graph_classifier as gc

    gs = motif_graphs(40, seed=2)
    spec = GraphClassifierSpec(hidden=8, epochs=4, patience=2, batch_size=8)

    def fit():
        return fit_graph_classifier(spec, gs.graphs[:30], gs.num_classes, seed=5,
                                    val=gs.graphs[30:])

    stored, log = fit()
    monkeypatch.setattr(gc.GraphStore, "of", classmethod(lambda cls, graphs: None))
    looped, log_looped = fit()
    assert log == log_looped
    for (name, a), b in zip(stored.state_dict().items(), looped.state_dict().values(),
                            strict=True):
        assert torch.equal(a, b), name
