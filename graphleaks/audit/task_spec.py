"""Link and graph targets in specs, sweeps and ``train --task graph --param``.

A spec's ``[target] task = "link"`` or ``"graph"`` (or a ``bundle`` whose manifest names
that task) makes the whole spec speak that task: the defense comes from the task's own
registry (:data:`~graphleaks.defenses.link.link_registry`,
:data:`~graphleaks.defenses.graph_base.graph_registry`), ``[target.architecture]`` overrides
the task's model spec (:class:`~graphleaks.models.link_predictor.LinkPredictorSpec`,
:class:`~graphleaks.models.graph_classifier.GraphClassifierSpec`), and the ``[attacks.*]``
tables name the task's attacks (edge or graph membership). Everything is checked here, once,
so a spec, a sweep and the command line refuse the same things with the same one line::

    [target]
    task = "graph"
    dataset = "motif"          # solubility, motif or a TU name on the data root
    defense = "dp_sgd"
    [target.defense_params]
    epsilon = 4.0
    [target.architecture]      # GraphClassifierSpec fields: arch, hidden, layers, epochs...
    epochs = 5
    [target.synthetic]         # dataset = "motif" only: num_graphs, num_classes
    num_graphs = 60
    [target.split]             # train_frac (members), val_frac (early stopping)
    train_frac = 0.5
    [attacks.graph_confidence_mia]

A link target trains on a node dataset (``cora``, ``synthetic`` with ``[target.synthetic]``
csbm arguments, the data-root sets) with a transductive edge split unless ``[target.split]``
sets :class:`~graphleaks.data.edge_splits.EdgeSplitConfig` fields (``kind = "inductive"``,
``non_member_sampling``, ``member_edges_in_inference_graph``...), as ``graphleaks train
--task link`` does; a graph target draws half its graphs as members (validation 10% for an
undefended target) unless ``[target.split]`` sets ``train_frac`` and ``val_frac``, as
``graphleaks train --task graph`` does.

Example:
    >>> t = parse_task_target({"task": "graph", "dataset": "motif",
    ...                        "architecture": {"hidden": 8}}, "target", "graph")
    >>> t.task, t.arch, t.architecture
    ('graph', 'gin', {'hidden': 8})
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphleaks._tables import no_unknown as _no_unknown
from graphleaks._tables import table as _table
from graphleaks._tables import typed as _typed
from graphleaks._tables import wrap as _wrap
from graphleaks.errors import InvalidConfigError

if TYPE_CHECKING:
    from graphleaks.audit.runner import AuditRun
    from graphleaks.audit.spec import AuditSpec, TargetSpec

#: The tasks a spec names; ``node`` is every spec written before issues 25 and 26.
TASKS = ("node", "link", "graph")
#: The attack a spec of the task runs when it names none.
DEFAULT_ATTACK = {"link": "edge_score_threshold", "graph": "graph_confidence_mia"}
#: The graph sets a graph spec names without a data root (any other name is a TU folder).
SHIPPED_GRAPH_SETS = ("solubility", "motif")
#: ``[target.synthetic]`` keys of the motif set.
MOTIF_KEYS = ("num_graphs", "num_classes")
#: Words for messages.
TASK_WORDS = {"link": "the link task (edge membership)",
              "graph": "the graph task (graph membership)"}


def check_task(task: Any, where: str) -> str:
    """``task`` if it is one of :data:`TASKS`, else a one-line refusal naming ``where``."""
    if task not in TASKS:
        raise InvalidConfigError(f"{where} must be one of {', '.join(TASKS)}, got "
                                 f"{str(task)[:20]!r}")
    return str(task)


def defense_registry(task: str) -> Any:
    """The registry of the task's defenses."""
    if task == "link":
        from graphleaks.defenses.link import link_registry

        return link_registry
    if task == "graph":
        from graphleaks.defenses.graph_base import graph_registry

        return graph_registry
    from graphleaks.defenses import registry

    return registry


