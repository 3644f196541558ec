"""Per-edge DP-SGD for link predictors whose encoder passes no messages.

The unit protected is one **undirected training edge** (add/remove-one on the member edge
list). DP-SGD bounds what one example can do to an update by clipping that example's
gradient; that bound is a per-edge guarantee only when one edge is one example. A GNN
encoder breaks this: a member edge is also a message-passing edge, so it moves the
embeddings of every node within the receptive field, and with them the gradients of many
other examples; per-edge clipping bounds none of that (``defenses.md``: edge-level DP for a
GNN needs a perturbed graph, e.g. GAP-EDP's noisy aggregation, not DP-SGD alone).
So this trainer refuses any encoder that reads edges: the encoder must be ``mlp`` with
no ``propagation``, and the model sees edges only as loss examples.

Each step draws a Poisson sample of the member edges at the plan's rate
(:class:`~graphleaks.models.dp_sgd.PoissonBatchSampler`), computes one gradient per sampled
edge (its positive term plus ``negatives_per_positive`` uniform random pairs of distinct
nodes, drawn independently of the edge set: no rejection against members, which would make
the negatives depend on the private data), clips each to ``max_grad_norm``, sums, adds
Gaussian noise of standard deviation ``noise_multiplier * max_grad_norm`` from a seeded
generator, and takes an Adam step on the sum divided by the expected batch size. No
validation-based model selection: validation edges are private edges too, so the last
iterate is kept. Node features are public here; they are not protected.

:func:`edge_sgm_event` is the privacy record of what ran; the defense that uses this
trainer turns it into a ledger (:class:`~graphleaks.privacy.ledger.PrivacyLedger`, unit
``edge``).

Example:
    >>> from graphleaks.data import tiny_graph
    >>> from graphleaks.data.edge_splits import EdgeMembershipSplit
    >>> from graphleaks.models.dp_sgd import DPSGDPlan
    >>> from graphleaks.models.link_predictor import LinkPredictor, LinkPredictorSpec
    >>> g = tiny_graph()
    >>> split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    >>> spec = LinkPredictorSpec.gae(encoder="mlp", hidden=(), embedding_dim=8)
    >>> model = LinkPredictor(8, spec)
    >>> plan = DPSGDPlan(num_samples=len(split.members), batch_size=32, epochs=2)
    >>> run = train_edge_dp_sgd(model, g.x, split, plan=plan, lr=0.01, noise_multiplier=1.0,
    ...                         max_grad_norm=1.0, seed=0)
    >>> run.steps == plan.steps
    True
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

from graphleaks.data.edge_splits import EdgeMembershipSplit
from graphleaks.errors import InvalidConfigError
from graphleaks.models.dp_sgd import DPSGDPlan, ExecutedSGM, PoissonBatchSampler
from graphleaks.models.link_predictor import LinkPredictor
from graphleaks.privacy.events import (
    GaussianEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    SelfComposedEvent,
)
from graphleaks.privacy.mechanisms import gaussian_noise
from graphleaks.seeding import derive_seed, torch_seeded


def check_edge_private(model: LinkPredictor) -> None:
    """Refuse a model whose embeddings depend on edges (see the module docstring).

    Raises:
        InvalidConfigError: Naming the field and what to use instead.
    """
    spec = model.spec
    if spec.encoder != "mlp" or spec.propagation != 0:
        raise InvalidConfigError(
            f"per-edge DP-SGD needs an encoder that reads no edges; got encoder="
            f"{spec.encoder!r}, propagation={spec.propagation}. One edge moves many nodes' "
            "embeddings through message passing, which per-edge clipping does not bound: "
            "use encoder='mlp' with propagation=0, or perturb the graph (EdgeRand, LapGraph, "
            "GAP-EDP) instead")
    if spec.variational:
        raise InvalidConfigError("per-edge DP-SGD does not support variational=True: the KL "
                                 "term sums over all nodes, not over one edge")


def _pair_index(k: int) -> torch.Tensor:
    """Local pairs ``(0, 1), (2, 3), ...`` over the ``2 + 2k`` stacked endpoint rows."""
    return torch.arange(2 * (k + 1)).view(k + 1, 2)


def per_edge_gradients(
    model: LinkPredictor, x: torch.Tensor, positives: torch.Tensor, negatives: torch.Tensor,
) -> dict[str, torch.Tensor]:
    """Each example's gradient (unclipped): one positive pair and its ``k`` negatives.

    Args:
        model: An edge-free link predictor (:func:`check_edge_private`).
        x: Node features.
        positives: ``[B, 2]`` sampled member edges.
        negatives: ``[B, k, 2]`` each example's negatives.

    Returns:
        Parameter name → ``[B, *shape]`` per-example gradients.
    """
    k = negatives.shape[1]
    rows = torch.cat([positives.unsqueeze(1), negatives], dim=1).reshape(len(positives), -1)
    feats = x[rows]  # [B, 2 + 2k, F]: every endpoint's features, one example per row
    pairs = _pair_index(k).to(x.device)
    target = torch.cat([torch.ones(1), torch.zeros(k)]).to(x.device)
    no_edges = torch.empty(2, 0, dtype=torch.long, device=x.device)
    params = {n: p.detach() for n, p in model.named_parameters()}

    def loss(p: dict[str, torch.Tensor], f: torch.Tensor) -> torch.Tensor:
        logits = functional_call(model, p, (f, no_edges, pairs))
        return F.binary_cross_entropy_with_logits(logits, target, reduction="sum")

    grads: dict[str, torch.Tensor] = vmap(grad(loss), in_dims=(None, 0),
                                          randomness="different")(params, feats)
    return grads


def clip_and_sum(grads: dict[str, torch.Tensor], max_grad_norm: float) -> dict[str, torch.Tensor]:
    """Clip each example's whole gradient to L2 norm ``max_grad_norm`` and sum over examples.

    Adding or removing one example changes the sum by at most ``max_grad_norm`` (L2).
    """
    flat = torch.cat([g.reshape(g.shape[0], -1) for g in grads.values()], dim=1)
    scale = (max_grad_norm / (flat.norm(dim=1) + 1e-12)).clamp(max=1.0)
    return {n: torch.einsum("b,b...->...", scale, g) for n, g in grads.items()}


def edge_sgm_event(plan: DPSGDPlan, noise_multiplier: float) -> PrivacyEvent:
    """The privacy record of :func:`train_edge_dp_sgd` under ``plan``: ``plan.steps``
    Poisson-sampled Gaussian steps at rate ``plan.rate`` (unit: one member edge)."""
    return SelfComposedEvent(PoissonSampledEvent(plan.rate, GaussianEvent(noise_multiplier)),
                             plan.steps)


def train_edge_dp_sgd(
    model: LinkPredictor, x: torch.Tensor, split: EdgeMembershipSplit, *, plan: DPSGDPlan,
    lr: float, noise_multiplier: float, max_grad_norm: float, seed: int,
    negatives_per_positive: int = 1,
) -> ExecutedSGM:
    """Train ``model`` with per-edge DP-SGD on the split's member edges (see the module doc).

    Args:
        model: An edge-free link predictor.
        x: Node features (public).
        split: Its ``members`` are the private examples.
        plan: Sampling plan; ``plan.num_samples`` must equal the number of member edges.
        lr: Adam learning rate.
        noise_multiplier: Noise standard deviation over ``max_grad_norm``.
        max_grad_norm: Per-edge clipping norm C.
        seed: Seeds sampling (``sampling``), negatives (``negatives``), noise (``noise``).
        negatives_per_positive: Uniform random pairs per example.

    Returns:
        The executed sampler record (rate and number of noised steps).

    Raises:
        InvalidConfigError: If the model reads edges, or the plan does not match the split.
    """
    check_edge_private(model)
    n = len(split.members)
    if plan.num_samples != n:
        raise InvalidConfigError(f"the DP-SGD plan is for {plan.num_samples} examples; the split "
                                 f"has {n} member edges")
    if not (noise_multiplier >= 0 and max_grad_norm > 0):
        raise InvalidConfigError("noise_multiplier must be >= 0 and max_grad_norm > 0")
    members = torch.from_numpy(split.members).to(x.device)
    sampler = PoissonBatchSampler(n, plan.rate, plan.steps,
                                  torch.Generator().manual_seed(derive_seed(seed, "sampling")))
    neg_rng = np.random.default_rng(derive_seed(seed, "negatives"))
    noise_gen = torch.Generator().manual_seed(derive_seed(seed, "noise"))
    expected = max(1.0, plan.rate * n)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    k = int(negatives_per_positive)
    with torch_seeded(derive_seed(seed, "torch")):
        model.train()
        for idx in sampler:
            # drawn for every step, sampled edges or not, so the stream never depends on data
            u = neg_rng.integers(0, split.num_nodes, size=(len(idx), k))
            # v uniform among the other n-1 nodes: uniform distinct pairs, no self-loop
            v = (u + 1 + neg_rng.integers(0, split.num_nodes - 1, size=u.shape)) % split.num_nodes
            neg = np.stack([u, v], axis=-1)
            if len(idx):
                summed = clip_and_sum(per_edge_gradients(
                    model, x, members[idx.to(x.device)], torch.from_numpy(neg).to(x.device)),
                    max_grad_norm)
            else:  # an empty batch is still one noised step (pure noise)
                summed = {name: torch.zeros_like(p) for name, p in model.named_parameters()}
            opt.zero_grad()
            for name, p in model.named_parameters():
                noise = gaussian_noise(tuple(p.shape), noise_multiplier * max_grad_norm,
                                       noise_gen, dtype=p.dtype).to(p.device)
                p.grad = (summed[name] + noise) / expected
            opt.step()
    model.eval()
    return ExecutedSGM(rate=sampler.rate, steps=sampler.draws)


__all__ = ["check_edge_private", "clip_and_sum", "edge_sgm_event", "per_edge_gradients",
           "train_edge_dp_sgd"]
