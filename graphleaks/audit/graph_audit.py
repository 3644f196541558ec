"""Audit a graph classifier: which of its training graphs (molecules) does it give away?

``audit_model(model, dataset, members=ids, non_members=ids, task="graph")`` lands here
(:func:`audit_graph_model`). The model is anything mapping a batch ``(x, edge_index,
batch)`` to one output row per graph (:mod:`graphleaks.models.graph_target`); the dataset
is a :class:`~graphleaks.data.graphsets.GraphSet` or a list of PyG ``Data`` graphs with one
class label each; members and non-members are graph ids (or boolean masks). Graphs in
neither set are the adversary's population (shadow data), unless ``population`` names it.

Every graph-membership attack of :data:`~graphleaks.attacks.graph_membership.graph_registry`
runs unless the model does not expose what it needs (listed in
``report.config["skipped_attacks"]``); each graph is one record, so the metrics, intervals,
ε lower bounds (unit ``graph``) and report files are those of every other audit. Slices:
graph size, class and, for molecules, Bemis–Murcko scaffold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks.attacks.graph_membership import (
    GraphAttack,
    GraphReferencePool,
    graph_registry,
    run_graph_attack,
)
from graphleaks.attacks.graph_membership.base import MIN_POPULATION
from graphleaks.audit.runner import AuditRun, evaluate_result, trivial_baseline, with_slices
from graphleaks.audit.suite import get_suite
from graphleaks.data.graphsets.record import GraphSet, check_graphs
from graphleaks.data.graphsets.scaffolds import murcko_scaffolds
from graphleaks.data.score_files import NodeScores
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.metrics.multiclass import accuracy, majority_baseline
from graphleaks.models.graph_target import (
    GraphCopies,
    GraphModelInterface,
    GraphTarget,
    check_graph_outputs,
    graph_copies,
)
from graphleaks.models.protocol import as_logits, set_eval
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.report.graph_scores import (
    GraphCandidateTable,
    graph_most_exposed,
    graph_slice_masks,
)
from graphleaks.report.report import (
    REPORT_SCHEMA_VERSION,
    AttackReport,
    AuditReport,
    TargetSummary,
    json_safe,
)
from graphleaks.seeding import derive_seed
from graphleaks.threat import Output
from graphleaks.versions import library_versions

#: Per-suite budgets of the graph attacks (config overrides), smallest first.
GRAPH_SUITE_BUDGETS: dict[str, dict[str, dict[str, Any]]] = {
    "quick": {"graph_lira_mia": {"num_references": 4, "ref_epochs": 50},
              "graph_rmia_mia": {"num_references": 4, "ref_epochs": 50},
              "graph_shadow_mia": {"shadow_epochs": 50},
              "graph_label_only_mia": {"num_queries": 10}},
    "standard": {},
    "thorough": {"graph_lira_mia": {"num_references": 32, "ref_epochs": 200},
                 "graph_rmia_mia": {"num_references": 32, "ref_epochs": 200},
                 "graph_shadow_mia": {"shadow_epochs": 200},
                 "graph_label_only_mia": {"num_queries": 100}},
}


def as_graph_set(dataset: Any) -> GraphSet:
    """A checked :class:`GraphSet` from a graph set or a sequence of PyG ``Data`` graphs.

    Raises:
        DataError: For an empty set, an empty graph, inconsistent features or labels.
    """
    if isinstance(dataset, GraphSet):
        # a GraphSet built without from_graphs is checked here too (empty graphs, labels)
        check_graphs(dataset.graphs, dataset.num_classes, source=dataset.source)
        return dataset
    if isinstance(dataset, Data) or not isinstance(dataset, Sequence):
        raise DataError(f"a graph audit needs a GraphSet or a list of torch_geometric Data "
                        f"graphs (one per record), not {type(dataset).__name__}")
    graphs = list(dataset)
    labels = [getattr(g, "y", None) for g in graphs]
    if not graphs or any(y is None for y in labels):
        raise DataError("every graph needs a class label y (one integer per graph)")
    top = max(int(torch.as_tensor(y).view(-1)[0]) for y in labels)
    return GraphSet.from_graphs(graphs, [str(c) for c in range(max(2, top + 1))],
                                source="user graphs")


def graph_ids(ids: Any, num_graphs: int, what: str) -> np.ndarray:
    """Graph ids from a boolean mask (one entry per graph) or integer ids, sorted.

    Raises:
        DataError: For a mask of another length, non-integer, out-of-range or duplicated
            ids, or an empty set.
    """
    arr = ids.detach().cpu().numpy() if isinstance(ids, torch.Tensor) else np.asarray(
        list(ids) if isinstance(ids, range) else ids)
    if arr.dtype == bool:
        if arr.shape != (num_graphs,):
            raise DataError(f"the {what} mask has shape {arr.shape}; a mask needs one entry per "
                            f"graph ({num_graphs})")
        arr = np.flatnonzero(arr)
    if arr.size and arr.dtype.kind not in "iu":
        raise DataError(f"{what} must be a boolean mask or integer graph ids, not {arr.dtype}")
    arr = arr.reshape(-1).astype(np.int64)
    if arr.size == 0:
        raise DataError(f"no {what} given; list the graph ids (0..{num_graphs - 1})")
    if arr.min() < 0 or arr.max() >= num_graphs:
        raise DataError(f"{what} graph ids must lie in 0..{num_graphs - 1} (the set holds "
                        f"{num_graphs} graphs); {int(((arr < 0) | (arr >= num_graphs)).sum())} "
                        "are out of range")
    if np.unique(arr).size != arr.size:
        raise DataError(f"{what} graph ids contain duplicates; list each graph once")
    return np.sort(arr)


def graph_target(
    model: Any, dataset: Any, members: Any, non_members: Any, *,
    output: str = "logits", embedding_layer: str | None = None,
    model_factory: Callable[[], nn.Module] | None = None, population: Any = None,
    parameters: bool | None = None, seed: int = 0,
) -> GraphTarget:
    """Check everything and wrap a graph classifier as a :class:`GraphTarget`.

    Raises:
        DataError: For a bad graph set or id sets, or outputs that are not one row per
            graph of the classes' width.
        InvalidConfigError: For an unknown output kind or embedding layer.
    """
    if not callable(model):
        raise InvalidConfigError(f"the model must be callable as model(x, edge_index, batch); "
                                 f"got {type(model).__name__}")
    gs = as_graph_set(dataset)
    n = len(gs)
    mem = graph_ids(members, n, "members")
    non = graph_ids(non_members, n, "non-members")
    both = np.intersect1d(mem, non)
    if both.size:
        raise DataError(f"{both.size} graph(s) are both members and non-members (the first is "
                        f"graph {int(both[0])}); the two sets must be disjoint")
    rest = np.setdiff1d(np.arange(n), np.union1d(mem, non))
    if population is None:
        pop = rest
    else:
        pop = graph_ids(population, n, "population")
        if np.intersect1d(pop, np.union1d(mem, non)).size:
            raise DataError("the population shares graphs with the members or non-members; the "
                            "adversary's auxiliary graphs must be neither")
    iface = GraphModelInterface(output=output, embedding_layer=embedding_layer,
                                parameters=isinstance(model, nn.Module) if parameters is None
                                else parameters)
    iface.check(model)
    set_eval(model)
    target = GraphTarget(
        model=model, graphs=gs, members=mem, non_members=non, population=pop,
        interface=iface, copy_maker=graph_copies(model, output, gs.num_features, gs.num_classes,
                                             model_factory),
        ledger=getattr(model, "privacy_ledger", None) or PrivacyLedger.non_private(),
        seed=int(seed), model_class=f"{type(model).__module__}.{type(model).__qualname__}")
    try:
        check_graph_outputs(target)
    except (DataError, InvalidConfigError, CapabilityError):
        raise
    except Exception as exc:  # the user's model: one line, whatever it raised
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise DataError(f"the model failed on a batch of graphs ({type(exc).__name__}: "
                        f"{first}); it must take (x [nodes, {gs.num_features}], edge_index "
                        "[2, E], batch [nodes]) and return one row per graph") from exc
    return target


def graph_exposure(target: GraphTarget | GraphScoresTarget) -> frozenset[Output]:
    """What a graph classifier exposes: labels and posteriors always, logits when it
    outputs them, embeddings with a named layer, parameters for an in-memory module.
    Exported scores expose posteriors and labels only."""
    if not isinstance(target, GraphTarget):
        return frozenset({Output.LABELS, Output.POSTERIORS})
    out = {Output.LABELS, Output.POSTERIORS, Output.FEATURE_QUERIES}
    if target.interface.output == "logits":
        out.add(Output.LOGITS)
    if target.interface.embedding_layer is not None:
        out.add(Output.EMBEDDINGS)
    if target.interface.parameters:
        out.add(Output.PARAMETERS)
    return frozenset(out)


def build_graph_attack(name: str, suite: str,
                       params: Mapping[str, Any] | None = None) -> GraphAttack:
    """A graph attack with the suite's budget and the user's overrides on top."""
    cls = graph_registry.get(name)
    budget = dict(GRAPH_SUITE_BUDGETS.get(suite, {}).get(cls.name, {}))
    budget.update(params or {})
    attack = cls(**budget)
    attack.validate()
    return attack


def graph_attacks(target: GraphTarget | GraphScoresTarget, attacks: Sequence[Any] | None,
                  suite: str, params: Mapping[str, Mapping[str, Any]] | None = None,
                  ) -> tuple[list[GraphAttack], dict[str, str]]:
    """The attacks to run and, for the default list, those skipped with the reason.

    Raises:
        CapabilityError: A named attack the model cannot serve (before any work).
    """
    exposed = graph_exposure(target)
    granted = ", ".join(sorted(o.value.upper() for o in exposed))
    params = params or {}
    default = attacks is None
    objs = [a if isinstance(a, GraphAttack) else build_graph_attack(
        str(a), suite, params.get(graph_registry.get(str(a)).name))
        for a in (graph_registry.names() if attacks is None else attacks)]
    keep, skipped = [], {}
    for a in objs:
        missing = sorted(o.value.upper() for o in a.requires - exposed)
        why = (f"{a.name} requires {', '.join(missing)}; the model exposes {{{granted}}}"
               if missing else None)
        if why is None and a.uses_population() and len(target.population) < MIN_POPULATION:
            why = (f"{a.name} needs an auxiliary population of at least {MIN_POPULATION} "
                   f"graphs (neither member nor non-member, or population=); "
                   f"{len(target.population)} given")
        if why is None:
            keep.append(a)
        elif default:
            skipped[a.name] = why
        else:
            raise CapabilityError(why)
    return keep, skipped


def candidate_table(result: Any, target: Any,
                    scaffolds: list[str | None] | None) -> GraphCandidateTable:
    """The candidates of a graph result with their size, class, side, SMILES, scaffold.

    A scores-only target knows no graph: sizes are -1 (no size slice) and no SMILES.
    """
    ids = np.asarray(result.candidates, dtype=np.int64)
    gs = target.graphs if isinstance(target, GraphTarget) else None
    sizes = (np.asarray([int(gs[int(i)].num_nodes) for i in ids], dtype=np.int64)
             if gs is not None else np.full(len(ids), -1, dtype=np.int64))
    y = target.labels_of(ids)
    names = gs.class_names if gs is not None else tuple(str(c) for c in
                                                        range(target.num_classes))
    cls = np.asarray([names[int(c)] for c in y], dtype=object)
    part = np.where(result.labels == 1, "train", "test").astype(object)
    smiles = None if gs is None or gs.smiles is None else np.asarray(
        [gs.smiles[int(i)] for i in ids], dtype=object)
    scaf = None if scaffolds is None else np.asarray([scaffolds[int(i)] for i in ids],
                                                     dtype=object)
    return GraphCandidateTable(result.attack, result.task.value, ids, result.scores,
                               result.labels, sizes, cls, part, smiles=smiles, scaffold=scaf)


def audit_graph_run(
    target: GraphTarget | GraphScoresTarget, *, attacks: Sequence[Any] | None = None, seed: int = 0,
    suite: str = "standard", n_bootstrap: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    config: Mapping[str, Any] | None = None,
) -> AuditRun:
    """Run the graph attacks on ``target``; the report and every graph's scores.

    In the default run (``attacks`` None) an attack the target cannot serve (a scores-only
    target has no graphs, no architecture) is skipped with the reason; a named one fails.
    """
    the_suite = get_suite(suite)
    n_boot = the_suite.n_bootstrap if n_bootstrap is None else n_bootstrap
    objs, skipped = graph_attacks(target, attacks, the_suite.name, params)
    exposed = graph_exposure(target)
    gs = target.graphs if isinstance(target, GraphTarget) else None
    scaffolds = murcko_scaffolds(gs.smiles) if gs is not None and gs.smiles is not None \
        else None
    references = GraphReferencePool(derive_seed(seed, "references"))
    reports, tables = [], []
    ran = []
    for attack in objs:
        try:
            result = run_graph_attack(attack, target,
                                      seed=derive_seed(seed, "run", attack.name),
                                      exposed=exposed, references=references)
        except CapabilityError as exc:
            if attacks is not None:
                raise
            skipped[attack.name] = str(exc)
            continue
        ran.append(attack.name)
        metrics = evaluate_result(result, n_bootstrap=n_boot,
                                  seed=derive_seed(seed, "bootstrap", attack.name),
                                  claimed_delta=target.ledger.delta, ledger=target.ledger)
        table = candidate_table(result, target, scaffolds)
        tables.append(table)
        metrics = with_slices(result, metrics, graph_slice_masks(table), n_bootstrap=n_boot,
                              seed=derive_seed(seed, "slices", attack.name))
        reports.append(AttackReport(
            attack=attack.name, task=result.task.value, threat_model=result.threat_model,
            config=json_safe(result.config), compat_flags=list(result.compat_flags),
            notes=[f"paper: {attack.paper}", *result.notes], query_graph=result.query_graph,
            metrics=metrics, baseline=json_safe(trivial_baseline(result.labels)),
            runtime_s=float(result.runtime_s),
            exposure=json_safe({"most_exposed": graph_most_exposed(table)})))
    cfg: dict[str, Any] = {"task": "graph", "suite": the_suite.name,
                           "attacks": ran if attacks is not None else "all applicable",
                           **dict(config or {})}
    if isinstance(target, GraphTarget):
        cfg["target_model"] = {"model_class": target.model_class,
                               "output": target.interface.output,
                               "embedding_layer": target.interface.embedding_layer,
                               "parameters_exposed": target.interface.parameters,
                               "shadow_models": target.copies.source}
    if skipped:
        cfg["skipped_attacks"] = skipped
    report = AuditReport(
        schema_version=REPORT_SCHEMA_VERSION, seed=seed,
        target=graph_summary(target) if isinstance(target, GraphTarget)
        else target.summary(),
        ledger=target.ledger, attacks=reports, config=json_safe(cfg),
        versions=library_versions(), canary_audits=[])
    return AuditRun(report, tuple(tables))


def graph_summary(target: GraphTarget) -> TargetSummary:
    """The target card: set, sizes, split sizes and the model's accuracy on each side."""
    gs = target.graphs
    y = gs.y.numpy()
    pred = target.logits_of(np.arange(len(gs))).argmax(1).numpy()
    utility: dict[str, float] = {}
    for part, ids in (("train", target.members), ("test", target.non_members)):
        utility[f"{part}_accuracy"] = accuracy(y[ids], pred[ids])
    utility["test_majority_baseline"] = majority_baseline(y[target.members],
                                                          y[target.non_members])
    counts = gs.class_counts()
    return TargetSummary(
        # "arch" is what every report reader requires (check, results, sweeps): the class
        architecture=json_safe({"arch": target.model_class.rsplit(".", 1)[-1],
                                "model": target.model_class, "task": "graph classification",
                                "embedding_layer": target.interface.embedding_layer}),
        defense="none" if target.ledger.unit.value == "none" else "dp",
        defense_config={},
        dataset=json_safe({"kind": "graph set", "name": gs.source, "graphs": len(gs),
                           "classes": list(gs.class_names), "class_counts": counts,
                           "molecules": gs.smiles is not None}),
        fingerprint=gs.fingerprint(),
        num_nodes=int(sum(int(g.num_nodes) for g in gs.graphs)),
        num_edges=int(sum(int(g.edge_index.shape[1]) for g in gs.graphs)),
        protocol="graph classification",
        split_sizes={"train": len(target.members), "test": len(target.non_members),
                     "aux": len(target.population),
                     "val": len(gs) - len(target.members) - len(target.non_members)
                     - len(target.population)},
        utility=json_safe(utility), training={})