def attack_registry(task: str) -> Any:
    """The registry of the task's attacks."""
    if task == "link":
        from graphleaks.attacks.edge_membership import edge_registry

        return edge_registry
    if task == "graph":
        from graphleaks.attacks.graph_membership import graph_registry

        return graph_registry
    from graphleaks.attacks import registry

    return registry


def task_defense(task: str, name: str, params: Mapping[str, Any], *, where: str,
                 text: bool = False) -> tuple[str, dict[str, Any]]:
    """The canonical name and typed parameters of a link or graph defense, validated.

    Raises:
        InvalidConfigError: One line naming ``where``: a defense of another task, an
            unknown parameter, a value of the wrong type or out of range.
    """
    from graphleaks._params import Owner, resolve_fields

    reg = defense_registry(task)
    try:
        cls = reg.get(name)
    except InvalidConfigError:
        raise InvalidConfigError(f"{where}: {str(name)[:40]!r} is not a defense of "
                                 f"{TASK_WORDS[task]}; choose one of: "
                                 f"{', '.join(reg.names())}") from None
    owner = Owner(cls.name, "defense", cls.Config)
    if text:  # --param dp_sgd.FIELD: resolve_fields names the option itself
        typed = resolve_fields(owner, dict(params), text=True, source="--param ")
    else:  # a spec's message names its table first, as the node spec's does
        try:
            typed = resolve_fields(owner, dict(params), text=False)
        except InvalidConfigError as exc:
            raise _wrap(where, exc) from None
    try:
        cls(**typed).validate()
    except (TypeError, ValueError) as exc:
        raise _wrap(where, exc) from None
    return cls.name, typed


def takes_epsilon(task: str, defense: str) -> bool:
    """Whether the task's defense has an ``epsilon`` field (a sweep's ε applies to it)."""
    cls = defense_registry(task).get(defense)
    return "epsilon" in {f.name for f in dataclasses.fields(cls.Config)}


# ---------------------------------------------------------------------- model specs


def graph_spec(defense: str, arch: str, overrides: Mapping[str, Any], *,
               where: str) -> Any:
    """The graph classifier a graph target trains: ``train --task graph``'s defaults (fewer
    epochs and larger batches under DP-SGD) with ``overrides`` typed and validated.

    Raises:
        InvalidConfigError: For an unknown architecture or field, or a bad value.
    """
    from graphleaks._validation import validate
    from graphleaks.models.graph_classifier import GRAPH_ARCHITECTURES, GraphClassifierSpec

    over = dict(overrides)
    arch = str(over.pop("arch", arch))
    if arch not in GRAPH_ARCHITECTURES:
        raise InvalidConfigError(f"{where}: the graph task's architecture must be one of "
                                 f"{', '.join(GRAPH_ARCHITECTURES)}, got {arch[:20]!r}")
    base = {"epochs": 30 if defense == "dp_sgd" else 100,
            "batch_size": 64 if defense == "dp_sgd" else 32}
    try:
        return validate(GraphClassifierSpec(**{**base, **over, "arch": arch}), where)
    except (TypeError, ValueError) as exc:
        raise _wrap(where, exc) from None


def graph_spec_fields(arch: str, values: Mapping[str, Any], *, text: bool,
                      source: str = "") -> dict[str, Any]:
    """``values`` typed as fields of :class:`GraphClassifierSpec` (owner ``arch``).

    Raises:
        InvalidConfigError: For an unknown field or a value of the wrong type.
    """
    from graphleaks._params import Owner, resolve_fields
    from graphleaks.models.graph_classifier import GraphClassifierSpec

    hidden = {k: v for k, v in values.items() if str(k).lower() == "hidden"}
    for k, v in hidden.items():  # a node architecture's list of widths: said, not misread
        if (isinstance(v, (list, tuple)) or (text and str(v).strip().startswith("["))):
            raise InvalidConfigError(f"{source}{arch}.{k}: the graph classifier's hidden is "
                                     f"one width for every layer (an integer, e.g. "
                                     f"{arch}.hidden=64); set the depth with {arch}.layers")
    return resolve_fields(Owner(arch, "graph classifier", GraphClassifierSpec), values,
                          text=text, source=source)


