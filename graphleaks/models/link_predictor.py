"""Link predictors: pair scorers ``(x, edge_index, pairs) -> one logit per pair``.

A :class:`LinkPredictor` is a node encoder (GCN, GraphSAGE, GAT or an edge-free MLP, built by
:class:`graphleaks.models.gnn.GNN`, so a GCN encoder runs on its cached sparse adjacency)
followed by a pair decoder (dot product, or an MLP on the endpoints' Hadamard product). The
GCN encoder with the dot decoder is GAE (Kipf & Welling 2016,
https://arxiv.org/abs/1611.07308); ``variational=True`` makes it VGAE. The final node
embeddings pass through the parameter-free tap ``embedding``, which white-box attacks read by
name (:attr:`LinkPredictor.embedding_layers`).

The private unit is an edge: :func:`train_link_predictor` trains on the member edges of an
:class:`~graphleaks.data.edge_splits.EdgeMembershipSplit` (loss positives, and the only edges
in message passing) against fresh uniform negatives every epoch, drawn from a seeded numpy
generator (never torch's global RNG; PyG's ``negative_sampling`` reads it), and keeps the
weights of the epoch with the best validation AUC (:func:`graphleaks.metrics.binary.auc`).

Example:
    >>> from graphleaks.data import tiny_graph
    >>> from graphleaks.data.edge_splits import EdgeMembershipSplit
    >>> g = tiny_graph()
    >>> split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    >>> spec = LinkPredictorSpec(hidden=(16,), embedding_dim=8, epochs=5)
    >>> model, log = fit_link_predictor(g.x, split, spec, seed=0)
    >>> model(g.x, split.inference_edge_index(), torch.tensor([[0, 1], [2, 3]])).shape
    torch.Size([2])
"""

from __future__ import annotations

import copy
import math
import warnings
import weakref
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from graphleaks._progress import progress
from graphleaks._validation import validate
from graphleaks.data.edge_splits import EdgeMembershipSplit
from graphleaks.data.pairs import contains, pair_keys
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.binary import auc
from graphleaks.models.gnn import (
    GNN,
    MAX_HIDDEN,
    MAX_LAYERS,
    ArchitectureSpec,
    _NormalizedAdjacency,
)
from graphleaks.seeding import derive_seed, torch_seeded

ENCODERS = ("gcn", "sage", "gat", "mlp")
DECODERS = ("dot", "mlp")
#: ``full``: the propagation runs on the encoder's output, forward and backward, every step;
#: ``precomputed``: it runs once per graph on the input features (see LinkPredictorSpec).
PROPAGATION_MODES = ("full", "precomputed")
#: Pairs decoded at once in training and scoring: bounds the gathered endpoint rows.
PAIR_CHUNK = 1 << 18
#: Pairs per chunk of a precomputed-mode step or scoring. Small on purpose: each chunk's
#: ``[chunk, width]`` buffers then stay below the allocator's mmap threshold and are reused;
#: 262,144-pair chunks (86 MB buffers) took fresh zeroed pages every step, and at 100k nodes
#: spent more CPU in the kernel (26 s) than in the arithmetic (14 s) over 20 steps.
ROW_CHUNK = 1 << 14
#: The name of the final node-embedding tap (see :attr:`LinkPredictor.embedding_layers`).
EMBEDDING_LAYER = "embedding"
#: The edge list an edge-free encoder (``mlp``) is called with on a subset of rows.
_NO_EDGES = torch.empty((2, 0), dtype=torch.long)


