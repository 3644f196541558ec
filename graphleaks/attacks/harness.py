"""The harness: it samples each task's challenge, keeps the truth, and runs attacks.

The truth boundary is structural. An attack declares *what* challenge it needs as a
:class:`~graphleaks.attacks.base.ChallengeSpec` (sizes and hints, from its config); the
sampler of that spec, here, draws the candidates from the target's split or private graph and
returns a :class:`LabelledChallenge`. Only its truth-free
:class:`~graphleaks.attacks.base.Challenge` reaches ``Attack._score``; :func:`run_attack`
attaches the truth to the :class:`~graphleaks.attacks.base.AttackResult` after scoring. No
module outside this one reads a challenge's truth (``tests/attacks/test_truth_boundary.py``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
import torch

from graphleaks._validation import validate
from graphleaks.attacks._pairs import (
    AUTO_MAX_GROWTH,
    AUTO_MIN_EXPECTED_POSITIVES,
    MIN_GRADED_POSITIVES,
    all_pairs,
    balanced_pairs,
    bfs_subgraphs,
    contains,
    degree_pool,
    edge_keys,
    edge_seeded_nodes,
    expected_positive_pairs,
    label_pairs,
    nodes_for_expected,
    pair_keys,
    sample_nodes,
    undirected_pairs,
)
from graphleaks.attacks.base import (
    ALL_OUTPUTS,
    Attack,
    AttackResult,
    AttributeSpec,
    Challenge,
    ChallengeSpec,
    EmbeddingRelease,
    HeldOutPairsSpec,
    KnownEdgesSpec,
    MembershipSpec,
    NodePairsSpec,
    Output,
    SubgraphPairsSpec,
    TargetView,
    Task,
    walk_budget,
)

if TYPE_CHECKING:  # pragma: no cover
    from graphleaks.attacks._references import ReferencePool
    from graphleaks.attacks._shadow import ShadowPool
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.target import TrainedTarget
from graphleaks.seeding import derive_seed


@dataclass(frozen=True)
class LabelledChallenge:
    """A challenge and its truth, as only the harness holds them.

    Attributes:
        challenge: The truth-free challenge an attack scores.
        truth: One label per candidate (0/1 for binary tasks, class ids for attributes).
    """

    challenge: Challenge
    truth: np.ndarray

    def __post_init__(self) -> None:
        truth = np.asarray(self.truth)
        if truth.ndim != 1 or len(truth) != len(self.challenge.candidates):
            raise InvalidConfigError(f"a challenge of {len(self.challenge.candidates)} "
                                     f"candidates needs as many truth labels; got shape "
                                     f"{truth.shape}")
        object.__setattr__(self, "truth", truth)


# ---------------------------------------------------------------------------- membership


def membership_challenge(
    target: TrainedTarget, *, balanced: bool = True, max_per_class: int | None = None,
    n_known: int | None = None, seed: int,
) -> LabelledChallenge:
    """Members (the training nodes) against non-members (held-out test nodes).

    Args:
        target: The target whose split defines the truth.
        balanced: Subsample the larger side so both sides have the same size.
        max_per_class: Cap on each side's size (after balancing).
        n_known: None for no hints; else that many members and non-members are drawn first,
            given as hints ``known_members``/``known_nonmembers`` and never scored.
        seed: Seed of the subsampling.

    Raises:
        DataError: If the split has too few nodes for ``n_known`` hints.
    """
    members = np.asarray(target.split.members)
    nonmembers = np.asarray(target.split.nonmembers)
    if n_known is not None:
        return _membership_with_known(members, nonmembers, n_known, max_per_class, seed)
    rng = np.random.default_rng(derive_seed(seed, "membership-challenge"))
    n_in, n_out = len(members), len(nonmembers)
    if balanced:
        n_in = n_out = min(n_in, n_out)
    if max_per_class is not None:
        n_in, n_out = min(n_in, max_per_class), min(n_out, max_per_class)
    members = np.sort(rng.choice(members, n_in, replace=False))
    nonmembers = np.sort(rng.choice(nonmembers, n_out, replace=False))
    return LabelledChallenge(
        Challenge(task=Task.MEMBERSHIP, candidates=np.concatenate([members, nonmembers])),
        np.r_[np.ones(n_in, dtype=np.int64), np.zeros(n_out, dtype=np.int64)],
    )


def _membership_with_known(members: np.ndarray, nonmembers: np.ndarray, k: int,
                           max_per_class: int | None, seed: int) -> LabelledChallenge:
    rng = np.random.default_rng(derive_seed(seed, "membership-challenge-known"))
    members = rng.permutation(members)
    nonmembers = rng.permutation(nonmembers)
    if min(len(members), len(nonmembers)) < k + 2:
        raise DataError(f"the challenge needs more than n_known={k} members and non-members; "
                        f"the split has {len(members)} and {len(nonmembers)}")
    known_in, pool_in = members[:k], members[k:]
    known_out, pool_out = nonmembers[:k], nonmembers[k:]
    n = min(len(pool_in), len(pool_out))
    if max_per_class is not None:
        n = min(n, max_per_class)
    cand_in, cand_out = np.sort(pool_in[:n]), np.sort(pool_out[:n])
    return LabelledChallenge(
        Challenge(task=Task.MEMBERSHIP, candidates=np.concatenate([cand_in, cand_out]),
                  hints={"known_members": np.sort(known_in),
                         "known_nonmembers": np.sort(known_out)}),
        np.r_[np.ones(n, dtype=np.int64), np.zeros(n, dtype=np.int64)],
    )


def _sample_membership(spec: MembershipSpec, target: TrainedTarget, seed: int,
                       owner: str) -> LabelledChallenge:
    del owner
    return membership_challenge(target, balanced=spec.balanced,
                                max_per_class=spec.max_per_class, n_known=spec.n_known,
                                seed=seed)


# ---------------------------------------------------------------------------------- links


def public_edge_keys(target: TrainedTarget) -> np.ndarray:
    """Sorted keys of the edges the target's defense releases as public (often none)."""
    public = getattr(target, "public_edges", None)
    if public is None:
        return np.empty(0, dtype=np.int64)
    return edge_keys(public, int(target.graph.num_nodes))


