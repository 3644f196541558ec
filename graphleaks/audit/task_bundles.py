"""Audit a saved link or graph bundle with its own task's attacks.

``graphleaks audit --bundle B`` reads the task from the bundle's manifest: a node bundle goes
through :func:`graphleaks.audit.runner.audit_with_scores`; a ``link`` bundle
(:class:`~graphleaks.models.link_target.TrainedLinkTarget`) runs the edge-membership audit
(:func:`audit_trained_link_target`) and a ``graph`` bundle
(:class:`~graphleaks.models.trained_graph_target.TrainedGraphTarget`) the graph-membership
audit (:func:`audit_trained_graph_target`). Both carry the bundle's ledger, defense and
training record into the report, so the verdict's "edge membership" / "graph membership"
line states whether the ledger covers it. :func:`audit_bundle` is the Python entry.

Protocol of a link bundle's audit: members are the split's member edges (the training
positives); non-members its held-out edges and held-out non-edges (kinds kept apart in the
slices). The model is served as it was trained and saved: over the graph its defense
released (EdgeRand, LapGraph) when there is one, else over the split's inference graph
(member edges, plus the context edges of an inductive split), dropping the queried pairs
when the split says member edges are not in the inference graph; with the features the
defense released (GAP-EDP) when there are any.

Protocol of a graph bundle's audit: members are the split's member graphs, non-members its
non-member graphs, and the adversary's auxiliary population is the rest (the validation
graphs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from torch_geometric.data import Data

from graphleaks.audit.runner import AuditRun
from graphleaks.errors import InvalidConfigError
from graphleaks.models.link_target import TrainedLinkTarget
from graphleaks.models.trained_graph_target import TrainedGraphTarget
from graphleaks.report.records import CanaryAudit
from graphleaks.report.report import json_safe
from graphleaks.seeding import derive_seed

#: The canary unit each bundle task can audit (its ledger's unit).
CANARY_UNIT = {"link": "edge", "graph": "graph"}


def audit_trained_link_target(
    target: TrainedLinkTarget, *, attacks: Sequence[Any] | None = None, seed: int = 0,
    suite: str = "standard", n_bootstrap: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    config: Mapping[str, Any] | None = None, max_per_class: int | None = None,
) -> AuditRun:
    """Edge-membership audit of a trained link target (see the module's protocol).

    Args:
        target: The link target (e.g. from :func:`graphleaks.bundles.load_bundle`).
        attacks: Edge attack names or objects (default: every applicable one).
        seed: Root seed of the challenge, references, attacks and intervals.
        suite: Budgets (``quick``, ``standard``, ``thorough``).
        n_bootstrap: Bootstrap replicates per interval (default: the suite's).
        params: Per-attack config overrides.
        config: Extra entries for the report's config.
        max_per_class: Cap on members and non-members scored.

    Raises:
        CapabilityError: If a named attack needs what the model does not expose.
        InvalidConfigError: For an unknown attack or parameter.
    """
    from graphleaks.audit.link_audit import audit_link_target, edge_protocol, link_target
    from graphleaks.data.edge_splits import HELD_OUT_EDGE, HELD_OUT_NON_EDGE

    split = target.split
    released = target.released_edges is not None
    # the released graph is served as released; the split's own inference graph drops the
    # queried pairs when its protocol keeps member edges out of inference
    served = target.served_edges() if released else split.inference_edge_index()
    graph = Data(x=target.served_features(), edge_index=served, num_nodes=split.num_nodes)
    if "node_type" in target.graph:
        graph.node_type = target.graph.node_type
    graph.name = str(getattr(target.graph, "name", "") or target.dataset.describe())
    lt = link_target(target.model, graph, spec=target.spec, drop_queried=(
        not released and not split.config.member_edges_in_inference_graph))
    non_members = np.concatenate([split.held_out_edges, split.held_out_non_edges])
    kinds = np.r_[np.full(len(split.held_out_edges), HELD_OUT_EDGE),
                  np.full(len(split.held_out_non_edges), HELD_OUT_NON_EDGE)]
    protocol = edge_protocol(lt, split.members, non_members,
                             non_member_sampling=split.config.non_member_sampling,
                             kind=split.config.kind, drawn=split.record())
    protocol["served_graph"] = (f"the graph {target.defense} released (with the split's "
                                "context edges)" if released else "the split's inference graph")
    if target.features is not None:
        protocol["served_features"] = f"the features {target.defense} released"
    run = audit_link_target(lt, split.members, non_members, kinds=kinds, protocol=protocol,
                            attacks=attacks, seed=seed, suite=suite, n_bootstrap=n_bootstrap,
                            params=params, utility=target.utility, max_per_class=max_per_class,
                            model_label="LinkPredictor", ledger=target.ledger,
                            training=target.training, config=config)
    summary = dataclasses.replace(
        run.report.target, defense=target.defense,
        defense_config=json_safe(dict(target.defense_config)),
        dataset=json_safe({**run.report.target.dataset, "ref": target.dataset.to_dict()}))
    return AuditRun(dataclasses.replace(run.report, target=summary), run.tables)


def audit_trained_graph_target(
    target: TrainedGraphTarget, *, attacks: Sequence[Any] | None = None, seed: int = 0,
    suite: str = "standard", n_bootstrap: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    config: Mapping[str, Any] | None = None,
) -> AuditRun:
    """Graph-membership audit of a trained graph classifier (see the module's protocol).

    Args:
        target: The graph target (e.g. from
            :func:`graphleaks.graph_bundles.load_graph_bundle`).
        attacks: Graph attack names or objects (default: every applicable one).
        seed: Root seed.
        suite: Budgets (``quick``, ``standard``, ``thorough``).
        n_bootstrap: Bootstrap replicates per interval (default: the suite's).
        params: Per-attack config overrides.
        config: Extra entries for the report's config.

    Raises:
        CapabilityError: If a named attack needs what the model does not expose.
        InvalidConfigError: For an unknown attack or parameter.
    """
    from graphleaks.audit.graph_audit import audit_graph_run, graph_target

    gt = graph_target(target.model, target.graphs, target.split.members,
                      target.split.non_members, seed=target.seed)
    gt.ledger = target.ledger  # the bundle's ledger, not the (absent) one on the module
    cfg = {"graph_protocol": {"members": "the split's member graphs",
                              "non_members": "the split's non-member graphs",
                              "population": f"the other {len(gt.population)} graphs "
                                            "(validation)"}, **dict(config or {})}
    run = audit_graph_run(gt, attacks=attacks, seed=seed, suite=suite,
                          n_bootstrap=n_bootstrap, params=params, config=cfg)
    summary = dataclasses.replace(
        run.report.target, defense=target.defense,
        defense_config=json_safe(dict(target.defense_config)),
        training=json_safe(dict(target.training)),
        architecture=json_safe({**run.report.target.architecture, "arch": target.spec.arch,
                                "spec": dataclasses.asdict(target.spec)}))
    return AuditRun(dataclasses.replace(run.report, target=summary), run.tables)


def task_canary_audit(target: TrainedLinkTarget | TrainedGraphTarget, *, num_canaries: int,
                      attack: str = "auto", seed: int) -> CanaryAudit:
    """One-run canary audit of the bundle's own defense and configuration, retrained once.

    A link target gets an edge-unit audit (:func:`graphleaks.audit.link_canary
    .link_canary_audit`, its split's configuration), a graph target a graph-unit audit
    (:func:`graphleaks.audit.graph_canary.graph_canary_audit`, its split).

    Raises:
        InvalidConfigError: For too few canaries or an attack the defense does not allow.
    """
    if isinstance(target, TrainedLinkTarget):
        from graphleaks.audit.link_canary import link_canary_audit

        return link_canary_audit(target.graph, defense=target.defense,
                                 defense_params=dict(target.defense_config), spec=target.spec,
                                 split=target.split.config, num_canaries=num_canaries,
                                 attack=attack, seed=derive_seed(seed, "canary", "edge"))
    from graphleaks.audit.graph_canary import graph_canary_audit

    if attack != "auto":
        raise InvalidConfigError("--canary-attack does not apply to a graph canary audit (it "
                                 "scores DP-SGD's gradient canaries by update projection, "
                                 "other defenses' canary graphs by loss); drop it")
    return graph_canary_audit(target.graphs, defense=target.defense,
                              defense_params=dict(target.defense_config), spec=target.spec,
                              split=target.split, num_canaries=num_canaries,
                              seed=derive_seed(seed, "canary", "graph"))


def load_task_bundle(path: str | Path, *, data_root: str | Path | None = None) -> Any:
    """The target of any bundle: node and link via ``load_bundle``, graph via
    ``load_graph_bundle``.

    Raises:
        BundleError: For a missing, corrupted or unsafe bundle.
    """
    from graphleaks.bundles import load_bundle
    from graphleaks.graph_bundles import bundle_task, load_graph_bundle

    if bundle_task(path) == "graph":
        return load_graph_bundle(path, data_root=data_root)
    return load_bundle(path, data_root=data_root)


def audit_bundle(
    path: str | Path, *, attacks: Sequence[Any] | None = None, seed: int = 0,
    suite: str = "standard", n_bootstrap: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    data_root: str | Path | None = None, canary: bool = False,
    num_canaries: int = 1000,
) -> AuditRun:
    """Audit the target of a saved bundle with its task's attacks.

    A node bundle runs :func:`graphleaks.audit.runner.audit_with_scores` (its own default
    canary audit included); a link or graph bundle its task's audit, the ledger carried.

    Args:
        path: The bundle directory.
        attacks: Attack names of the bundle's task (default: every applicable one).
        seed: Root seed.
        suite: Budgets.
        n_bootstrap: Bootstrap replicates per interval.
        params: Per-attack config overrides.
        data_root: Data root of a dataset the bundle reloads.
        canary: Link and graph bundles: also run the canary audit of the ledger's unit (one
            extra training of the bundle's defense); node bundles follow the runner's default.
        num_canaries: Canaries of that audit.

    Raises:
        BundleError: For a bad bundle.
        InvalidConfigError: For an attack, parameter or canary count the task does not take.

    Example:
        >>> import tempfile
        >>> from graphleaks.bundles import save_bundle
        >>> from graphleaks.data.graphsets import motif_graphs
        >>> from graphleaks.defenses.graph_base import graph_registry
        >>> from graphleaks.models.graph_classifier import GraphClassifierSpec
        >>> from graphleaks.models.trained_graph_target import GraphSplit
        >>> gs = motif_graphs(40, seed=0)
        >>> t = graph_registry.get("none")().fit(gs, GraphSplit.draw(40, seed=0),
        ...     model=GraphClassifierSpec(hidden=8, epochs=2, batch_size=8), seed=0)
        >>> d = tempfile.mkdtemp() + "/b"
        >>> _ = save_bundle(t, d)
        >>> run = audit_bundle(d, attacks=["graph_confidence_mia"], n_bootstrap=20)
        >>> run.report.config["task"], run.report.attacks[0].attack
        ('graph', 'graph_confidence_mia')
    """
    target = load_task_bundle(path, data_root=data_root)
    cfg = {"bundle": str(path), "entry": "audit_bundle"}
    if isinstance(target, TrainedLinkTarget):
        run = audit_trained_link_target(target, attacks=attacks, seed=seed, suite=suite,
                                        n_bootstrap=n_bootstrap, params=params, config=cfg)
    elif isinstance(target, TrainedGraphTarget):
        run = audit_trained_graph_target(target, attacks=attacks, seed=seed, suite=suite,
                                         n_bootstrap=n_bootstrap, params=params, config=cfg)
    else:
        from graphleaks.audit.runner import audit_with_scores
        from graphleaks.audit.suite import build_attack, get_suite

        objs = None if attacks is None and not params else [
            build_attack(n, get_suite(suite), dict((params or {}).get(n, {})))
            for n in (attacks or [])]
        return audit_with_scores(target, objs, seed=seed, n_bootstrap=n_bootstrap,
                                 config=cfg, suite=suite)
    return with_task_canary(run, target, canary=canary, num_canaries=num_canaries, seed=seed)


def with_task_canary(run: AuditRun, target: TrainedLinkTarget | TrainedGraphTarget, *,
                     canary: bool, num_canaries: int, attack: str = "auto",
                     seed: int) -> AuditRun:
    """``run`` with the canary audit of a link or graph target, or the note saying why none ran.

    It retrains the bundle's defense once, more than a quick audit costs, so it runs only when
    asked for (``--canary-audit edge`` / ``graph``); a defended target audited without it gets
    a note in ``config["canary_audit_skipped"]`` saying how to get it.
    """
    report = run.report
    unit = CANARY_UNIT[target.task]
    if canary:
        audit = task_canary_audit(target, num_canaries=num_canaries, attack=attack, seed=seed)
        report = dataclasses.replace(report, canary_audits=[audit])
    elif target.ledger.unit.value != "none":
        report = dataclasses.replace(report, config={
            **report.config, "canary_audit_skipped": (
                f"a {target.task} bundle gets no canary audit by default (it retrains the "
                f"defense once); run it with --canary-audit {unit} (Python: canary=True)")})
    return AuditRun(report, run.tables)


__all__ = ["CANARY_UNIT", "audit_bundle", "audit_trained_graph_target",
           "audit_trained_link_target", "load_task_bundle", "task_canary_audit",
           "with_task_canary"]
