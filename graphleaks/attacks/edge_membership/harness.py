"""The edge harness: it draws edge-membership challenges, keeps the truth, runs edge attacks.

As for node attacks (:mod:`graphleaks.attacks.harness`), the truth boundary is structural:
:func:`edge_challenge` returns a :class:`~graphleaks.attacks.harness.LabelledChallenge`;
only its truth-free :class:`~graphleaks.attacks.base.Challenge` (candidate pairs and the
hint ``known_edges``) reaches ``EdgeAttack._score``, and :func:`run_edge_attack` attaches the
truth to the result afterwards. No other module of this package reads the truth
(``tests/attacks/test_edge_truth_boundary.py``).
"""

from __future__ import annotations

import time

import numpy as np

from graphleaks.attacks.base import AttackResult, Challenge
from graphleaks.attacks.edge_membership._references import EdgeReferencePool
from graphleaks.attacks.edge_membership.base import EdgeAttack, LinkTargetView
from graphleaks.attacks.harness import LabelledChallenge
from graphleaks.data.pairs import contains, pair_keys, undirected_pairs
from graphleaks.models.pair_scorer import LinkTarget
from graphleaks.seeding import derive_seed
from graphleaks.threat import ALL_OUTPUTS, Output, Task


def edge_challenge(
    target: LinkTarget, members: np.ndarray, non_members: np.ndarray, *, seed: int,
    balanced: bool = True, max_per_class: int | None = None,
) -> tuple[LabelledChallenge, np.ndarray]:
    """Member edges against non-members, balanced; and which input row each candidate is.

    Members left out by balancing stay in the served graph and in the hint ``known_edges``
    (the served graph's edges that are not candidates): the adversary's partial knowledge.

    Args:
        target: The served link predictor (its graph gives the known edges).
        members: Validated member edges ``[M, 2]``.
        non_members: Validated non-member pairs ``[K, 2]``, disjoint from the members.
        seed: Seeds the balancing subsample.
        balanced: Subsample the larger side to the smaller one's size.
        max_per_class: Cap on each side (after balancing).

    Returns:
        The labelled challenge and, per candidate, its row in ``members`` (truth 1) or in
        ``non_members`` (truth 0).
    """
    rng = np.random.default_rng(seed)
    m_rows, n_rows = np.arange(len(members)), np.arange(len(non_members))
    cap = min(len(members), len(non_members)) if balanced else None
    if max_per_class is not None:
        cap = max_per_class if cap is None else min(cap, max_per_class)
    notes = []
    if cap is not None:
        if len(m_rows) > cap:
            m_rows = np.sort(rng.choice(m_rows, cap, replace=False))
        if len(n_rows) > cap:
            n_rows = np.sort(rng.choice(n_rows, cap, replace=False))
    if len(m_rows) < len(members) or len(n_rows) < len(non_members):
        notes.append(f"balanced sample: {len(m_rows)} of {len(members)} member edges, "
                     f"{len(n_rows)} of {len(non_members)} non-members")
    cands = np.concatenate([members[m_rows], non_members[n_rows]]).astype(np.int64)
    truth = np.r_[np.ones(len(m_rows), dtype=np.int64), np.zeros(len(n_rows), dtype=np.int64)]
    n = target.num_nodes
    served = undirected_pairs(target.edge_index)
    known = served[~contains(np.unique(pair_keys(cands, n)), pair_keys(served, n))]
    notes.append(f"known edges (served graph minus candidates): {len(known)}")
    ch = Challenge(task=Task.EDGE_MEMBERSHIP, candidates=cands, hints={"known_edges": known},
                   notes=tuple(notes))
    return LabelledChallenge(ch, truth), np.r_[m_rows, n_rows]


def run_edge_attack(
    attack: EdgeAttack, target: LinkTarget, challenge: LabelledChallenge, *, seed: int,
    exposed: frozenset[Output] = ALL_OUTPUTS, references: EdgeReferencePool | None = None,
) -> AttackResult:
    """Score the truth-free part of ``challenge`` through a view, then attach the truth."""
    view = LinkTargetView(target, attack.threat_model, exposed=exposed, attack=attack.name,
                          references=references)
    ch = challenge.challenge
    start = time.perf_counter()
    out = attack.score(view, ch, seed=derive_seed(seed, "attack", attack.name))
    runtime = time.perf_counter() - start
    return AttackResult(
        attack=attack.name, task=attack.task, scores=np.asarray(out.values),
        labels=np.asarray(challenge.truth), candidates=np.asarray(ch.candidates),
        threshold=out.threshold, threat_model=attack.threat_model,
        config=attack.config_record(), seed=seed, runtime_s=runtime,
        query_graph="served graph" + (" minus the queried pairs" if target.drop_queried
                                      else ""),
        notes=ch.notes + out.notes)


__all__ = ["edge_challenge", "run_edge_attack"]