def graph_cli_params(items: list[str], *, defense: str, arch: str
                     ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``train --task graph --param`` items: ``(defense params, classifier fields)``.

    Owners are the defense (``dp_sgd.max_grad_norm=1.0``) and the architecture
    (``gin.hidden=64``, ``gin.epochs=5``); anything else is refused in one line.

    Raises:
        InvalidConfigError: For another owner, an unknown field or a bad value.
    """
    from graphleaks._params import Owner, parse_param_items, resolve_owner
    from graphleaks.models.graph_classifier import GraphClassifierSpec

    d_cls = defense_registry("graph").get(defense)
    owners = [Owner(d_cls.name, "defense", d_cls.Config),
              Owner(arch, "graph classifier", GraphClassifierSpec)]
    dparams: dict[str, Any] = {}
    sparams: dict[str, Any] = {}
    for owner, fields in parse_param_items(items).items():
        o = resolve_owner(owner, owners, source="--param ")
        if o.kind == "defense":
            _, typed = task_defense("graph", d_cls.name, fields,
                                    where=f"--param {d_cls.name}", text=True)
            dparams.update(typed)
        else:
            sparams.update(graph_spec_fields(arch, fields, text=True, source="--param "))
    if "arch" in sparams:
        raise InvalidConfigError(f"--param {arch}.arch: the architecture is chosen with "
                                 "--arch; drop it")
    return dparams, sparams


def link_spec(defense: str, arch: str | None, overrides: Mapping[str, Any], *,
              where: str) -> Any:
    """The link predictor a link target trains: the defense's default predictor with
    ``overrides`` (and the encoder ``arch``), validated; an edge-private defense's
    predictor is checked to use no edges (before any graph is read).

    Raises:
        InvalidConfigError: For an unknown encoder or field, or a bad value.
    """
    from graphleaks._validation import validate
    from graphleaks.models.link_predictor import ENCODERS

    d = defense_registry("link").get(defense)()
    over = dict(overrides)
    if arch is not None:
        if arch not in ENCODERS:
            raise InvalidConfigError(f"{where}: {str(arch)[:20]!r} is not a link encoder; "
                                     f"choose one of: {', '.join(ENCODERS)}")
        over.setdefault("encoder", arch)
    try:
        spec = validate(dataclasses.replace(d.default_spec(), **over), "link predictor")
    except (TypeError, ValueError) as exc:
        raise _wrap(where, exc) from None
    if defense in ("dp_sgd", "gap_edp"):
        import torch

        from graphleaks.models.edge_dp_sgd import check_edge_private
        from graphleaks.models.link_predictor import LinkPredictor

        with torch.device("meta"):
            check_edge_private(LinkPredictor(1, spec))
    return spec


# ---------------------------------------------------------------------- spec tables


def parse_task_target(raw: Any, where: str, task: str) -> TargetSpec:
    """Validate the ``[target]`` table of a link or graph spec.

    Raises:
        InvalidConfigError: Naming the offending field.
    """
    from graphleaks._params import Owner, resolve_fields
    from graphleaks.audit.spec import TargetSpec

    t = _table(raw, where)
    _no_unknown(t, {f.name for f in dataclasses.fields(TargetSpec)}, where)
    bundle = _typed(t, "bundle", str, where, None)
    data_root = _typed(t, "data_root", str, where, None)
    dataset = _typed(t, "dataset", str, where, "solubility" if task == "graph" else "cora")
    defense = task_defense(task, _typed(t, "defense", str, where, "none"), {},
                           where=f"{where}.defense")[0]
    _, dparams = task_defense(task, defense, _table(t.get("defense_params", {}),
                                                    f"{where}.defense_params"),
                              where=f"{where}.defense_params")
    archp = _table(t.get("architecture", {}), f"{where}.architecture")
    synth = _table(t.get("synthetic", {}), f"{where}.synthetic")
    split = split_fields(task, _table(t.get("split", {}), f"{where}.split"), defense,
                         where=f"{where}.split")
    if task == "graph":
        arch = _typed(t, "arch", str, where, "gin")
        archp = graph_spec_fields(str(archp.get("arch", arch)), archp, text=False,
                                  source=f"{where}.architecture.")
        arch = str(archp.pop("arch", arch))
        graph_spec(defense, arch, archp, where=f"{where}.architecture")
        if synth and dataset != "motif":
            raise InvalidConfigError(f"{where}.synthetic is only allowed with dataset = "
                                     f"\"motif\" for the graph task, got {dataset[:40]!r}")
        _no_unknown(synth, set(MOTIF_KEYS), f"{where}.synthetic")
        for k, v in synth.items():
            if isinstance(v, bool) or not isinstance(v, int) or not 2 <= v <= 100_000:
                raise InvalidConfigError(f"{where}.synthetic.{k} must be an integer in "
                                         f"[2, 100000], got {v!r}")
        graph_set_ref(dataset, synth, seed=0)  # a bad name fails here, not after training
    else:
        from graphleaks.data.datasets import datasets
        from graphleaks.models.link_predictor import LinkPredictorSpec

        if dataset not in datasets:
            raise InvalidConfigError(f"{where}.dataset: unknown dataset {dataset[:40]!r}; "
                                     f"choose one of: {', '.join(datasets.names())}")
        arch_given = _typed(t, "arch", str, where, None)
        archp = resolve_fields(Owner("link", "link predictor", LinkPredictorSpec), archp,
                               text=False, source=f"{where}.architecture.")
        arch = link_spec(defense, arch_given, archp, where=f"{where}.architecture").encoder
        if synth:
            if dataset != "synthetic":
                raise InvalidConfigError(f"{where}.synthetic is only allowed with dataset = "
                                         f"\"synthetic\", got dataset = {dataset[:40]!r}")
            from graphleaks.data.ref import DatasetRef
            from graphleaks.errors import DataError

            try:
                DatasetRef.synthetic(**synth)
            except (DataError, TypeError) as exc:
                raise _wrap(f"{where}.synthetic", exc) from None
    return TargetSpec(dataset=dataset, bundle=bundle, data_root=data_root, arch=arch,
                      defense=defense, defense_params=dparams, architecture=archp,
                      synthetic=synth, task=task, split=split)


def split_fields(task: str, raw: Mapping[str, Any], defense: str, *,
                 where: str) -> dict[str, Any]:
    """A ``[target.split]`` table, typed and checked: ``EdgeSplitConfig`` fields for a link
    target, ``train_frac`` and ``val_frac`` for a graph target.

    Raises:
        InvalidConfigError: For an unknown key, a value of the wrong type or out of range.
    """
    if task == "link":
        from graphleaks._params import Owner, resolve_fields
        from graphleaks._validation import validate
        from graphleaks.data.edge_splits import EdgeSplitConfig

        # the owner is the table itself: messages read "target.split.kind ..."
        typed = resolve_fields(Owner(where.rsplit(".", 1)[-1], "edge split", EdgeSplitConfig),
                               raw, text=False, source=where.rpartition(".")[0] + "."
                               if "." in where else "")
        try:
            validate(EdgeSplitConfig(**typed), "edge split")
        except (TypeError, ValueError) as exc:
            raise _wrap(where, exc) from None
        return typed
    _no_unknown(raw, {"train_frac", "val_frac"}, where)
    out = {k: _typed(raw, k, (int, float), where, None) for k in raw}
    graph_split_fracs(out, defense, where=where)
    return {k: float(v) for k, v in out.items()}


def graph_split_fracs(split: Mapping[str, Any], defense: str, *,
                      where: str = "target.split") -> tuple[float, float]:
    """``(train_frac, val_frac)`` of a graph target: ``train --task graph``'s defaults (half
    the graphs members; 10% validation without a defense, none under DP-SGD, whose ledger
    counts every step) under ``split``'s values.

    Raises:
        InvalidConfigError: If the fractions leave no member or no non-member.
    """
    train = float(split.get("train_frac", 0.5))
    val = float(split.get("val_frac", 0.1 if defense == "none" else 0.0))
    if not (0.0 < train < 1.0 and 0.0 <= val < 1.0 and train + val < 1.0):
        raise InvalidConfigError(f"{where}: train_frac must be in (0, 1) and val_frac in "
                                 f"[0, 1) with a sum below 1; got {train!r} and {val!r}")
    return train, val


def graph_set_ref(dataset: str, synthetic: Mapping[str, Any], *, seed: int) -> Any:
    """The record of a graph spec's graph set (a motif set's own seed is the audit's).

    Raises:
        DataError: For a name that is no graph set.
    """
    from graphleaks.data.graphsets.named import named_graph_set
    from graphleaks.data.graphsets.ref import GraphSetRef

    if dataset.lower() == "motif" and synthetic:
        return GraphSetRef.motif(seed=seed, **dict(synthetic))
    return named_graph_set(dataset, seed=seed)


def check_task_audit(task: str, *, query_graph: str, defense_aware: bool,
                     compare_unit: str | None) -> None:
    """Refuse ``[audit]`` keys that only a node target reads.

    Raises:
        InvalidConfigError: Naming the key and the task.
    """
    if query_graph != "target":
        raise InvalidConfigError(f"audit.query_graph does not apply to {TASK_WORDS[task]}: "
                                 "query graph views are a node-target option; drop it")
    if not defense_aware:
        raise InvalidConfigError(f"audit.defense_aware does not apply to {TASK_WORDS[task]}: "
                                 "its attacks model no defense awareness; drop it")
    if compare_unit is not None:
        raise InvalidConfigError(f"audit.compare_unit does not apply to {TASK_WORDS[task]}: "
                                 "its ε bounds are compared with its ledger in its own unit "
                                 "already; drop it")


# ---------------------------------------------------------------------- building, running


def build_task_target(target: TargetSpec, *, seed: int, device: str = "cpu") -> Any:
    """Load the link or graph bundle, or train the target a task spec describes.

    Raises:
        BundleError: For a bad bundle, or one of another task.
        DataError: For a graph or graph set that cannot be read.
    """
    if target.bundle is not None:
        from graphleaks.audit.task_bundles import load_task_bundle
        from graphleaks.errors import BundleError

        loaded = load_task_bundle(target.bundle, data_root=target.data_root)
        if getattr(loaded, "task", "node") != target.task:
            raise BundleError(f"bundle {target.bundle} holds a "
                              f"{getattr(loaded, 'task', 'node')} target, and the spec says "
                              f"task = {target.task!r}; fix [target] task or bundle")
        return loaded
    d_cls = defense_registry(target.task).get(target.defense)
    d = d_cls(**dict(target.defense_params))
    if target.task == "graph":
        from graphleaks.defenses.graph_base import train_graph_target
        from graphleaks.models.trained_graph_target import GraphSplit

        spec = graph_spec(d.name, target.arch, target.architecture, where="target.architecture")
        ref = graph_set_ref(target.dataset, target.synthetic, seed=seed)
        gs = ref.load(data_root=target.data_root)
        train_frac, val_frac = graph_split_fracs(target.split, d.name)
        split = GraphSplit.draw(len(gs), train_frac=train_frac, val_frac=val_frac, seed=seed)
        return train_graph_target(gs, defense=d, spec=spec, split=split, dataset=ref,
                                  seed=seed)
    from graphleaks.audit.spec import build_graph
    from graphleaks.data.edge_splits import (
        EdgeMembershipSplit,
        EdgeSplitConfig,
        split_params_for_graph,
    )

    spec = link_spec(d.name, target.arch, target.architecture, where="target.architecture")
    graph, ds = build_graph(target)
    node_type = graph.get("node_type")  # a user-item graph: bipartite non-edges by default
    edge_split = EdgeMembershipSplit.draw(
        graph.edge_index, graph.num_nodes,
        EdgeSplitConfig(**split_params_for_graph(target.split, node_type)), seed=seed,
        node_type=node_type)
    return d.fit(graph, edge_split, spec=spec, seed=seed, dataset=ds, device=device)


def audit_task_target(target: Any, attacks: Mapping[str, Mapping[str, Any]], *, seed: int,
                      n_bootstrap: int | None, config: Mapping[str, Any] | None = None
                      ) -> AuditRun:
    """Audit a trained link or graph target with the named attacks and parameters."""
    from graphleaks.audit.task_bundles import (
        audit_trained_graph_target,
        audit_trained_link_target,
    )
    from graphleaks.models.link_target import TrainedLinkTarget

    audit = (audit_trained_link_target if isinstance(target, TrainedLinkTarget)
             else audit_trained_graph_target)
    return audit(target, attacks=list(attacks), seed=seed, n_bootstrap=n_bootstrap,
                 params={k: dict(v) for k, v in attacks.items() if v}, config=config)


def run_task_spec(spec: AuditSpec, *, device: str = "cpu",
                  overrides: Mapping[str, Any] | None = None) -> AuditRun:
    """Run a link or graph spec's audit; its report records the spec and its hash.

    The task's canary audit retrains the defense once, so, as with ``audit --bundle``, a
    defended target's report says how to run it rather than running it.

    Raises:
        InvalidConfigError: For an override a task spec has no use for.
    """
    from graphleaks.audit.task_bundles import with_task_canary

    over = dict(overrides or {})
    unknown = sorted(set(over) - {"seed", "n_bootstrap", "query_graph"})
    if unknown:
        raise InvalidConfigError(f"run_spec: {unknown[0]!r} cannot override a spec; "
                                 "overridable: seed, n_bootstrap")
    task = spec.target.task
    check_task_audit(task, query_graph=over.get("query_graph", "target"),
                     defense_aware=True, compare_unit=None)
    over.pop("query_graph", None)
    declared = spec
    spec = dataclasses.replace(spec, **over)
    target = build_task_target(spec.resolved_target(), seed=spec.seed, device=device)
    config = {"bundle": spec.target.bundle, "attacks": list(spec.attacks),
              "params": {k: dict(v) for k, v in spec.attacks.items() if v},
              "n_bootstrap": spec.n_bootstrap, "seed": spec.seed,
              "overrides": {k: {"spec": getattr(declared, k), "used": v}
                            for k, v in over.items()},
              "spec": declared.to_dict(), "spec_hash": declared.hash(),
              "entry": "graphleaks audit spec"}
    run = audit_task_target(target, spec.attacks, seed=spec.seed,
                            n_bootstrap=spec.n_bootstrap, config=config)
    run = with_task_canary(run, target, canary=False, num_canaries=0, seed=spec.seed)
    run.report.config["device"] = device
    return run


__all__ = ["DEFAULT_ATTACK", "TASKS", "attack_registry", "audit_task_target",
           "build_task_target", "check_task", "check_task_audit", "defense_registry",
           "graph_cli_params", "graph_set_ref", "graph_spec", "graph_spec_fields",
           "graph_split_fracs", "link_spec", "parse_task_target", "run_task_spec",
           "split_fields", "task_defense", "takes_epsilon"]