@dataclass(frozen=True)
class LinkPredictorSpec:
    """A link predictor's architecture and training hyperparameters.

    The defaults are a linear graph autoencoder in the GNAE/APPNP style: a linear map of
    the features (``encoder="mlp"``, no hidden layer), each node's embedding rescaled to
    norm 3, then 10 steps of GCN-normalised propagation with restart 0.1, scored by a dot
    product with a bias; trained with 3 negatives per member edge, half the member edges
    hidden from each epoch's message passing, feature dropout 0.3 and weight decay. On
    bundled Cora with the default 85/5/10 transductive edge split and uniform non-edges they
    reach a test link AUC of about 0.96 (``bench/bench_link_predictor.py``; the dataset test
    in ``tests/models/test_link_predictor.py`` asserts >= 0.96 for seed 0), where the
    classic two-layer GCN GAE (:meth:`gae`) reaches about 0.90 (0.89-0.92 over seeds 0-2).

    Attributes:
        encoder: ``gcn``, ``sage``, ``gat`` or ``mlp`` (node features only).
        decoder: ``dot`` (inner product of the endpoint embeddings) or ``mlp`` (an MLP on
            their Hadamard product; symmetric in the endpoints).
        variational: VGAE: the encoder outputs a mean and a log-std, training samples the
            embedding and adds the KL term, scoring uses the mean.
        hidden: Widths of the encoder's hidden layers.
        embedding_dim: Width of the node embeddings.
        decoder_hidden: Hidden width of the MLP decoder.
        dropout: Dropout probability inside the encoder (and the MLP decoder).
        heads: Attention heads of GAT hidden layers.
        lr: Adam learning rate.
        weight_decay: Adam weight decay.
        epochs: Maximum number of full-batch epochs.
        patience: Early-stopping patience on validation AUC (0 disables it).
        negatives_per_positive: Fresh uniform negatives per member edge, every epoch.
        embedding_norm: When positive, every node's encoder output (the mean, for VGAE) is
            rescaled to this L2 norm before propagation, so that high-degree nodes do not
            dominate the dot products (GNAE, Ahn & Kim 2021, https://arxiv.org/abs/2107.04123).
        propagation: Parameter-free GCN propagation steps (``Â h``, the GCN's normalised
            adjacency with self-loops) applied after the encoder: a wider receptive field
            without more weights. 0 disables it.
        teleport: Restart probability α of the propagation: each step is
            ``(1 − α) Â h + α h₀`` (APPNP, Gasteiger et al. 2019,
            https://arxiv.org/abs/1810.05997), so a node keeps part of its own embedding
            however many steps run. 0 is plain ``Â h``.
        input_dropout: Dropout probability on the node features (training only); the
            encoder's own ``dropout`` acts between its layers.
        dot_bias: A learned bias on the dot decoder's logits (training dynamics only; the
            ranking of pairs does not depend on it).
        edge_dropout: Fraction of the member edges left out of the message-passing graph
            in each training epoch (a fresh seeded draw each time); they stay loss
            positives. The model then learns to score edges it cannot see, as it must for
            held-out edges. Validation and scoring use every member edge.
        batch_size: Member edges (loss positives) per optimizer step, each with
            ``negatives_per_positive`` fresh negatives; 0 means every member edge. With
            fewer member edges than this, training is full-batch (one step per epoch, the
            same as 0). With more, each epoch is one step on the next batch of a seeded
            permutation of the members (a new permutation once all were used), so the
            decoder's work per step is bounded while the encoder still passes over the whole
            graph as sparse products; ``epochs`` and ``patience`` then count steps.
        propagation_mode: ``full`` (the default above): the propagation acts on the
            encoder's output, so every training step propagates over the whole graph,
            forward and backward. ``precomputed`` (SGC/SIGN-style, Wu et al. 2019,
            https://arxiv.org/abs/1902.07153): the same ``propagation`` APPNP steps act on the
            input features instead, once per graph (sparse products, no gradient), and the
            encoder, the norm rescale and the decoder follow; a training step then costs
            O(batch), not O(edges × width × steps), which is what lets a default audit (the
            target and every reference model) run on a 10M-edge graph. It is a different
            model (propagate, then map and rescale), and it needs ``encoder="mlp"``, no
            ``variational`` and ``edge_dropout = input_dropout = 0``: both redraw the graph
            or the features every step, which a propagation computed once cannot follow.
            :meth:`precomputed` gives the defaults in this mode.
    """

    encoder: str = field(default="mlp", metadata={"choices": ENCODERS})
    decoder: str = field(default="dot", metadata={"choices": DECODERS})
    variational: bool = False
    hidden: tuple[int, ...] = ()
    embedding_dim: int = field(default=128, metadata={"range": (1, MAX_HIDDEN)})
    decoder_hidden: int = field(default=64, metadata={"range": (1, MAX_HIDDEN)})
    dropout: float = field(default=0.5, metadata={"range": (0.0, 1.0), "closed": "left"})
    heads: int = field(default=4, metadata={"range": (1, 64)})
    lr: float = field(default=0.005, metadata={"range": (0.0, 10.0), "closed": "right"})
    weight_decay: float = field(default=5e-4, metadata={"range": (0.0, None)})
    epochs: int = field(default=500, metadata={"range": (1, 100_000)})
    patience: int = field(default=50, metadata={"range": (0, 100_000)})
    negatives_per_positive: int = field(default=3, metadata={"range": (1, 100)})
    embedding_norm: float = field(default=3.0, metadata={"range": (0.0, 1000.0)})
    propagation: int = field(default=10, metadata={"range": (0, 64)})
    edge_dropout: float = field(default=0.5, metadata={"range": (0.0, 1.0), "closed": "left"})
    teleport: float = field(default=0.1, metadata={"range": (0.0, 1.0), "closed": "left"})
    input_dropout: float = field(default=0.3, metadata={"range": (0.0, 1.0), "closed": "left"})
    dot_bias: bool = True
    batch_size: int = field(default=65_536, metadata={"range": (0, 2**31 - 1)})
    propagation_mode: str = field(default="full", metadata={"choices": PROPAGATION_MODES})

    def check(self) -> None:
        """Cross-field rules: hidden widths are positive integers; a precomputed propagation
        has a linear-or-MLP encoder and nothing that redraws its input every step."""
        if len(self.hidden) > MAX_LAYERS or any(
                (not isinstance(h, int)) or isinstance(h, bool) or not 1 <= h <= MAX_HIDDEN
                for h in self.hidden):
            raise InvalidConfigError(
                f"The hidden parameter of LinkPredictorSpec must be at most {MAX_LAYERS} "
                f"integers in [1, {MAX_HIDDEN}]. Got {str(self.hidden)[:80]} instead.")
        if self.propagation_mode == "precomputed":
            clash = [f for f, bad in (("encoder=mlp", self.encoder != "mlp"),
                                      ("variational=false", self.variational),
                                      ("edge_dropout=0", self.edge_dropout > 0),
                                      ("input_dropout=0", self.input_dropout > 0)) if bad]
            if clash:
                raise InvalidConfigError(
                    "The propagation_mode parameter of LinkPredictorSpec is precomputed, which "
                    "propagates the input features once per graph; it also needs "
                    f"{', '.join(clash)}: set them (e.g. --param link.edge_dropout=0), or use "
                    "propagation_mode=full")

    @classmethod
    def precomputed(cls, **overrides: Any) -> LinkPredictorSpec:
        """The default spec with ``propagation_mode="precomputed"`` and the two dropouts it
        cannot run (``edge_dropout``, ``input_dropout``) set to 0; ``overrides`` replace any
        field."""
        fields: dict[str, Any] = dict(propagation_mode="precomputed", edge_dropout=0.0,
                                      input_dropout=0.0)
        fields.update(overrides)
        return cls(**fields)

    @classmethod
    def gae(cls, *, variational: bool = False, **overrides: Any) -> LinkPredictorSpec:
        """The classic (V)GAE of Kipf & Welling: a two-layer GCN and a plain dot product.

        ``overrides`` replace any other field (e.g. ``epochs``).
        """
        fields: dict[str, Any] = dict(
            encoder="gcn", decoder="dot", variational=variational, hidden=(256,),
            embedding_dim=128, dropout=0.0, lr=0.01, weight_decay=0.0, epochs=300,
            negatives_per_positive=1, embedding_norm=0.0, propagation=0, edge_dropout=0.0,
            teleport=0.0, input_dropout=0.0, dot_bias=False)
        fields.update(overrides)
        return cls(**fields)

    def encoder_spec(self) -> ArchitectureSpec:
        """The encoder as a :class:`~graphleaks.models.gnn.ArchitectureSpec`."""
        return ArchitectureSpec(arch=self.encoder, hidden=self.hidden, dropout=self.dropout,
                                heads=self.heads, lr=self.lr, weight_decay=self.weight_decay,
                                epochs=self.epochs, patience=self.patience)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        return d