def audit_graph_model(
    model: Any, dataset: Any, members: Any, non_members: Any, *,
    output: str = "logits", embedding_layer: str | None = None,
    model_factory: Callable[[], nn.Module] | None = None, attacks: Sequence[Any] | None = None,
    seed: int = 0, suite: str = "standard", n_bootstrap: int | None = None,
    population: Any = None, params: Mapping[str, Mapping[str, Any]] | None = None,
) -> AuditReport:
    """Audit a graph classifier in memory; the :class:`~graphleaks.report.report.AuditReport`.

    Args:
        model: ``model(x, edge_index, batch) -> [num_graphs, C]``.
        dataset: A :class:`~graphleaks.data.graphsets.GraphSet` or a list of PyG graphs.
        members: Graph ids (or a mask) the model trained on.
        non_members: Graph ids (or a mask) it never trained on.
        output: ``logits``, ``probabilities`` or ``log_probabilities``.
        embedding_layer: The submodule whose output is the pooled graph embedding.
        model_factory: Fresh untrained copies of the model for shadow/reference models.
        attacks: Graph attack names or objects; default: every one the model allows.
        seed: Root seed of the candidate order, attacks, references and intervals.
        suite: Budgets: ``quick``, ``standard`` or ``thorough``.
        n_bootstrap: Bootstrap replicates per interval (default: the suite's).
        population: The adversary's auxiliary graph ids; default: every other graph.
        params: Per-attack config overrides.

    Raises:
        DataError: Bad graphs or ids, or outputs that are not one row per graph.
        InvalidConfigError: Unknown output kind, layer or attack.
        CapabilityError: A named attack the model cannot serve.
    """
    target = graph_target(model, dataset, members, non_members, output=output,
                          embedding_layer=embedding_layer, model_factory=model_factory,
                          population=population, seed=seed)
    run = audit_graph_run(target, attacks=attacks, seed=seed, suite=suite,
                          n_bootstrap=n_bootstrap, params=params,
                          config={"target_origin": "user model"})
    return run.report


