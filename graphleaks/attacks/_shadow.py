"""Shadow targets trained on the adversary's auxiliary population, shared by MIAs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks.data.splits import MembershipSplit, SplitConfig
from graphleaks.errors import DataError
from graphleaks.models.gnn import GNN, ArchitectureSpec
from graphleaks.models.training import train_node_classifier
from graphleaks.seeding import derive_seed, torch_seeded


@dataclass(frozen=True)
class ShadowTarget:
    """A model the adversary trained itself, with known members and non-members.

    Attributes:
        model: The shadow model (eval mode).
        graph: The population graph it lives on.
        members: Population-local ids of its training nodes.
        nonmembers: Population-local ids it never trained on.
        edges: The graph it is queried with (each node in its own part's induced subgraph).
    """

    model: nn.Module
    graph: Data
    members: np.ndarray
    nonmembers: np.ndarray
    edges: torch.Tensor

    @torch.no_grad()
    def logits(self, nodes: np.ndarray) -> torch.Tensor:
        """Logits of population-local ``nodes``."""
        return self.model(self.graph.x, self.edges)[torch.as_tensor(nodes, dtype=torch.long)]


def train_shadow(
    population: Data, spec: ArchitectureSpec, num_classes: int, *, seed: int,
    member_frac: float = 0.45, val_frac: float = 0.1,
) -> ShadowTarget:
    """Train one shadow model inductively on a random part of the population.

    Args:
        population: The adversary's auxiliary graph.
        spec: Architecture and hyperparameters (the target's, under the usual assumption).
        num_classes: Output width (the target's).
        seed: Seed of the shadow split, initialisation and training.
        member_frac: Fraction of the population the shadow trains on.
        val_frac: Fraction used for its early stopping.
    """
    if population.num_nodes < 10:
        raise DataError(f"the auxiliary population has {population.num_nodes} nodes; a shadow "
                        "model needs at least 10 (lower the target's split fractions)")
    split = MembershipSplit.draw(
        population.num_nodes,
        SplitConfig(kind="inductive", train_frac=member_frac, val_frac=val_frac,
                    test_frac=1.0 - member_frac - val_frac),
        seed=derive_seed(seed, "split"),
    )
    with torch_seeded(derive_seed(seed, "init")):
        model = GNN(population.num_features, num_classes, spec)
    edges = split.partitioned_edges(population.edge_index)
    train_node_classifier(
        model, population.x, edges, population.y, split.train,
        val_edges=edges, val_nodes=split.val, lr=spec.lr, weight_decay=spec.weight_decay,
        epochs=spec.epochs, patience=spec.patience, seed=derive_seed(seed, "train"),
    )
    return ShadowTarget(model=model, graph=population, members=split.train,
                        nonmembers=np.concatenate([split.test, split.aux]), edges=edges)


def train_on_nodes(
    x: torch.Tensor, edge_index: torch.Tensor, y: torch.Tensor, train_nodes: np.ndarray,
    spec: ArchitectureSpec, num_classes: int, *, seed: int, max_epochs: int | None = None,
) -> nn.Module:
    """Train a model of ``spec`` full-batch on ``train_nodes`` without early stopping.

    Cheap reference/shadow models (LiRA, RMIA) use this: no validation pass, and the number of
    epochs is capped by ``max_epochs`` when given.

    Args:
        x: Node features.
        edge_index: The graph the model trains with.
        y: Labels (only ``y[train_nodes]`` is used).
        train_nodes: Nodes in the loss.
        spec: Architecture and hyperparameters.
        num_classes: Output width.
        seed: Seed of initialisation and dropout.
        max_epochs: Cap on ``spec.epochs``.

    Returns:
        The trained model, in eval mode.
    """
    epochs = spec.epochs if max_epochs is None else min(spec.epochs, max_epochs)
    with torch_seeded(derive_seed(seed, "init")):
        model = GNN(x.shape[1], num_classes, spec)
    train_node_classifier(model, x, edge_index, y, train_nodes, lr=spec.lr,
                          weight_decay=spec.weight_decay, epochs=epochs, patience=0,
                          seed=derive_seed(seed, "train"))
    return model


def posterior_features(
    posteriors: torch.Tensor, *, form: str, top_k: int = 0
) -> np.ndarray:
    """Attack-classifier features from posterior vectors.

    Args:
        posteriors: ``[n, C]`` posteriors.
        form: ``raw`` (class order, as Duddu/Olatunji), ``sorted`` (descending, as He et al.;
            class-agnostic), or ``log_sorted`` (log of the sorted posteriors).
        top_k: Keep the k largest after sorting (0: all). Ignored for ``raw``.
    """
    p = posteriors.detach().double()
    if form == "raw":
        return p.numpy()
    p = torch.sort(p, dim=1, descending=True).values
    if top_k:
        p = p[:, :top_k]
    if form == "log_sorted":
        p = torch.log(p.clamp_min(1e-12))
    return p.numpy()