def public_edge_notes(target: TrainedTarget) -> tuple[str, ...]:
    """The report line saying that a defense's public edges were left out, if it has any."""
    public = public_edge_keys(target)
    if len(public) == 0:
        return ()
    return (f"scored on the private edges only: the {len(public)} edges the defense releases "
            "as public are excluded from positives and negatives",)


def private_edges(target: TrainedTarget) -> torch.Tensor:
    """The edges a target was trained with and protects (the truth of edge attacks).

    This is the original graph under the split's protocol (all edges when transductive,
    edges inside each part when inductive), not a defense's released graph, less any edges
    the defense declares public (:attr:`TrainedTarget.public_edges`): those are released as
    they are by design, so finding them is no leak.
    """
    edges = target.split.training_edges(target.graph.edge_index)
    public = public_edge_keys(target)
    if len(public) == 0:
        return edges
    keep = ~contains(public, pair_keys(edges.t().cpu().numpy(), int(target.graph.num_nodes)))
    return edges[:, torch.from_numpy(keep)]


def link_challenge(
    positives: np.ndarray, negatives: np.ndarray, hints: dict[str, np.ndarray] | None = None,
    notes: tuple[str, ...] = (),
) -> LabelledChallenge:
    """Positives then negatives (labels 1 then 0)."""
    cand = np.concatenate([positives, negatives]).astype(np.int64).reshape(-1, 2)
    truth = np.r_[np.ones(len(positives), np.int64), np.zeros(len(negatives), np.int64)]
    return LabelledChallenge(Challenge(task=Task.LINK, candidates=cand, hints=hints or {},
                                       notes=notes), truth)


def sample_link_challenge(
    edge_index: torch.Tensor | np.ndarray, num_nodes: int, *, seed: int,
    n_positive: int | None = 1000,
) -> LabelledChallenge:
    """Balanced challenge: ``n_positive`` true edges (all when fewer or None) and as many
    uniformly sampled non-edges.
    """
    rng = np.random.default_rng(seed)
    pos, neg = balanced_pairs(undirected_pairs(edge_index), num_nodes, rng,
                              max_positive=n_positive)
    return link_challenge(pos, neg)