class GraphScoresTarget:
    """A graph classifier known only by its exported scores: one row per graph id.

    Serves the posteriors and class labels of the member and non-member graphs; every
    other accessor (graphs, queries, embeddings, population, architecture) raises
    :class:`CapabilityError`, so attacks that need them are skipped with the reason.
    """

    def __init__(self, scores: NodeScores, members: np.ndarray,
                 non_members: np.ndarray) -> None:
        self.scores = scores
        ids = np.asarray(scores.node_ids, dtype=np.int64)
        self._row = {int(g): r for r, g in enumerate(ids)}
        self.num_graphs = int(ids.max()) + 1
        self.members = members
        self.non_members = non_members
        self.population = np.empty(0, dtype=np.int64)
        self.ledger = PrivacyLedger.non_private()
        self._logits = as_logits(torch.as_tensor(np.asarray(scores.scores, dtype=np.float64)),
                                 scores.output)

    @property
    def num_classes(self) -> int:
        """Score columns."""
        return self.scores.num_classes

    @property
    def copies(self) -> GraphCopies:
        """Unknown: the scores do not carry the model."""
        raise CapabilityError("a scores-only target has no model to copy (no architecture); "
                              "audit the model itself for LiRA, RMIA and the shadow attack")

    def _rows(self, ids: np.ndarray) -> np.ndarray:
        return np.asarray([self._row[int(i)] for i in np.asarray(ids)], dtype=np.int64)

    def logits_of(self, ids: np.ndarray) -> torch.Tensor:
        """Logits of graphs ``ids`` from the exported rows."""
        return self._logits[torch.as_tensor(self._rows(ids))]

    def labels_of(self, ids: np.ndarray) -> np.ndarray:
        """Class labels of graphs ``ids`` from the export."""
        return np.asarray(self.scores.labels, dtype=np.int64)[self._rows(ids)]

    def _none(self, what: str) -> CapabilityError:
        return CapabilityError(f"a scores-only target has no {what}; audit the model itself "
                               "(graphleaks.audit_model(..., task='graph'))")

    def query(self, graphs: Sequence[Data]) -> torch.Tensor:
        """Not available from scores."""
        raise self._none("inference API for submitted graphs")

    def embeddings_of(self, ids: np.ndarray) -> torch.Tensor:
        """Not available from scores."""
        raise self._none("graph embeddings")

    def graphs_of(self, ids: np.ndarray) -> list[Data]:
        """Not available from scores."""
        raise self._none("graphs (only their scores)")

    def population_graphs(self) -> list[Data]:
        """Not available from scores."""
        raise self._none("population graphs")

    def summary(self) -> TargetSummary:
        """The target card of a scores-only audit."""
        y = np.asarray(self.scores.labels, dtype=np.int64)
        pred = self._logits.argmax(1).numpy()
        utility: dict[str, float] = {}
        for part, ids in (("train", self.members), ("test", self.non_members)):
            rows = self._rows(ids)
            utility[f"{part}_accuracy"] = accuracy(y[rows], pred[rows])
        return TargetSummary(
            architecture={"model": "unknown (scores only)", "task": "graph classification"},
            defense="none", defense_config={},
            dataset=json_safe({"kind": "scores", "name": self.scores.source,
                               "graphs": len(y)}),
            fingerprint="", num_nodes=0, num_edges=0, protocol="scores_only",
            split_sizes={"train": len(self.members), "test": len(self.non_members),
                         "aux": 0, "val": 0}, utility=json_safe(utility), training={})


