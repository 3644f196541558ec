"""Build challenges from a target's split and run attacks against it."""

from __future__ import annotations

import dataclasses

import numpy as np

from graphleaks.attacks.base import (
    ALL_OUTPUTS,
    Attack,
    AttackResult,
    Challenge,
    Output,
    TargetView,
    Task,
)
from graphleaks.models.target import TrainedTarget
from graphleaks.seeding import derive_seed


def membership_challenge(
    target: TrainedTarget, *, balanced: bool = True, max_per_class: int | None = None, seed: int
) -> Challenge:
    """Members (the training nodes) against non-members (held-out test nodes).

    Args:
        target: The target whose split defines the truth.
        balanced: Subsample the larger side so both sides have the same size.
        max_per_class: Cap on each side's size (after balancing).
        seed: Seed of the subsampling.
    """
    rng = np.random.default_rng(derive_seed(seed, "membership-challenge"))
    members = np.asarray(target.split.members)
    nonmembers = np.asarray(target.split.nonmembers)
    n_in, n_out = len(members), len(nonmembers)
    if balanced:
        n_in = n_out = min(n_in, n_out)
    if max_per_class is not None:
        n_in, n_out = min(n_in, max_per_class), min(n_out, max_per_class)
    members = np.sort(rng.choice(members, n_in, replace=False))
    nonmembers = np.sort(rng.choice(nonmembers, n_out, replace=False))
    return Challenge(
        task=Task.MEMBERSHIP,
        candidates=np.concatenate([members, nonmembers]),
        _truth=np.r_[np.ones(n_in, dtype=np.int64), np.zeros(n_out, dtype=np.int64)],
    )


def run_attack(
    attack: Attack,
    target: TrainedTarget,
    *,
    seed: int,
    challenge: Challenge | None = None,
    view: str = "target",
    exposed: frozenset[Output] = ALL_OUTPUTS,
    defense_aware: bool = True,
) -> AttackResult:
    """Run ``attack`` against ``target`` under the attack's own threat model.

    Args:
        attack: The attack.
        target: The trained target.
        seed: Seed of the challenge (if built here) and of the attack.
        challenge: What to score; by default ``attack.make_challenge(target)``.
        view: The graph view queries are evaluated in.
        exposed: What the deployment exposes (restricts the threat model further).
        defense_aware: Whether the adversary knows the target's defense (the default,
            Kerckhoffs's principle); False trains its shadow/reference models as plain GNNs on
            clean data. Recorded in the result's threat model.
    """
    if challenge is None:
        challenge = attack.make_challenge(target, seed=derive_seed(seed, "challenge"))
    threat_model = dataclasses.replace(attack.threat_model,
                                       defense_knowledge=bool(defense_aware))
    tv = TargetView(target, threat_model, exposed=exposed, view=view, attack=attack.name)
    return attack.run(tv, challenge, seed=derive_seed(seed, "attack", attack.name))