def _sample_held_out_pairs(spec: HeldOutPairsSpec, target: TrainedTarget, seed: int,
                           owner: str) -> LabelledChallenge:
    """He et al.'s pairs: evaluated tail, known head as hints when the spec asks for it."""
    del owner
    rng = np.random.default_rng(seed)
    n = int(target.graph.num_nodes)
    pos, neg = balanced_pairs(undirected_pairs(private_edges(target)), n, rng,
                              exclude_keys=public_edge_keys(target))
    m = len(pos)
    n_eval = max(1, int(round(spec.eval_fraction * m)))
    n_known = min(int(spec.known_fraction * m), m - n_eval)
    ev_pos, ev_neg = pos[m - n_eval:], neg[m - n_eval:]
    if spec.max_eval_pairs is not None:
        ev_pos, ev_neg = ev_pos[: spec.max_eval_pairs], ev_neg[: spec.max_eval_pairs]
    hints: dict[str, np.ndarray] = {}
    if spec.known_pairs:
        hints["known_pairs"] = np.concatenate([pos[:n_known], neg[:n_known]])
        hints["known_labels"] = np.r_[np.ones(n_known, np.int64), np.zeros(n_known, np.int64)]
    return link_challenge(ev_pos, ev_neg, hints, public_edge_notes(target))


def _sample_known_edges(spec: KnownEdgesSpec, target: TrainedTarget, seed: int,
                        owner: str) -> LabelledChallenge:
    """Known edges (hint ``known_edges``) vs the unknown edges + as many non-edges."""
    rng = np.random.default_rng(seed)
    n = int(target.graph.num_nodes)
    edges = undirected_pairs(private_edges(target))
    pos, neg = balanced_pairs(edges, n, rng, exclude_keys=public_edge_keys(target))
    n_known = max(2, int(round(spec.known_fraction * len(pos))))
    if n_known >= len(pos):
        raise DataError(f"{owner}: {len(pos)} edges are too few to split with "
                        f"known_fraction={spec.known_fraction}")
    ev_pos, ev_neg = pos[n_known:], neg[n_known:]
    if spec.max_eval_pairs is not None:
        ev_pos, ev_neg = ev_pos[: spec.max_eval_pairs], ev_neg[: spec.max_eval_pairs]
    return link_challenge(ev_pos, ev_neg, {"known_edges": pos[:n_known]},
                          public_edge_notes(target))


