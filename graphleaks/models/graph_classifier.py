"""Graph classifiers (GIN, GCN with global pooling) and their mini-batch trainer.

A graph classifier maps a batch ``(x, edge_index, batch)`` (the graphs side by side, node
ids offset, ``batch[i]`` the graph of node i) to one row of logits per graph,
``[num_graphs, C]``. Its pooled graph embedding is the output of the module named
:attr:`GraphClassifier.embedding_layer` (``"pool"``), so a forward hook reads it.

Layers are plain torch (``index_add``, ``scatter_reduce``; no torch-scatter, no PyG
``MessagePassing``): the same code runs under ``torch.func.vmap`` for per-graph DP-SGD
(:mod:`graphleaks.models.graph_dp_sgd`). No batch normalisation: it mixes graphs of a batch,
which per-graph clipping forbids. GIN is GIN-0 (Xu et al. ICLR'19, ε fixed at 0):
``h' = MLP(h + Σ_{j∈N(i)} h_j)``; GCN is Kipf & Welling's ``D^-1/2 (A+I) D^-1/2 H W``.

Example:
    >>> from graphleaks.data.graphsets import motif_graphs
    >>> gs = motif_graphs(6, seed=0)
    >>> b = collate(gs.graphs)
    >>> model = GraphClassifier(gs.num_features, gs.num_classes, GraphClassifierSpec(hidden=8))
    >>> tuple(model(b.x, b.edge_index, b.batch, b.num_graphs).shape)
    (6, 2)
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.data import Data

from graphleaks._progress import progress
from graphleaks._validation import validate
from graphleaks.metrics.multiclass import accuracy
from graphleaks.seeding import derive_seed, torch_seeded

GRAPH_ARCHITECTURES = ("gin", "gcn")
POOLINGS = ("mean", "sum", "max")


@dataclass(frozen=True)
class GraphClassifierSpec:
    """A graph-classifier architecture and its training hyperparameters.

    Attributes:
        arch: ``gin`` (GIN-0) or ``gcn``.
        hidden: Width of every message-passing layer and of the head's hidden layer.
        layers: Number of message-passing layers.
        pooling: Global pooling of node states into the graph embedding: ``mean``, ``sum``
            or ``max``.
        dropout: Dropout on the pooled embedding during training.
        lr: Adam learning rate.
        weight_decay: Adam weight decay.
        epochs: Maximum number of epochs.
        patience: Early-stopping patience in epochs on validation accuracy (0: never stop).
        batch_size: Graphs per mini-batch.
    """

    arch: str = field(default="gin", metadata={"choices": GRAPH_ARCHITECTURES})
    hidden: int = field(default=64, metadata={"range": (1, 4096)})
    layers: int = field(default=3, metadata={"range": (1, 16)})
    pooling: str = field(default="mean", metadata={"choices": POOLINGS})
    dropout: float = field(default=0.0, metadata={"range": (0.0, 1.0), "closed": "left"})
    lr: float = field(default=0.01, metadata={"range": (0.0, 10.0), "closed": "right"})
    weight_decay: float = field(default=0.0, metadata={"range": (0.0, None)})
    epochs: int = field(default=100, metadata={"range": (1, 100_000)})
    patience: int = field(default=20, metadata={"range": (0, 100_000)})
    batch_size: int = field(default=32, metadata={"range": (1, 1_000_000)})


@dataclass(frozen=True)
class GraphBatch:
    """Graphs side by side: node ids offset, ``batch`` maps each node to its graph.

    Attributes:
        x: ``[total_nodes, F]`` node features.
        edge_index: ``[2, total_edges]`` edges with offset ids.
        batch: ``[total_nodes]`` graph index of each node.
        y: ``[num_graphs]`` class ids.
        num_graphs: Number of graphs.
    """

    x: torch.Tensor
    edge_index: torch.Tensor
    batch: torch.Tensor
    y: torch.Tensor
    num_graphs: int


def collate(graphs: Sequence[Data]) -> GraphBatch:
    """Batch graphs by hand (concatenate, offset edge ids, build ``batch``).

    Equivalent to PyG's ``Batch.from_data_list`` for ``x``, ``edge_index`` and ``y``, without
    its per-attribute machinery.
    """
    sizes = [int(g.num_nodes) for g in graphs]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist() if sizes else []
    x = torch.cat([g.x for g in graphs], dim=0)
    edge_index = torch.cat([g.edge_index + off for g, off in zip(graphs, offsets, strict=True)],
                           dim=1)
    batch = torch.repeat_interleave(torch.arange(len(graphs)), torch.tensor(sizes))
    y = torch.cat([g.y.view(-1) for g in graphs])
    return GraphBatch(x, edge_index, batch, y, len(graphs))


@dataclass(frozen=True)
class GraphStore:
    """Graphs concatenated once, so that a batch is gathered by index, not by a loop.

    Training visits every graph once per epoch in a new order; collating each batch graph
    by graph (reading attributes of PyG ``Data`` objects in Python) cost about as much as
    the model's own forward pass on molecule-sized graphs. :meth:`batch` builds the very
    tensors :func:`collate` builds for the same graphs in the same order (same values,
    dtypes and node order), from the concatenated ones.

    Attributes:
        x: ``[total_nodes, F]`` node features of every graph, in graph order.
        edge_index: ``[2, total_edges]`` edges with each graph's own (local) node ids.
        y: ``[num_graphs]`` class ids.
        num_nodes: ``[num_graphs]`` nodes per graph.
        num_edges: ``[num_graphs]`` edges per graph.
        node_start: ``[num_graphs]`` row of each graph's first node in ``x``.
        edge_start: ``[num_graphs]`` column of each graph's first edge.
    """

    x: torch.Tensor
    edge_index: torch.Tensor
    y: torch.Tensor
    num_nodes: torch.Tensor
    num_edges: torch.Tensor
    node_start: torch.Tensor
    edge_start: torch.Tensor

    @classmethod
    def of(cls, graphs: Sequence[Data]) -> GraphStore | None:
        """The store of ``graphs``, or None where :func:`collate` must serve them itself.

        None for no graphs, mixed feature or edge dtypes (``torch.cat`` of a batch would
        promote them batch by batch), or a graph whose ``y`` is not one class id.
        """
        if not graphs:
            return None
        xs = [g.x for g in graphs]
        eis = [g.edge_index for g in graphs]
        ys = [g.y.view(-1) for g in graphs]
        if (len({t.dtype for t in xs}) != 1 or len({t.dtype for t in eis}) != 1
                or len({t.dtype for t in ys}) != 1 or any(t.numel() != 1 for t in ys)):
            return None
        n = torch.tensor([int(g.num_nodes) for g in graphs], dtype=torch.long)
        e = torch.tensor([int(t.shape[1]) for t in eis], dtype=torch.long)
        return cls(torch.cat(xs, dim=0), torch.cat(eis, dim=1), torch.cat(ys), n, e,
                   torch.cumsum(n, 0) - n, torch.cumsum(e, 0) - e)

    def __len__(self) -> int:
        return int(self.num_nodes.shape[0])

    def batch(self, ids: torch.Tensor) -> GraphBatch:
        """The batch of graphs ``ids`` (in that order), equal to :func:`collate`'s."""
        ids = ids.to(torch.long)
        n, e = self.num_nodes[ids], self.num_edges[ids]
        offsets = torch.cumsum(n, 0) - n  # each graph's first node in the batch
        total_n, total_e = int(n.sum()), int(e.sum())
        # row j of the batch is row j - offset + start of its graph in the store
        node_rows = (torch.repeat_interleave(self.node_start[ids] - offsets, n, output_size=total_n)
                     + torch.arange(total_n))
        edge_cols = (torch.repeat_interleave(self.edge_start[ids] - (torch.cumsum(e, 0) - e), e,
                                             output_size=total_e) + torch.arange(total_e))
        edge_index = self.edge_index[:, edge_cols] + torch.repeat_interleave(
            offsets, e, output_size=total_e)
        batch = torch.repeat_interleave(torch.arange(len(ids)), n, output_size=total_n)
        return GraphBatch(self.x[node_rows], edge_index, batch, self.y[ids], len(ids))