def audit_graph_scores_run(
    scores: NodeScores, members: Any, non_members: Any = None, *,
    attacks: Sequence[Any] | None = None, seed: int = 0, suite: str = "standard",
    n_bootstrap: int | None = None, params: Mapping[str, Mapping[str, Any]] | None = None,
    config: Mapping[str, Any] | None = None,
) -> AuditRun:
    """Audit a graph classifier from its exported scores (one row per graph id).

    ``scores`` come from :func:`graphleaks.data.score_files.load_scores` (``graph_id,
    label, class scores...`` rows, or a ``.npz``) or
    :func:`~graphleaks.data.score_files.check_scores`; ``non_members`` default to every
    other scored graph.

    Raises:
        DataError: Ids out of range or unscored, duplicated or overlapping.
    """
    ids = np.asarray(scores.node_ids, dtype=np.int64)
    n = int(ids.max()) + 1
    mem = graph_ids(members, n, "members")
    non = (np.setdiff1d(ids, mem) if non_members is None
           else graph_ids(non_members, n, "non-members"))
    for what, s in (("members", mem), ("non-members", non)):
        missing = np.setdiff1d(s, ids)
        if missing.size:
            raise DataError(f"{missing.size} {what} graph id(s) have no row in the scores "
                            f"({scores.source}); export a row per member and non-member")
    if np.intersect1d(mem, non).size:
        raise DataError("some graphs are both members and non-members; the two sets must be "
                        "disjoint")
    if non.size == 0:
        raise DataError("no non-member graphs: export scores of graphs the model never "
                        "trained on too")
    target = GraphScoresTarget(scores, mem, non)
    return audit_graph_run(target, attacks=attacks, seed=seed, suite=suite,
                           n_bootstrap=n_bootstrap, params=params,
                           config={"scores_only": True, **dict(config or {})})


__all__ = ["GRAPH_SUITE_BUDGETS", "GraphScoresTarget", "as_graph_set", "audit_graph_model",
           "audit_graph_run", "audit_graph_scores_run", "graph_exposure", "graph_ids",
           "graph_target"]
