"""Target architectures: GCN, GraphSAGE, GAT, TAGCN (and an edge-free MLP baseline)."""

from __future__ import annotations

import warnings
import weakref
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.weak import WeakIdKeyDictionary
from torch_geometric.nn import GATConv, GCNConv, SAGEConv, TAGConv
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from graphleaks._validation import validate
from graphleaks.errors import InvalidConfigError

ARCHITECTURES = ("gcn", "sage", "gat", "tagcn", "mlp")


#: Widest hidden layer accepted: wider ones only exhaust memory (a hostile 10**9 would try
#: to allocate terabytes before failing).
MAX_HIDDEN = 65_536
MAX_LAYERS = 64


@dataclass(frozen=True)
class ArchitectureSpec:
    """A target architecture and its training hyperparameters.

    Attributes:
        arch: One of ``gcn``, ``sage``, ``gat``, ``tagcn``, or ``mlp`` (ignores edges; the
            "no edges used" end of the edge-privacy scale).
        hidden: Width of each hidden layer; the number of layers is ``len(hidden) + 1``.
        dropout: Dropout probability on hidden representations.
        heads: Attention heads of GAT hidden layers.
        hops: Filter size K of TAGCN layers.
        lr: Adam learning rate.
        weight_decay: Adam weight decay.
        epochs: Maximum number of full-batch epochs.
        patience: Early stopping patience on validation accuracy (0 disables it).
    """

    arch: str = field(default="gcn", metadata={"choices": ARCHITECTURES})
    hidden: tuple[int, ...] = (64,)
    dropout: float = field(default=0.5, metadata={"range": (0.0, 1.0), "closed": "left"})
    heads: int = field(default=4, metadata={"range": (1, 64)})
    hops: int = field(default=2, metadata={"range": (1, 10)})
    lr: float = field(default=0.01, metadata={"range": (0.0, 10.0), "closed": "right"})
    weight_decay: float = field(default=5e-4, metadata={"range": (0.0, None)})
    epochs: int = field(default=200, metadata={"range": (1, 100_000)})
    patience: int = field(default=50, metadata={"range": (0, 100_000)})

    def check(self) -> None:
        """Cross-field rule: hidden widths are positive integers."""
        if len(self.hidden) > MAX_LAYERS or any(
                (not isinstance(h, int)) or not 1 <= h <= MAX_HIDDEN for h in self.hidden):
            raise InvalidConfigError(
                f"The hidden parameter of ArchitectureSpec must be at most {MAX_LAYERS} integers "
                f"in [1, {MAX_HIDDEN}]. Got {str(self.hidden)[:80]} instead."
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArchitectureSpec:
        """Inverse of :meth:`to_dict`, validated."""
        d = dict(data)
        if "hidden" in d:
            d["hidden"] = tuple(int(h) for h in d["hidden"])
        names = set(cls.__dataclass_fields__)
        unknown = sorted(set(d) - names)
        if unknown:
            raise InvalidConfigError(f"unknown architecture field {unknown[0]!r}")
        return validate(cls(**d))


def _dropout(h: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Inverted dropout of ``h`` (as ``F.dropout``) with a cheaper mask draw on the CPU.

    torch's CPU ``bernoulli_`` costs about 10 ns an element: at p = 0.5 on a 100k × 64
    hidden layer it was 0.07 CPU-s an epoch, half of a GCN's training. At p = 0.5 every
    bit of a random int64 is a fair coin, so one 64-bit draw serves 64 elements (0.01
    CPU-s forward and backward, against 0.12 with ``F.dropout``); other rates compare
    uniforms with ``p``. The mask is Bernoulli(1 - p) per element as before, but a
    different draw from the same seeded generator, so a trained model differs from one
    trained with ``F.dropout``; runs remain reproducible at a fixed seed.
    """
    if not training or p == 0.0 or h.device.type != "cpu" or p >= 1.0:
        return F.dropout(h, p=p, training=training)
    if p == 0.5:
        words = -(-h.numel() // 64)
        bits = torch.randint(-2**63, 2**63 - 1, (words,), dtype=torch.int64)
        keep = torch.from_numpy(
            np.unpackbits(bits.numpy().view(np.uint8), count=h.numel()).view(np.bool_)
        ).view(h.shape)
    else:
        keep = torch.rand(h.shape, dtype=torch.float32) >= p
    # a float mask: multiplying by a bool one promotes per element, forward and backward
    return h * keep.to(h.dtype).mul_(1.0 / (1.0 - p))


def _conv(spec: ArchitectureSpec, in_dim: int, out_dim: int, last: bool) -> nn.Module:
    if spec.arch == "gcn":
        return GCNConv(in_dim, out_dim, cached=False)
    if spec.arch == "sage":
        return SAGEConv(in_dim, out_dim)
    if spec.arch == "gat":
        if last:
            return GATConv(in_dim, out_dim, heads=1, concat=False)
        return GATConv(in_dim, out_dim // spec.heads if out_dim % spec.heads == 0 else out_dim,
                       heads=spec.heads, concat=out_dim % spec.heads == 0)
    if spec.arch == "tagcn":
        return TAGConv(in_dim, out_dim, K=spec.hops)
    return nn.Linear(in_dim, out_dim)


class _SparseProduct(torch.autograd.Function):
    """``A @ H`` for a constant CSR ``A``, whose backward uses a stored CSR ``Aᵀ``.

    torch's own backward of a CSR product transposes ``A`` on every call; with ``Aᵀ`` kept
    beside ``A`` both directions are plain row-parallel CSR products.
    """

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, a_t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        ctx.a_t = a_t
        return torch.sparse.mm(a, h)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, None, torch.Tensor]:
        return None, None, torch.sparse.mm(ctx.a_t, grad)


#: Every model's normalised graphs, by the ``edge_index`` tensor they came from (weakly:
#: an entry goes when its tensor does): ``{key: (Â, Âᵀ)}`` with the key of
#: :meth:`_NormalizedAdjacency._matrices_for`.
_SHARED_MATRICES: WeakIdKeyDictionary = WeakIdKeyDictionary()
#: ``Â X`` of constant features, by the ``x`` tensor (weakly): ``(key, weakref(Â), Â X)``.
_SHARED_PROPAGATED: WeakIdKeyDictionary = WeakIdKeyDictionary()


class _NormalizedAdjacency:
    """GCN's D^-1/2 (A + I) D^-1/2 as CSR matrices, remembered for one edge_index.

    A GCN layer is ``Â (X W) + b``. PyG recomputes Â's weights and runs a gather/scatter on
    every call: on Amazon Computers (0.5 M directed edges) one training step took about
    0.55 s, against about 0.2 s with the cached CSR products. The cache holds a weak
    reference to the edge_index tensor and its in-place version counter, so a different or
    modified graph is never served a stale matrix.

    Models given the same tensor share one build (``_SHARED_MATRICES``, and
    ``_SHARED_PROPAGATED`` for ``Â X``): an audit queries the target and every shadow and
    reference model on the same query graph, and G-BASE sends each batched ball union to
    the target and every reference. Each model used to hold its own copy of the same
    matrices, so memory grew by ``Â``, ``Âᵀ`` and ``Â X`` with every pooled model (about
    0.4 GB each at 1M nodes); the matrices are the same, so outputs are unchanged bit for
    bit.
    """

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._matrices: tuple[torch.Tensor, torch.Tensor] | None = None
        self._x_key: tuple[Any, ...] | None = None
        self._ax: torch.Tensor | None = None

    def __call__(self, edge_index: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """``Â @ h`` for the graph ``edge_index`` over ``h.shape[0]`` nodes."""
        a, a_t = self._matrices_for(edge_index, h)
        return _SparseProduct.apply(a, a_t, h)

    def propagated(self, edge_index: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``Â @ x`` for constant (gradient-free) features ``x``, remembered for that tensor.

        A first GCN layer is ``Â (X W)``; with ``X`` constant it equals ``(Â X) W``, and
        ``Â X`` is the same in every epoch, so training needs no sparse product in its first
        layer, forward or backward (about a third of a GCN's training CPU at 100k nodes).
        The result differs from ``Â (X W)`` by float rounding only.
        """
        matrices = self._matrices_for(edge_index, x)
        key = (x._version, x.shape, x.dtype, x.device)
        if not (self._x_key is not None and self._x_key[0]() is x
                and self._x_key[1]() is matrices[0] and self._x_key[2:] == key
                and self._ax is not None):
            shared = _SHARED_PROPAGATED.get(x)
            if shared is not None and shared[0] == key and shared[1]() is matrices[0]:
                self._ax = shared[2]
            else:
                with torch.no_grad():
                    self._ax = torch.sparse.mm(matrices[0], x)
                _SHARED_PROPAGATED[x] = (key, weakref.ref(matrices[0]), self._ax)
            self._x_key = (weakref.ref(x), weakref.ref(matrices[0]), *key)
        return self._ax

    def _matrices_for(self, edge_index: torch.Tensor, h: torch.Tensor
                      ) -> tuple[torch.Tensor, torch.Tensor]:
        """Â and Âᵀ for ``edge_index`` over ``h.shape[0]`` nodes, rebuilt on a new graph."""
        num_nodes = h.shape[0]
        key = (edge_index._version, num_nodes, edge_index.device, edge_index.shape, h.dtype)
        if not (self._key is not None and self._key[0]() is edge_index
                and self._key[1:] == key and self._matrices is not None):
            shared = _SHARED_MATRICES.get(edge_index)
            if shared is not None and key in shared:
                self._matrices = shared[key]
            else:
                self._matrices = _normalize(edge_index, num_nodes, h.dtype)
                # one entry per tensor: a new version or node count replaces the old one
                _SHARED_MATRICES[edge_index] = {key: self._matrices}
            self._key = (weakref.ref(edge_index), *key)
        assert self._matrices is not None
        return self._matrices

    def __deepcopy__(self, memo: dict[int, Any]) -> _NormalizedAdjacency:
        return _NormalizedAdjacency()

    def __getstate__(self) -> dict[str, Any]:
        # A pickled model (one trained in a Ray task, say) travels without its cache: weak
        # references do not pickle, and the cache is rebuilt from the graph on first use.
        return vars(_NormalizedAdjacency())


def _normalize(edge_index: torch.Tensor, num_nodes: int, dtype: torch.dtype
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """GCN's ``Â`` and ``Âᵀ`` of ``edge_index`` over ``num_nodes`` nodes, as CSR."""
    ei, w = gcn_norm(edge_index, None, num_nodes, add_self_loops=True, dtype=dtype)
    # PyG's flow is source_to_target: out[target] += w · h[source].
    a = torch.sparse_coo_tensor(ei.flip(0), w, (num_nodes, num_nodes),
                                check_invariants=True).coalesce()
    with warnings.catch_warnings():  # torch flags CSR as beta; the product is stable
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support")
        return a.to_sparse_csr(), a.t().coalesce().to_sparse_csr()


class GNN(nn.Module):
    """A stack of graph convolutions with ReLU and dropout between them.

    ``forward`` returns logits; ``embed`` returns every layer's output (hidden layers after
    ReLU, the last one as logits), which white-box attacks read. GCN layers run as one sparse
    product with a cached normalized adjacency; the result equals PyG's ``GCNConv`` up to
    float rounding (``tests/models/test_gnn.py``).
    """

    def __init__(self, in_dim: int, out_dim: int, spec: ArchitectureSpec) -> None:
        super().__init__()
        self.spec = spec
        self.in_dim = in_dim
        self.out_dim = out_dim
        dims = [in_dim, *spec.hidden, out_dim]
        layers = []
        for i in range(len(dims) - 1):
            last = i == len(dims) - 2
            layers.append(_conv(spec, dims[i], dims[i + 1], last))
        self.layers = nn.ModuleList(layers)
        # Parameter-free taps on the hidden activations (after ReLU): the target-model
        # protocol reads them with forward hooks, as it reads any model's named layers.
        self.hidden_out = nn.ModuleList(nn.Identity() for _ in spec.hidden)
        self._adjacency = _NormalizedAdjacency()

    @property
    def embedding_layers(self) -> tuple[str, ...]:
        """Names of the hidden activations (read by the target-model protocol's hooks)."""
        return tuple(f"hidden_out.{i}" for i in range(len(self.hidden_out)))

    def _layer_forward(
        self, layer: nn.Module, x: torch.Tensor, edge_index: torch.Tensor, first: bool = False
    ) -> torch.Tensor:
        if isinstance(layer, nn.Linear):
            return layer(x)
        if isinstance(layer, GCNConv) and not edge_index.is_sparse:
            # (Â X) W with Â X remembered when X is the constant input and no wider than the
            # layer's output, so a fresh X (a subgraph query) never costs more than Â (X W);
            # wide sparse features (Cora's 1433) keep Â (X W) and its exact rounding
            if first and not x.requires_grad and x.shape[1] <= layer.lin.weight.shape[0]:
                out = layer.lin(self._adjacency.propagated(edge_index, x))
            else:
                out = self._adjacency(edge_index, layer.lin(x))
            return out if layer.bias is None else out + layer.bias
        return layer(x, edge_index)

    def embed(self, x: torch.Tensor, edge_index: torch.Tensor) -> list[torch.Tensor]:
        """Every layer's output for every node of the graph ``(x, edge_index)``."""
        outs = []
        h = x
        for i, layer in enumerate(self.layers):
            h = _dropout(h, self.spec.dropout, self.training) if i > 0 else h
            h = self._layer_forward(layer, h, edge_index, first=i == 0)
            if i < len(self.layers) - 1:
                h = self.hidden_out[i](F.relu(h))
            outs.append(h)
        return outs

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Logits for every node of the graph ``(x, edge_index)``."""
        return self.embed(x, edge_index)[-1]