class GINLayer(nn.Module):
    """GIN-0: ``MLP(h_i + Σ_{j∈N(i)} h_j)`` with a two-layer MLP."""

    def __init__(self, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, out_dim), nn.ReLU(),
                                 nn.Linear(out_dim, out_dim))

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """New node states."""
        agg = torch.zeros_like(h).index_add(0, edge_index[1], h[edge_index[0]])
        return self.mlp(h + agg)


class GCNLayer(nn.Module):
    """GCN: ``D^-1/2 (A+I) D^-1/2 H W + b`` (degrees count the self-loop)."""

    def __init__(self, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim))

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """New node states."""
        hw = self.lin(h)
        src, dst = edge_index[0], edge_index[1]
        deg = torch.ones(h.shape[0], dtype=h.dtype).index_add(
            0, dst, torch.ones(dst.shape[0], dtype=h.dtype))
        inv = deg.rsqrt()
        msg = hw[src] * (inv[src] * inv[dst]).unsqueeze(1)
        self_loop = hw * (inv * inv).unsqueeze(1)
        return torch.zeros_like(hw).index_add(0, dst, msg) + self_loop + self.bias


class GlobalPool(nn.Module):
    """Global pooling of node states per graph: ``mean``, ``sum`` or ``max``.

    A module (not a function) so that a forward hook on it reads the graph embedding.
    """

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def forward(self, h: torch.Tensor, batch: torch.Tensor, num_graphs: int) -> torch.Tensor:
        """``[num_graphs, H]`` pooled states (a graph without nodes pools to zeros)."""
        out = torch.zeros(num_graphs, h.shape[1], dtype=h.dtype)
        if self.mode == "max":
            index = batch.unsqueeze(1).expand(-1, h.shape[1])
            return out.scatter_reduce(0, index, h, reduce="amax", include_self=False)
        total = out.index_add(0, batch, h)
        if self.mode == "sum":
            return total
        count = torch.zeros(num_graphs, dtype=h.dtype).index_add(
            0, batch, torch.ones(batch.shape[0], dtype=h.dtype))
        return total / count.clamp(min=1.0).unsqueeze(1)