def _sample_node_pairs(spec: NodePairsSpec, target: TrainedTarget, seed: int,
                       owner: str) -> LabelledChallenge:
    """All pairs among sampled nodes; edges of the training graph are 1.

    Pairs the defense releases as public edges are left out: they are no secret.
    """
    del owner
    n = int(target.graph.num_nodes)
    edges = private_edges(target)
    degree = np.bincount(edges[0].numpy(), minlength=n)
    rng = np.random.default_rng(seed)
    sampler, why = spec.sampler, ""
    n_random = spec.n_nodes
    if sampler != "random":
        pool = degree_pool(degree, spec.sample_type, low=spec.degree_low, high=spec.degree_high)
        in_pool = np.zeros(n, dtype=bool)
        in_pool[pool] = True
        und = undirected_pairs(edges)
        und = und[in_pool[und[:, 0]] & in_pool[und[:, 1]]]
    if sampler == "auto":
        # sized for the verdict's grading minimum: keep, then grow, the paper's uniform
        # sample; seed it with private edges when growing would cost too much
        expected = expected_positive_pairs(len(pool), len(und), spec.n_nodes)
        why = f" (auto: a random sample of {spec.n_nodes:,} expects {expected:.2f} positive pairs"
        if expected >= AUTO_MIN_EXPECTED_POSITIVES:
            sampler, why = "random", why + f", >= {AUTO_MIN_EXPECTED_POSITIVES:g})"
        else:
            need = nodes_for_expected(len(pool), len(und), AUTO_MIN_EXPECTED_POSITIVES)
            fits = (need is not None and need <= AUTO_MAX_GROWTH * spec.n_nodes
                    and (spec.max_pairs is None or need * (need - 1) // 2 <= spec.max_pairs))
            if need is not None and fits:
                sampler, n_random = "random", need
                why += (f", < {AUTO_MIN_EXPECTED_POSITIVES:g}: grown to {need:,} nodes to reach "
                        f"the {MIN_GRADED_POSITIVES} positives the verdict grades on)")
            else:
                sampler = "edge_seeded"
                why += f", < {AUTO_MIN_EXPECTED_POSITIVES:g})"
    nodes = np.empty(0, dtype=np.int64)
    if sampler == "random":
        nodes = sample_nodes(degree, n_random, spec.sample_type, low=spec.degree_low,
                             high=spec.degree_high, rng=rng)
        note = f"node sampler random{why}: {len(nodes):,} uniform nodes"
        if spec.sampler == "auto" and len(und) and _positives(nodes, edges, n) \
                < MIN_GRADED_POSITIVES:
            # an unlucky uniform draw: redrawn edge-seeded so the attack can be graded
            sampler, why = "edge_seeded", (f" (auto: a uniform draw of {len(nodes):,} nodes "
                                           f"held fewer than {MIN_GRADED_POSITIVES} edges)")
    if sampler != "random":
        k = max(1, round(spec.seed_share * spec.n_nodes / 2))
        if spec.sampler == "auto":
            k = max(k, MIN_GRADED_POSITIVES)
        nodes, n_seed = edge_seeded_nodes(und, pool, spec.n_nodes, k, rng)
        seeded = min(k, len(und), len(nodes) // 2)
        note = (f"node sampler edge_seeded{why}: endpoints of {seeded:,} "
                f"random private edges ({n_seed:,} nodes) + {len(nodes) - n_seed:,} uniform "
                "nodes")
    pairs = all_pairs(nodes)
    public = public_edge_keys(target)
    if len(public):
        pairs = pairs[~contains(public, pair_keys(pairs, n))]
    truth = label_pairs(pairs, edge_keys(edges, n), n)
    note += f"; {len(pairs):,} candidate pairs, {int(truth.sum()):,} of them edges"
    if spec.sampler != "random" and truth.sum() < MIN_GRADED_POSITIVES:
        note += (f" (fewer than the {MIN_GRADED_POSITIVES} the verdict grades on: the private "
                 f"graph has {len(und):,} edges among the nodes this sample type draws from)")
    return LabelledChallenge(Challenge(task=Task.LINK, candidates=pairs,
                                       notes=public_edge_notes(target) + (note,)), truth)


def _positives(nodes: np.ndarray, edges: torch.Tensor, n: int) -> int:
    """Private edges among all pairs of ``nodes``."""
    return int(label_pairs(all_pairs(nodes), edge_keys(edges, n), n).sum())


def _sample_subgraph_pairs(spec: SubgraphPairsSpec, target: TrainedTarget, seed: int,
                           owner: str) -> LabelledChallenge:
    """All pairs inside each of ``n_subgraphs`` BFS subgraphs of the private graph."""
    del owner
    n = int(target.graph.num_nodes)
    edges = private_edges(target)
    ei = edges.numpy()
    adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0], ei[1])), shape=(n, n))
    adj = ((adj + adj.T) > 0).tocsr()
    subs = bfs_subgraphs(adj, spec.n_subgraphs, spec.subgraph_size, spec.min_size,
                         np.random.default_rng(seed))
    pairs = np.concatenate([all_pairs(s) for s in subs])
    group = np.concatenate([np.full(len(s) * (len(s) - 1) // 2, i)
                            for i, s in enumerate(subs)])
    truth = label_pairs(pairs, edge_keys(edges, n), n)
    notes = public_edge_notes(target) + (
        f"{len(subs)} BFS subgraph(s) of {min(map(len, subs))}-{max(map(len, subs))} nodes "
        f"({spec.n_subgraphs} requested)",)
    return LabelledChallenge(Challenge(task=Task.LINK, candidates=pairs,
                                       hints={"subgraph": group}, notes=notes), truth)


# ----------------------------------------------------------------------------- attributes


def encode_attribute(values: npt.ArrayLike, *, source: str = "attribute") -> npt.NDArray[np.int64]:
    """Class ids ``0..k-1`` of an attribute (in sorted order of its values).

    Raises:
        DataError: If the attribute has fewer than 2 distinct values.
    """
    v = np.asarray(values).reshape(-1)
    uniq, inv = np.unique(v, return_inverse=True)
    if len(uniq) < 2:
        shown = repr(uniq[0].item()) if len(uniq) else "none"
        raise DataError(f"{source} has a single class ({shown}); attribute inference needs at "
                        "least 2")
    return inv.astype(np.int64)


def split_known(
    num_nodes: int, aux_frac: float, *, seed: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Draw the adversary's known nodes (a ``aux_frac`` fraction) and the rest, both sorted.

    Raises:
        DataError: If either side would be empty.
    """
    n_known = int(round(aux_frac * num_nodes))
    if n_known < 1 or n_known >= num_nodes:
        raise DataError(f"aux_frac={aux_frac} of {num_nodes} nodes leaves no known or no "
                        "unknown node")
    perm = np.random.default_rng(derive_seed(seed, "aia-known")).permutation(num_nodes)
    return np.sort(perm[:n_known]).astype(np.int64), np.sort(perm[n_known:]).astype(np.int64)


def _release(target: TrainedTarget, release: EmbeddingRelease,
             seed: int) -> tuple[npt.NDArray[np.float32], tuple[str, ...]]:
    """The released vectors, and a note when the walk budget shortened the corpus."""
    from graphleaks.models.embeddings import DeepWalk, EmbedderConfig, Node2Vec

    g = target.graph
    n = int(g.num_nodes)
    walks, length = walk_budget(n, release.walks_per_node, release.walk_length,
                                release.max_walk_tokens, window=release.window)
    notes: tuple[str, ...] = ()
    if (walks, length) != (release.walks_per_node, release.walk_length):
        notes = (f"walk budget: the release ran walks_per_node={walks}, walk_length={length} "
                 f"({n * walks * length:,} skip-gram tokens) instead of "
                 f"{release.walks_per_node} x {release.walk_length} "
                 f"({n * release.walks_per_node * release.walk_length:,}), to fit "
                 f"max_walk_tokens={release.max_walk_tokens:,} over {n:,} nodes",)
    ecfg = EmbedderConfig(dimensions=release.dimensions, walk_length=length,
                          walks_per_node=walks, window=release.window,
                          epochs=release.epochs, p=release.p, q=release.q)
    cls = DeepWalk if release.embedder == "deepwalk" else Node2Vec
    return cls(ecfg).fit(g.edge_index, n, seed=seed).vectors, notes


def _sample_attribute(spec: AttributeSpec, target: TrainedTarget, seed: int,
                      owner: str) -> LabelledChallenge:
    """Known nodes with their attribute as hints; all other nodes as candidates."""
    del owner
    n = int(target.graph.num_nodes)
    raw = spec.attribute if spec.attribute is not None else target.graph.y.cpu().numpy()
    if len(raw) != n:
        raise DataError(f"the attribute has {len(raw)} values for {n} nodes")
    y = encode_attribute(raw)
    known, rest = split_known(n, spec.aux_frac, seed=seed)
    hints: dict[str, np.ndarray] = {"known_nodes": known, "train_labels": y[known]}
    notes: tuple[str, ...] = ()
    if spec.released is not None:
        if spec.released.ndim != 2 or spec.released.shape[0] != n:
            raise DataError(f"released embeddings have shape {spec.released.shape}; "
                            f"expected [{n}, d]")
        hints["released_embeddings"] = spec.released
    elif spec.release is not None:
        hints["released_embeddings"], notes = _release(target, spec.release,
                                                       derive_seed(seed, "release"))
    return LabelledChallenge(Challenge(task=Task.ATTRIBUTE, candidates=rest, hints=hints,
                                       notes=notes), y[rest])


# ------------------------------------------------------------------------------- dispatch

_Sampler = Callable[[Any, TrainedTarget, int, str], LabelledChallenge]

#: One sampler per challenge spec; each spec belongs to one task (``spec.task``).
SAMPLERS: dict[type[Any], _Sampler] = {
    MembershipSpec: _sample_membership,
    HeldOutPairsSpec: _sample_held_out_pairs,
    KnownEdgesSpec: _sample_known_edges,
    NodePairsSpec: _sample_node_pairs,
    SubgraphPairsSpec: _sample_subgraph_pairs,
    AttributeSpec: _sample_attribute,
}

# Hints that reveal part of the private graph: only an adversary with graph knowledge gets them.
_GRAPH_HINT_SPECS = (KnownEdgesSpec,)


def _check_grants(attack: Attack, spec: ChallengeSpec) -> None:
    graph_hints = isinstance(spec, _GRAPH_HINT_SPECS) or (
        isinstance(spec, HeldOutPairsSpec) and spec.known_pairs)
    if graph_hints and attack.threat_model.graph_knowledge == "none":
        raise InvalidConfigError(f"{attack.name} asks for known edges of the target graph, "
                                 "but its threat model grants no graph knowledge; set "
                                 "graph_knowledge='partial' or drop the known-edge hints")


def sample_challenge(attack: Attack, target: TrainedTarget, *, seed: int) -> LabelledChallenge:
    """Draw ``attack``'s challenge against ``target`` from its declared spec.

    Raises:
        InvalidConfigError: If the config is invalid, too large for the graph, or the spec
            does not fit the attack's task or threat model.
        DataError: If the graph cannot supply the challenge.
    """
    validate(attack.config, type(attack).__name__)
    graph = getattr(target, "graph", None)
    if graph is not None:  # a scores-only target has no graph, hence no size to refuse
        attack.check_scale(int(graph.num_nodes), int(graph.edge_index.size(1)))
    spec = attack.challenge_spec()
    sampler = SAMPLERS.get(type(spec))
    if sampler is None:
        raise InvalidConfigError(f"{attack.name} declares a challenge spec "
                                 f"{type(spec).__name__} that the harness cannot sample; use "
                                 f"one of: {', '.join(t.__name__ for t in SAMPLERS)}")
    if spec.task != attack.task:
        raise InvalidConfigError(f"{attack.name} solves {attack.task.value}, but its challenge "
                                 f"spec {type(spec).__name__} is for {spec.task.value}")
    _check_grants(attack, spec)
    return sampler(spec, target, seed, attack.name)


def run_attack(
    attack: Attack,
    target: TrainedTarget,
    *,
    seed: int,
    challenge: LabelledChallenge | None = None,
    view: str = "target",
    exposed: frozenset[Output] = ALL_OUTPUTS,
    defense_aware: bool = True,
    shadows: ShadowPool | None = None,
    references: ReferencePool | None = None,
) -> AttackResult:
    """Run ``attack`` against ``target`` under the attack's own threat model.

    The attack scores the truth-free challenge; the truth is attached here, afterwards.

    Args:
        attack: The attack.
        target: The trained target.
        seed: Seed of the challenge (if built here) and of the attack.
        challenge: What to score; by default :func:`sample_challenge` from the attack's spec.
        view: The graph view queries are evaluated in.
        exposed: What the deployment exposes (restricts the threat model further).
        defense_aware: Whether the adversary knows the target's defense (the default,
            Kerckhoffs's principle); False trains its shadow/reference models as plain GNNs on
            clean data. Recorded in the result's threat model.
        shadows: The audit's shared shadow models (see
            :class:`graphleaks.attacks._shadow.ShadowPool`); None trains the attack's own.
        references: The audit's shared offline reference models (see
            :class:`graphleaks.attacks._references.ReferencePool`); None trains the attack's
            own.
    """
    if challenge is None:
        challenge = sample_challenge(attack, target, seed=derive_seed(seed, "challenge"))
    threat_model = dataclasses.replace(attack.threat_model,
                                       defense_knowledge=bool(defense_aware))
    tv = TargetView(target, threat_model, exposed=exposed, view=view, attack=attack.name,
                    shadows=shadows, references=references)
    # a target behind an endpoint counts its queries per attack (RemoteTarget)
    attributed = getattr(target, "attributed_to", None)
    with attributed(attack.name) if callable(attributed) else contextlib.nullcontext():
        return score_labelled(attack, tv, challenge,
                              seed=derive_seed(seed, "attack", attack.name))


def score_labelled(
    attack: Attack, view: TargetView, challenge: LabelledChallenge, *, seed: int
) -> AttackResult:
    """Score the truth-free part of ``challenge`` through ``view``, then attach the truth.

    Args:
        attack: The attack.
        view: What the attack may touch (its threat model is recorded in the result).
        challenge: The challenge with its truth, as only the harness holds it.
        seed: The attack's own seed.
    """
    ch = challenge.challenge
    start = time.perf_counter()
    out = attack.score(view, ch, seed=seed)
    runtime = time.perf_counter() - start
    return AttackResult(
        attack=attack.name, task=attack.task, scores=np.asarray(out.values),
        labels=np.repeat(challenge.truth, out.repeat), candidates=np.asarray(ch.candidates),
        threshold=out.threshold, threat_model=view.threat_model,
        config=attack.config_record(), seed=seed, runtime_s=runtime,
        query_graph=view.view, compat_flags=attack.compat_flags(), notes=ch.notes + out.notes,
        train_labels=ch.hints.get("train_labels"),
    )
