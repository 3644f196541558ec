import math

import torch

from graphleaks.data.splits import MembershipSplit, SplitConfig
from graphleaks.defenses.none import NoDefense
from graphleaks.models.gnn import ArchitectureSpec


def test_non_private_ledger_and_inductive_training_graph(graph):
    split = MembershipSplit.draw(graph.num_nodes, SplitConfig(kind="inductive"), seed=0)
    t = NoDefense().fit(graph, split, model=ArchitectureSpec(epochs=5), seed=0)
    assert math.isinf(t.ledger.epsilon) and not t.ledger.is_private
    parts = split.part_ids()
    e = t.edges("target")
    assert (parts[e[0].numpy()] == parts[e[1].numpy()]).all()
    assert t.released_edges is None and t.features is None


def test_transductive_serves_the_full_graph(graph):
    split = MembershipSplit.draw(graph.num_nodes, SplitConfig(kind="transductive"), seed=0)
    t = NoDefense().fit(graph, split, model=ArchitectureSpec(epochs=5), seed=0)
    assert torch.equal(t.edges("target"), graph.edge_index)