class GraphClassifier(nn.Module):
    """Message-passing layers, global pooling, and a two-layer head: one logit row per graph.

    Args:
        in_dim: Node feature width.
        num_classes: Number of classes.
        spec: Architecture (:class:`GraphClassifierSpec`).
    """

    #: Name of the module whose output is the pooled graph embedding (hook it to read it).
    embedding_layer = "pool"

    def __init__(self, in_dim: int, num_classes: int, spec: GraphClassifierSpec) -> None:
        super().__init__()
        self.spec = spec
        layer = GINLayer if spec.arch == "gin" else GCNLayer
        dims = [in_dim] + [spec.hidden] * spec.layers
        self.convs = nn.ModuleList(layer(a, b) for a, b in zip(dims[:-1], dims[1:], strict=True))
        self.pool = GlobalPool(spec.pooling)
        self.head = nn.Sequential(nn.Linear(spec.hidden, spec.hidden), nn.ReLU(),
                                  nn.Dropout(spec.dropout), nn.Linear(spec.hidden, num_classes))

    def embed(self, x: torch.Tensor, edge_index: torch.Tensor, batch: torch.Tensor,
              num_graphs: int | None = None) -> torch.Tensor:
        """The pooled graph embeddings, ``[num_graphs, hidden]``."""
        if num_graphs is None:  # data-dependent: pass it explicitly under vmap
            num_graphs = int(batch.max()) + 1 if batch.numel() else 0
        h = x
        for conv in self.convs:
            h = F.relu(conv(h, edge_index))
        out: torch.Tensor = self.pool(h, batch, num_graphs)
        return out

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, batch: torch.Tensor,
                num_graphs: int | None = None) -> torch.Tensor:
        """Logits, ``[num_graphs, num_classes]``."""
        out: torch.Tensor = self.head(self.embed(x, edge_index, batch, num_graphs))
        return out


def new_graph_classifier(spec: GraphClassifierSpec, in_dim: int, num_classes: int, *,
                         seed: int) -> GraphClassifier:
    """An untrained classifier whose initial weights follow from ``seed``.

    Raises:
        InvalidConfigError: For a spec field outside its declared range or choices.
    """
    validate(spec)
    with torch_seeded(derive_seed(seed, "init")):
        return GraphClassifier(in_dim, num_classes, spec)


