"""No defense: the non-private baseline target."""

from __future__ import annotations

from torch_geometric.data import Data

from graphleaks.data.graph import num_classes
from graphleaks.data.splits import MembershipSplit
from graphleaks.defenses.base import Defense
from graphleaks.models.gnn import GNN, ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.models.training import train_node_classifier
from graphleaks.privacy.ledger import PrivacyLedger, PrivacyUnit
from graphleaks.seeding import derive_seed, torch_seeded


def train_plain_target(
    graph: Data, split: MembershipSplit, spec: ArchitectureSpec, seed: int
) -> TrainedTarget:
    """Train a GNN of ``spec`` on ``graph`` under ``split``'s protocol, without any defense."""
    with torch_seeded(derive_seed(seed, "init")):
        model = GNN(graph.num_features, num_classes(graph), spec).to(graph.x.device)
    edges = split.training_edges(graph.edge_index)
    log = train_node_classifier(
        model, graph.x, edges, graph.y, split.train,
        val_edges=edges, val_nodes=split.val,
        lr=spec.lr, weight_decay=spec.weight_decay, epochs=spec.epochs,
        patience=spec.patience, seed=derive_seed(seed, "train"),
    )
    return TrainedTarget(
        model=model, spec=spec, graph=graph, split=split, seed=seed,
        ledger=PrivacyLedger.non_private(),
        training={"epochs_run": log.epochs_run, "best_epoch": log.best_epoch},
    )


class NoDefense(Defense):
    """Train the target with no privacy mechanism (ε = ∞).

    Example:
        >>> from graphleaks.data import tiny_graph, MembershipSplit
        >>> g = tiny_graph()
        >>> t = NoDefense().fit(g, MembershipSplit.draw(g.num_nodes, seed=0),
        ...                     model=ArchitectureSpec(epochs=5), seed=0)
        >>> t.ledger.is_private
        False
    """

    name = "none"
    privacy_unit = PrivacyUnit.NONE

    def _fit(
        self, graph: Data, split: MembershipSplit, spec: ArchitectureSpec, seed: int
    ) -> TrainedTarget:
        return train_plain_target(graph, split, spec, seed)