class DotDecoder(nn.Module):
    """``⟨z_u, z_v⟩ (+ b)``: the GAE decoder, optionally with a learned bias ``b``.

    The bias leaves the ranking of pairs unchanged; it changes training only: without it a
    non-edge must get a negative inner product, with it an orthogonal pair can score low.
    """

    def __init__(self, bias: bool = False) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(())) if bias else None

    def forward(self, z: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
        """One logit per row of ``pairs`` (``[P, 2]``)."""
        return self.pair_logits(z[pairs[:, 0]], z[pairs[:, 1]])

    def pair_logits(self, zu: torch.Tensor, zv: torch.Tensor) -> torch.Tensor:
        """One logit per row of the endpoint embeddings ``zu``, ``zv`` (``[P, d]`` each)."""
        out = (zu * zv).sum(dim=-1)
        return out if self.bias is None else out + self.bias


class MLPDecoder(nn.Module):
    """An MLP on ``z_u ⊙ z_v``: symmetric in the endpoints, like an undirected edge."""

    def __init__(self, dim: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.lin1 = nn.Linear(dim, hidden)
        self.lin2 = nn.Linear(hidden, 1)
        self.dropout = dropout

    def forward(self, z: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
        """One logit per row of ``pairs`` (``[P, 2]``)."""
        return self.pair_logits(z[pairs[:, 0]], z[pairs[:, 1]])

    def pair_logits(self, zu: torch.Tensor, zv: torch.Tensor) -> torch.Tensor:
        """One logit per row of the endpoint embeddings ``zu``, ``zv`` (``[P, d]`` each)."""
        h = F.relu(self.lin1(zu * zv))
        h = F.dropout(h, p=self.dropout, training=self.training)
        return self.lin2(h).squeeze(-1)


class LinkPredictor(nn.Module):
    """Encoder + decoder: ``forward(x, edge_index, pairs)`` returns one logit per pair.

    ``pairs`` is ``[P, 2]`` (node ids, either order). Higher logits mean "more likely an
    edge". The node embeddings pass the tap :data:`EMBEDDING_LAYER`; the encoder's hidden
    activations are ``encoder.hidden_out.i``.
    """

    def __init__(self, in_dim: int, spec: LinkPredictorSpec) -> None:
        super().__init__()
        self.spec = spec
        self.in_dim = in_dim
        # VGAE: one last layer of width 2d equals two layers of width d (mean, log-std)
        out = spec.embedding_dim * (2 if spec.variational else 1)
        self.encoder = GNN(in_dim, out, spec.encoder_spec())
        self.embedding = nn.Identity()
        # one cache per mode: training graphs change every epoch under edge dropout, while
        # validation and scoring reuse the member graph, which must not be rebuilt each time
        self._adjacency = _NormalizedAdjacency()
        self._eval_adjacency = _NormalizedAdjacency()
        # precomputed mode: the propagated features of the last (features, graph) seen,
        # weakly keyed as _NormalizedAdjacency is, so a new or modified tensor is recomputed
        self._features_key: tuple[Any, ...] | None = None
        self._features: torch.Tensor | None = None
        self.decoder: nn.Module = (DotDecoder(spec.dot_bias) if spec.decoder == "dot" else
                                   MLPDecoder(spec.embedding_dim, spec.decoder_hidden,
                                              spec.dropout))

    @property
    def embedding_layers(self) -> tuple[str, ...]:
        """Named layers a white-box attack may read: hidden activations, then embeddings."""
        return (*(f"encoder.{n}" for n in self.encoder.embedding_layers), EMBEDDING_LAYER)

    @property
    def precomputed(self) -> bool:
        """Whether the propagation acts once per graph on the input features."""
        return self.spec.propagation_mode == "precomputed"

    @torch.no_grad()
    def propagated_features(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """``propagation`` APPNP steps on the input features over ``edge_index`` (the
        precomputed mode's input), remembered for the last features and graph given."""
        key = (x._version, edge_index._version, tuple(x.shape), tuple(edge_index.shape))
        k = self._features_key
        if k is not None and k[0]() is x and k[1]() is edge_index and k[2:] == key \
                and self._features is not None:
            return self._features
        self._features = None  # let the old one go before building the new one
        h0 = x if x.is_floating_point() else x.float()
        h, alpha = h0, self.spec.teleport
        if self.spec.propagation > 0:
            # Â alone, built here and dropped after: no Âᵀ (no backward through it) and no
            # cached matrices per model (about 0.25 GB each at 10M edges, times every
            # reference model of an audit)
            a = _normalized_adjacency(edge_index, int(x.shape[0]), h0.dtype)
            for _ in range(self.spec.propagation):
                h = torch.sparse.mm(a, h)
                if alpha > 0:
                    h = (1 - alpha) * h + alpha * h0
            del a
        self._features = h
        self._features_key = (weakref.ref(x), weakref.ref(edge_index), *key)
        return h

    def embed_rows(self, features: torch.Tensor) -> torch.Tensor:
        """Precomputed mode: the embeddings of the nodes whose propagated features are the
        rows given (each node's embedding depends on its own row only)."""
        mu = self.encoder(features, _NO_EDGES.to(features.device))[:, :self.spec.embedding_dim]
        if self.spec.embedding_norm > 0:
            mu = F.normalize(mu, dim=1) * self.spec.embedding_norm
        return self.embedding(mu)

    def encode_distribution(self, x: torch.Tensor, edge_index: torch.Tensor
                            ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Embedding means and (VGAE only) log-stds, before the ``embedding`` tap."""
        if self.precomputed:
            mu = self.encoder(self.propagated_features(x, edge_index), edge_index)
            mu = mu[:, :self.spec.embedding_dim]
            if self.spec.embedding_norm > 0:
                mu = F.normalize(mu, dim=1) * self.spec.embedding_norm
            return mu, None
        if self.spec.input_dropout > 0:
            x = F.dropout(x, p=self.spec.input_dropout, training=self.training)
        h = self.encoder(x, edge_index)
        d = self.spec.embedding_dim
        mu = h[:, :d]
        if self.spec.embedding_norm > 0:
            mu = F.normalize(mu, dim=1) * self.spec.embedding_norm
        alpha, h0 = self.spec.teleport, mu
        adjacency = self._adjacency if self.training else self._eval_adjacency
        for _ in range(self.spec.propagation):
            mu = adjacency(edge_index, mu)
            if alpha > 0:
                mu = (1 - alpha) * mu + alpha * h0
        if not self.spec.variational:
            return mu, None
        # clamped as PyG's VGAE does: exp of an unbounded log-std overflows early in training
        return mu, h[:, d:].clamp(max=10.0)

    def encode(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Node embeddings (VGAE: sampled in training mode, the mean in eval mode)."""
        mu, logstd = self.encode_distribution(x, edge_index)
        if logstd is not None and self.training:
            mu = mu + torch.randn_like(mu) * logstd.exp()
        return self.embedding(mu)

    def decode(self, z: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
        """One logit per row of ``pairs``."""
        return self.decoder(z, pairs)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor,
                pairs: torch.Tensor) -> torch.Tensor:
        """Logits of the ``[P, 2]`` ``pairs`` on the graph ``(x, edge_index)``."""
        if pairs.dim() != 2 or pairs.shape[1] != 2:
            raise ValueError("pairs must be a [P, 2] tensor of node ids")
        return self.decode(self.encode(x, edge_index), pairs.long())


@dataclass(frozen=True)
class LinkTrainingLog:
    """What happened during link-predictor training."""

    epochs_run: int
    best_epoch: int
    best_val_auc: float | None


def draw_training_negatives(
    count: int, num_nodes: int, sorted_member_keys: np.ndarray, rng: np.random.Generator,
    *, nodes: np.ndarray | None = None,
) -> np.ndarray:
    """``count`` uniform random pairs that are neither self-loops nor member edges.

    Repeats are allowed (a training batch, not a candidate set). Only the member edges are
    avoided: the trainer knows nothing else, so a negative may be a held-out edge, as in
    any real training run. ``nodes`` restricts both endpoints (inductive splits).
    """
    pool = None if nodes is None else np.asarray(nodes, dtype=np.int64)
    size = num_nodes if pool is None else len(pool)
    out: list[np.ndarray] = []
    have = 0
    for _ in range(100):
        m = int((count - have) * 1.2) + 16
        ab = rng.integers(0, size, size=(m, 2))
        if pool is not None:
            ab = pool[ab]
        ab = ab[ab[:, 0] != ab[:, 1]]
        ab = ab[~contains(sorted_member_keys, pair_keys(ab, num_nodes))]
        out.append(ab[:count - have])
        have += len(out[-1])
        if have >= count:
            break
    else:
        raise InvalidConfigError("could not draw training negatives: the member graph is "
                                 "almost complete")
    return np.concatenate(out)


@torch.no_grad()
def link_scores(model: nn.Module, x: torch.Tensor, edge_index: torch.Tensor,
                pairs: np.ndarray | torch.Tensor) -> np.ndarray:
    """The model's logits for ``pairs`` in eval mode, as a float64 numpy array."""
    model.eval()
    p = torch.as_tensor(np.asarray(pairs, dtype=np.int64)).reshape(-1, 2).to(x.device)
    if isinstance(model, LinkPredictor) and model.precomputed:
        return _row_scores(model, model.propagated_features(x, edge_index), p).double().numpy()
    if p.shape[0] <= PAIR_CHUNK or not isinstance(model, LinkPredictor):
        return model(x, edge_index, p).detach().cpu().double().numpy()
    z = model.encode(x, edge_index)  # once, then the pairs chunk by chunk
    return torch.cat([model.decode(z, p[i:i + PAIR_CHUNK])
                      for i in range(0, len(p), PAIR_CHUNK)]).cpu().double().numpy()


def _normalized_adjacency(edge_index: torch.Tensor, num_nodes: int,
                          dtype: torch.dtype) -> torch.Tensor:
    """GCN's ``Â = D^-1/2 (A + I) D^-1/2`` of ``edge_index`` as CSR (the full mode's matrix)."""
    ei, w = gcn_norm(edge_index, None, num_nodes, add_self_loops=True, dtype=dtype)
    # PyG's flow is source_to_target: out[target] += w · h[source]
    a = torch.sparse_coo_tensor(ei.flip(0), w, (num_nodes, num_nodes),
                                check_invariants=True).coalesce()
    del ei, w
    with warnings.catch_warnings():  # torch flags CSR as beta; the product is stable
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support")
        return a.to_sparse_csr()


def _row_logits(model: LinkPredictor, features: torch.Tensor,
                pairs: torch.Tensor) -> torch.Tensor:
    """Precomputed mode: logits of ``pairs`` from their endpoints' rows only, O(pairs).

    Features no wider than the embeddings are gathered per endpoint and embedded there: the
    gather is of constants, so the backward pass has no scatter into an N-row gradient (the
    scatter of a gathered embedding cost about 0.4 CPU-s per 170k-pair step). Wider
    features (Cora's 1,433) embed each distinct endpoint once instead.
    """
    p = pairs.long()
    decoder: Any = model.decoder
    if features.shape[1] <= model.spec.embedding_dim:
        return decoder.pair_logits(model.embed_rows(features[p[:, 0]]),
                                   model.embed_rows(features[p[:, 1]]))
    nodes, local = torch.unique(p, return_inverse=True)
    return model.decode(model.embed_rows(features[nodes]), local.reshape(-1, 2))


@torch.no_grad()
def _row_scores(model: LinkPredictor, features: torch.Tensor, pairs: torch.Tensor,
                chunk: int | None = None) -> torch.Tensor:
    """:func:`_row_logits` in eval mode, ``chunk`` pairs at a time, on the CPU."""
    model.eval()
    chunk = chunk or ROW_CHUNK
    if len(pairs) == 0:
        return torch.empty(0)
    return torch.cat([_row_logits(model, features, pairs[i:i + chunk]).cpu()
                      for i in range(0, len(pairs), chunk)])


def held_out_link_auc(model: nn.Module, x: torch.Tensor, split: EdgeMembershipSplit) -> float:
    """Test link AUC: held-out edges against held-out non-edges, on the inference graph."""
    pairs = np.concatenate([split.held_out_edges, split.held_out_non_edges])
    labels = np.r_[np.ones(len(split.held_out_edges)), np.zeros(len(split.held_out_non_edges))]
    ei = split.inference_edge_index(pairs).to(x.device)
    return auc(link_scores(model, x, ei, pairs), labels)


def train_link_predictor(
    model: LinkPredictor, x: torch.Tensor, split: EdgeMembershipSplit, *, lr: float,
    weight_decay: float, epochs: int, patience: int, seed: int,
    negatives_per_positive: int = 1, edge_dropout: float = 0.0, show_progress: bool = False,
    pair_chunk: int = PAIR_CHUNK, batch_size: int = 0,
) -> LinkTrainingLog:
    """Train on the member edges; keep the weights of the best validation epoch.

    Each epoch: encode on the member graph, score a batch of member edges (all of them when
    ``batch_size`` is 0 or at least their number) and ``negatives_per_positive`` fresh
    uniform negatives per batch member, binary cross-entropy (plus VGAE's KL term divided by
    the node count), one optimizer step. Validation AUC (validation edges against validation
    non-edges, scored on the member graph) picks the kept epoch; without validation pairs
    the last epoch is kept. Batches walk through a seeded permutation of the members (seed
    ``batches``), drawn only when there is more than one batch, so full-batch training
    consumes exactly the random numbers it always did. A ``precomputed`` model propagates
    the features once over the member graph; each step then decodes the batch's endpoint
    rows only (see :attr:`LinkPredictorSpec.propagation_mode`).

    Args:
        model: The link predictor.
        x: Node features.
        split: The edge-membership split (members, validation pairs).
        lr: Adam learning rate.
        weight_decay: Adam weight decay.
        epochs: Maximum epochs.
        patience: Stop after this many epochs without a better validation AUC (0: never).
        seed: Seeds the negatives (``negatives``) and dropout / VGAE noise.
        negatives_per_positive: Negatives per member edge and epoch.
        edge_dropout: Fraction of member edges left out of each epoch's message passing.
        show_progress: Progress bar on stderr.
        pair_chunk: Pairs decoded at once (memory only; results equal up to rounding).
        batch_size: Member edges per step (0: all of them; see
            :attr:`LinkPredictorSpec.batch_size`).

    Returns:
        A :class:`LinkTrainingLog`.
    """
    if model.precomputed and edge_dropout > 0:
        raise InvalidConfigError("edge_dropout must be 0 for a link predictor whose "
                                 "propagation is precomputed (propagation_mode=precomputed)")
    dev = x.device
    mp = split.message_passing_edge_index().to(dev)
    # int32 node ids where they fit: the member list is the largest array training keeps
    # (two 8-byte ids per edge would be 136 MB at 8.5M members); rows go to int64 per chunk
    ids = np.int32 if split.num_nodes < 2**31 else np.int64
    pos = torch.from_numpy(np.ascontiguousarray(split.members, dtype=ids)).to(dev)
    per_step = len(pos) if batch_size <= 0 else min(batch_size, len(pos))
    batch_rng = np.random.default_rng(derive_seed(seed, "batches"))
    order: torch.Tensor | None = None
    cursor = 0
    member_keys = np.sort(pair_keys(split.members, split.num_nodes))
    pool = split.training_nodes()
    rng = np.random.default_rng(derive_seed(seed, "negatives"))
    drop_rng = np.random.default_rng(derive_seed(seed, "edge_dropout"))
    val_pairs = np.concatenate([split.val_edges, split.val_non_edges])
    val_labels = np.r_[np.ones(len(split.val_edges)), np.zeros(len(split.val_non_edges))]
    has_val = len(split.val_edges) > 0 and len(split.val_non_edges) > 0
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    best_auc, best_epoch, best_state = -math.inf, 0, None
    # precomputed mode: one propagation of the features over the member graph, then every
    # step (and every validation) reads the endpoints' rows only
    features = model.propagated_features(x, mp) if model.precomputed else None
    epoch = 0
    with torch_seeded(derive_seed(seed, "torch")):
        bar = True if show_progress else None  # None: a bar only inside a progress display
        for epoch in progress(range(1, epochs + 1), desc="training", enabled=bar):
            model.train()
            if per_step == len(pos):
                batch = pos
            else:
                if order is None or cursor >= len(pos):
                    order = torch.from_numpy(batch_rng.permutation(len(pos))).to(dev)
                    cursor = 0
                batch = pos[order[cursor:cursor + per_step]]
                cursor += per_step
            neg = draw_training_negatives(len(batch) * negatives_per_positive, split.num_nodes,
                                          member_keys, rng, nodes=pool)
            pairs = torch.cat([batch, torch.from_numpy(neg.astype(ids, copy=False)).to(dev)])
            target = torch.cat([torch.ones(len(batch), device=dev),
                                torch.zeros(len(neg), device=dev)])
            opt.zero_grad()
            if features is not None:
                _row_step(model, features, pairs, target, pair_chunk)
            else:
                graph = mp if edge_dropout == 0 else _dropped_graph(pos, edge_dropout, drop_rng)
                _full_step(model, x, graph, pairs, target, pair_chunk)
            opt.step()
            if not has_val:
                continue
            # precomputed mode: link_scores reads the features propagated above (same tensors)
            val_auc = auc(link_scores(model, x, mp, val_pairs), val_labels)
            if val_auc > best_auc:
                best_auc, best_epoch = val_auc, epoch
                best_state = copy.deepcopy(model.state_dict())
            elif patience and epoch - best_epoch >= patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return LinkTrainingLog(epochs_run=epoch, best_epoch=best_epoch or epoch,
                           best_val_auc=best_auc if has_val else None)


def _full_step(model: LinkPredictor, x: torch.Tensor, graph: torch.Tensor, pairs: torch.Tensor,
               target: torch.Tensor, chunk: int) -> None:
    """Gradients of one step that encodes every node on ``graph`` (the ``full`` mode)."""
    mu, logstd = model.encode_distribution(x, graph)
    z = mu if logstd is None else mu + torch.randn_like(mu) * logstd.exp()
    z = model.embedding(z)
    # d(loss)/dz through the decoder, chunk by chunk; then one pass through the encoder
    surrogate = (z * _decoder_gradient(model, z, pairs, target, chunk)).sum()
    if logstd is not None:
        kl = -0.5 * torch.mean(torch.sum(
            1 + 2 * logstd - mu ** 2 - logstd.exp() ** 2, dim=1))
        surrogate = surrogate + kl / x.shape[0]
    surrogate.backward()


def _row_step(model: LinkPredictor, features: torch.Tensor, pairs: torch.Tensor,
              target: torch.Tensor, chunk: int) -> None:
    """Gradients of one precomputed-mode step: the batch's endpoint rows only."""
    chunk = min(chunk, ROW_CHUNK)
    for start in range(0, len(pairs), chunk):
        sl = slice(start, start + chunk)
        F.binary_cross_entropy_with_logits(_row_logits(model, features, pairs[sl]), target[sl],
                                           reduction="sum").div(len(pairs)).backward()


def _decoder_gradient(model: LinkPredictor, z: torch.Tensor, pairs: torch.Tensor,
                      target: torch.Tensor, chunk: int) -> torch.Tensor:
    """The mean BCE's gradient with respect to ``z``, decoding ``chunk`` pairs at a time.

    Accumulated on a detached copy of ``z`` (the decoder's own parameters get their
    gradients on the way); the caller sends it through the encoder once. Memory is
    O(N·d + chunk·d) instead of O(pairs·d): 10M member edges would otherwise gather tens of
    GB of endpoint rows. The result equals the one-shot loss's gradient up to rounding.
    """
    zd = z.detach().requires_grad_()
    for start in range(0, len(pairs), chunk):
        sl = slice(start, start + chunk)
        F.binary_cross_entropy_with_logits(model.decode(zd, pairs[sl].long()), target[sl],
                                           reduction="sum").div(len(pairs)).backward()
    assert zd.grad is not None
    return zd.grad


def _dropped_graph(members: torch.Tensor, rate: float, rng: np.random.Generator) -> torch.Tensor:
    """Both directions of the member edges that survive an edge dropout at ``rate``."""
    kept = members[torch.from_numpy(rng.random(len(members)) >= rate).to(members.device)].long()
    return torch.cat([kept.t(), kept.t().flip(0)], dim=1)


def fit_link_predictor(
    x: torch.Tensor, split: EdgeMembershipSplit, spec: LinkPredictorSpec | None = None, *,
    seed: int, show_progress: bool = False,
) -> tuple[LinkPredictor, LinkTrainingLog]:
    """Build a :class:`LinkPredictor` of ``spec`` (seed ``init``) and train it (``train``)."""
    spec = validate(spec or LinkPredictorSpec())
    with torch_seeded(derive_seed(seed, "init")):
        model = LinkPredictor(int(x.shape[1]), spec).to(x.device)
    log = train_link_predictor(
        model, x, split, lr=spec.lr, weight_decay=spec.weight_decay, epochs=spec.epochs,
        patience=spec.patience, seed=derive_seed(seed, "train"),
        negatives_per_positive=spec.negatives_per_positive, edge_dropout=spec.edge_dropout,
        show_progress=show_progress, batch_size=spec.batch_size)
    return model, log


__all__ = [
    "DECODERS", "EMBEDDING_LAYER", "ENCODERS", "PROPAGATION_MODES", "ROW_CHUNK", "DotDecoder",
    "LinkPredictor", "LinkPredictorSpec", "LinkTrainingLog", "MLPDecoder",
    "draw_training_negatives", "fit_link_predictor", "held_out_link_auc", "link_scores",
    "train_link_predictor",
]