@torch.no_grad()
def predict_graph_logits(model: nn.Module, graphs: Sequence[Data] | GraphStore, *,
                         batch_size: int = 256) -> torch.Tensor:
    """Logits of every graph, ``[len(graphs), C]``, in eval mode (``graphs`` may be a
    :class:`GraphStore` of labelled graphs, gathered without a loop over them)."""
    model.eval()
    rows = []
    for start in range(0, len(graphs), batch_size):
        if isinstance(graphs, GraphStore):
            b = graphs.batch(torch.arange(start, min(start + batch_size, len(graphs))))
        else:
            b = collate(graphs[start:start + batch_size])
        rows.append(model(b.x, b.edge_index, b.batch, b.num_graphs))
    return torch.cat(rows)


def graph_accuracy(model: nn.Module, graphs: Sequence[Data] | GraphStore) -> float:
    """Accuracy of ``model`` on ``graphs`` (through :func:`graphleaks.metrics.accuracy`)."""
    pred = predict_graph_logits(model, graphs).argmax(1).numpy()
    y = (graphs.y.numpy() if isinstance(graphs, GraphStore)
         else np.asarray([int(g.y) for g in graphs]))
    return accuracy(y, pred)


@dataclass(frozen=True)
class GraphTrainingLog:
    """What happened during training.

    Attributes:
        epochs_run: Epochs run (fewer than the cap when stopped early).
        best_epoch: The epoch whose weights were kept.
        best_val_accuracy: Validation accuracy of the kept weights (nan without validation).
    """

    epochs_run: int
    best_epoch: int
    best_val_accuracy: float


def train_graph_classifier(
    model: nn.Module, train: Sequence[Data], *, val: Sequence[Data] | None = None,
    spec: GraphClassifierSpec, seed: int,
) -> GraphTrainingLog:
    """Mini-batch Adam on cross-entropy, keeping the weights of the best validation epoch.

    Each epoch visits the training graphs in a seeded random order, in batches of
    ``spec.batch_size``. With ``val``, training stops after ``spec.patience`` epochs without
    a better validation accuracy and the best epoch's weights are restored; without it the
    last epoch's weights are kept.

    Args:
        model: A graph classifier ``(x, edge_index, batch, num_graphs) -> logits``.
        train: Training graphs.
        val: Early-stopping graphs (never trained on).
        spec: Optimiser, epochs, patience and batch size.
        seed: Seeds the batch order (``shuffle``) and dropout (``train``).

    Returns:
        A :class:`GraphTrainingLog`.
    """
    opt = torch.optim.Adam(model.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
    order_gen = torch.Generator().manual_seed(derive_seed(seed, "shuffle"))
    best_acc, best_epoch, best_state = -1.0, 0, None
    epoch = 0
    # concatenated once: the same batches as collate's, without a loop over graphs per batch
    store = GraphStore.of(train)
    val_store = GraphStore.of(val) if val else None
    with torch_seeded(derive_seed(seed, "train")):
        for epoch in progress(range(1, spec.epochs + 1), desc="training graph classifier"):
            model.train()
            perm = torch.randperm(len(train), generator=order_gen)
            for start in range(0, len(perm), spec.batch_size):
                part = perm[start:start + spec.batch_size]
                b = (store.batch(part) if store is not None
                     else collate([train[i] for i in part.tolist()]))
                opt.zero_grad()
                F.cross_entropy(model(b.x, b.edge_index, b.batch, b.num_graphs), b.y).backward()
                opt.step()
            if not val:
                continue
            acc = graph_accuracy(model, val_store if val_store is not None else val)
            if acc > best_acc:
                best_acc, best_epoch = acc, epoch
                best_state = copy.deepcopy(model.state_dict())
            elif spec.patience and epoch - best_epoch >= spec.patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return GraphTrainingLog(epochs_run=epoch, best_epoch=best_epoch or epoch,
                            best_val_accuracy=best_acc if best_acc >= 0 else float("nan"))


def fit_graph_classifier(
    spec: GraphClassifierSpec, train: Sequence[Data], num_classes: int, *, seed: int,
    val: Sequence[Data] | None = None,
) -> tuple[GraphClassifier, GraphTrainingLog]:
    """A fresh classifier of ``spec`` trained on ``train`` (early stopping on ``val``).

    ``seed`` seeds initialisation (``init``) and training (``train``) independently.
    """
    model = new_graph_classifier(spec, int(train[0].x.shape[1]), num_classes, seed=seed)
    log = train_graph_classifier(model, train, val=val, spec=spec,
                                 seed=derive_seed(seed, "train"))
    return model, log
