"""Audit a model graphleaks did not train: ``audit_model`` and the target it builds.

The model is anything of the target-model protocol (:mod:`graphleaks.models.protocol`): it
maps ``(x, edge_index)`` to per-node logits, probabilities or log-probabilities. The audit
wraps it in a :class:`~graphleaks.models.target.TrainedTarget` whose split is the user's
members and non-members (the adversary's auxiliary population is ``population``, by default
every other node), and runs every attack its exposure allows through
:func:`graphleaks.audit.runner.audit_with_scores`; attacks that need what the model does not
expose are listed in the report with the missing capability.

Shadow and reference models, which some attacks train, are fresh copies of the user's model:
from ``model_factory`` (trained by ``train_fn`` if given, else by the generic trainer), else a
reset deep copy trained by the generic trainer, else (no way to copy the model) a surrogate
graphleaks GCN, and the report then says "architecture unknown, surrogate GCN".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks.attacks.base import ALL_OUTPUTS, Output
from graphleaks.data.graph import num_classes
from graphleaks.data.ref import DatasetRef
from graphleaks.data.splits import MembershipSplit
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.protocol import (
    ModelInterface,
    check_outputs,
    fixed_shape,
    reexport_call,
    reset_copy,
    set_eval,
)
from graphleaks.models.target import TrainedTarget
from graphleaks.models.trainer import (
    SHADOW_FACTORY,
    SHADOW_GENERIC,
    SURROGATE_NOTE,
    SurrogateArchitecture,
    TrainFn,
    UserArchitecture,
)
from graphleaks.privacy.ledger import PrivacyLedger

#: Fewest auxiliary nodes (neither member nor non-member) that shadow models can train on.
MIN_AUX_NODES = 10


def as_graph(data: Any) -> Data:
    """A PyG ``Data`` with ``x``, ``edge_index`` and ``y`` from ``data`` (PyG or networkx).

    A networkx graph's nodes must be ``0..n-1`` and carry ``x`` (feature vector) and ``y``
    (label) attributes.

    Raises:
        DataError: If features, edges or labels are missing or malformed.
    """
    if not isinstance(data, Data):
        try:
            import networkx as nx
        except ImportError:  # pragma: no cover - networkx ships with torch
            nx = None
        if nx is None or not isinstance(data, nx.Graph):
            raise DataError(f"data must be a torch_geometric Data or a networkx graph, not "
                            f"{type(data).__name__}")
        data = _from_networkx(data)
    x, ei, y = getattr(data, "x", None), getattr(data, "edge_index", None), getattr(data, "y", None)
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or not x.is_floating_point():
        raise DataError("data.x must be a [num_nodes, num_features] float tensor of node "
                        "features")
    n = int(x.shape[0])
    if not isinstance(ei, torch.Tensor) or ei.dim() != 2 or ei.shape[0] != 2:
        raise DataError("data.edge_index must be a [2, num_edges] integer tensor")
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= n):
        raise DataError(f"data.edge_index names nodes outside 0..{n - 1}; the features have "
                        f"{n} rows")
    if not isinstance(y, torch.Tensor) or y.shape != (n,) or y.is_floating_point():
        raise DataError("data.y must hold one integer class label per node (shape "
                        f"[{n}]); the audit compares outputs with the labels")
    out = Data(x=x.detach().cpu(), edge_index=ei.detach().cpu().long(),
               y=y.detach().cpu().long(), num_nodes=n)
    name = getattr(data, "name", None) if "name" in data else None
    if isinstance(name, str):
        out.name = name
    names = getattr(data, "node_names", None) if "node_names" in data else None
    if isinstance(names, list) and len(names) == n:  # the user's string ids, for reports
        out.node_names = names
    return out


def _from_networkx(g: Any) -> Data:
    n = g.number_of_nodes()
    if sorted(g.nodes) != list(range(n)):
        raise DataError("the networkx graph's nodes must be the integers 0..n-1 (relabel with "
                        "networkx.convert_node_labels_to_integers)")
    try:
        x = torch.tensor(np.asarray([g.nodes[i]["x"] for i in range(n)], dtype=np.float32))
        y = torch.tensor(np.asarray([g.nodes[i]["y"] for i in range(n)], dtype=np.int64))
    except KeyError as exc:
        raise DataError(f"every networkx node needs an {exc.args[0]!r} attribute (x: feature "
                        "vector, y: class label)") from exc
    edges = [(int(u), int(v)) for u, v in g.edges()]
    if not g.is_directed():
        edges += [(v, u) for u, v in edges if u != v]
    ei = (torch.tensor(edges, dtype=torch.long).t().contiguous() if edges
          else torch.empty(2, 0, dtype=torch.long))
    return Data(x=x, edge_index=ei, y=y, num_nodes=n)


def node_ids(nodes: Any, num_nodes: int, what: str,
             names: Sequence[str] | None = None) -> np.ndarray:
    """Node ids from a boolean mask of length ``num_nodes``, a sequence of integer ids, or
    (when the graph names its nodes, ``names``) a sequence of the user's string ids.

    Raises:
        DataError: For a mask of another length, ids that are not integers, or string ids
            the graph does not name.
    """
    arr = nodes.detach().cpu().numpy() if isinstance(nodes, torch.Tensor) else np.asarray(nodes)
    if arr.size and arr.dtype.kind in "USO" and names is not None:
        table = {name: i for i, name in enumerate(names)}
        found = [table.get(str(v)) for v in arr.reshape(-1).tolist()]
        if None in found:
            # the position, never the id: messages do not quote the user's data
            raise DataError(f"{found.count(None)} {what} id(s) are not node ids of the graph "
                            f"(data.node_names); the first is entry {found.index(None) + 1}")
        return np.asarray(found, dtype=np.int64)
    if arr.dtype == bool:
        if arr.shape != (num_nodes,):
            raise DataError(f"the {what} mask has shape {arr.shape}; a mask needs one entry per "
                            f"node ({num_nodes})")
        return np.flatnonzero(arr).astype(np.int64)
    if arr.size and arr.dtype.kind not in "iu":
        raise DataError(f"{what} must be a boolean mask or integer node ids, not {arr.dtype}")
    return arr.reshape(-1).astype(np.int64) if arr.ndim <= 1 else arr.astype(np.int64)


def population_ids(population: Any, num_nodes: int, members: np.ndarray,
                   non_members: np.ndarray, names: Sequence[str] | None = None) -> np.ndarray:
    """The adversary's auxiliary node ids (sorted), checked against the membership sets.

    Raises:
        DataError: For ids out of range, duplicated, or shared with the members or
            non-members (the adversary's population must be disjoint from what it audits).
    """
    ids = node_ids(population, num_nodes, "population", names)
    if ids.ndim != 1:
        raise DataError(f"population must be a 1-D array of node ids or a mask; got shape "
                        f"{ids.shape}")
    if ids.size and (ids.min() < 0 or ids.max() >= num_nodes):
        raise DataError(f"population ids must lie in 0..{num_nodes - 1} ({num_nodes} nodes); "
                        f"got {int(ids.min())}..{int(ids.max())}")
    if np.unique(ids).size != ids.size:
        raise DataError("population ids contain duplicates; list each node once")
    for what, other in (("members", members), ("non-members", non_members)):
        both = np.intersect1d(ids, other)
        if both.size:
            raise DataError(f"the population shares {both.size} node(s) such as "
                            f"{int(both[0])} with the {what}; the adversary's auxiliary nodes "
                            "must be neither members nor non-members")
    return np.sort(ids)


def _qualname(model: Any) -> str:
    cls = type(model)
    return f"{cls.__module__}.{cls.__qualname__}"


def shadow_architecture(
    model: Any, output: str, model_factory: Callable[[], nn.Module] | None,
    train_fn: TrainFn | None, model_class: str | None = None,
) -> ArchitectureSpec:
    """The spec shadow/reference models are built from (see the module docstring)."""
    from graphleaks.models.gnn import GNN

    name = model_class or _qualname(model)
    if model_factory is None and train_fn is None and isinstance(model, GNN):
        return model.spec  # graphleaks' own architecture: the spec rebuilds it exactly
    if model_factory is not None:
        return UserArchitecture(arch="gcn", factory=model_factory, train_fn=train_fn,
                                output=output, model_class=name, source=SHADOW_FACTORY)
    if isinstance(model, nn.Module) and reset_copy(model) is not None:
        template = model

        def factory() -> nn.Module:
            fresh = reset_copy(template)
            assert fresh is not None
            return fresh

        return UserArchitecture(arch="gcn", factory=factory, train_fn=train_fn, output=output,
                                model_class=name, source=SHADOW_GENERIC)
    return SurrogateArchitecture(arch="gcn")


def model_target(
    model: Any, graph: Data, members: np.ndarray, non_members: np.ndarray, *,
    output: str = "logits", embedding_layers: Sequence[str] | None = None,
    served_edge_index: torch.Tensor | None = None,
    model_factory: Callable[[], nn.Module] | None = None, train_fn: TrainFn | None = None,
    parameters: bool | None = None, model_class: str | None = None, seed: int = 0,
    population: Any = None,
) -> TrainedTarget:
    """Wrap a user's model, graph and membership sets as a :class:`TrainedTarget`.

    Args:
        model: A callable ``model(x, edge_index) -> [num_nodes, C]`` (a torch module, a
            ``torch.export`` program's module, an ONNX session wrapper).
        graph: The graph with features and labels (:func:`as_graph`).
        members: Node ids the model trained on.
        non_members: Node ids it never trained on.
        output: ``logits``, ``probabilities`` or ``log_probabilities``.
        embedding_layers: Submodule names read as node embeddings (forward hooks); None:
            those the model's class declares (``embedding_layers``), if any.
        served_edge_index: The graph the model is served with (default: the whole graph);
            it is also the truth of edge attacks (edges the model never sees cannot leak).
        model_factory: Builds fresh, untrained copies for shadow and reference models.
        train_fn: ``train_fn(model, data, train_mask)`` trains such a copy.
        parameters: Whether the weights are exposed (default: for a torch module).
        model_class: Class name for the report (default: the model's type).
        seed: Recorded as the target's seed.
        population: The auxiliary nodes the adversary holds (mask or ids), disjoint from
            members and non-members; None: every node that is neither. Nodes in none of the
            three sets are the owner's (e.g. its validation nodes): the split records them as
            ``val``, and no attack reads them.

    Raises:
        DataError: For bad node sets, or outputs that contradict the labels.
        InvalidConfigError: For an unknown output kind or embedding layer.
    """
    from graphleaks.data.node_sets import check_membership

    if not callable(model):
        raise InvalidConfigError(f"the model must be callable as model(x, edge_index); got "
                                 f"{type(model).__name__}")
    n = int(graph.num_nodes)
    names = getattr(graph, "node_names", None) if "node_names" in graph else None
    members = node_ids(members, n, "members", names)
    non_members = node_ids(non_members, n, "non-members", names)
    check_membership(members, non_members, n)
    iface = ModelInterface.of(model, output, tuple(embedding_layers)
                              if embedding_layers is not None else None)
    if parameters is not None:
        iface = dataclasses.replace(iface, parameters=parameters)
    served = graph.edge_index if served_edge_index is None else served_edge_index
    if not isinstance(served, torch.Tensor) or served.dim() != 2 or served.shape[0] != 2 or (
            served.numel() and (int(served.min()) < 0 or int(served.max()) >= n)):
        raise DataError(f"served_edge_index must be a [2, num_edges] tensor of node ids in "
                        f"0..{n - 1}")
    rest = np.setdiff1d(np.arange(n), np.union1d(members, non_members))
    aux = rest if population is None else population_ids(population, n, members, non_members,
                                                         names)
    split = MembershipSplit(kind="transductive", num_nodes=n, train=np.sort(members),
                            val=np.setdiff1d(rest, aux), test=np.sort(non_members), aux=aux,
                            seed=int(seed))
    shape = fixed_shape(model)
    if shape is not None and (shape[0] not in (None, n) or shape[1] not in (None,
                                                                          int(served.shape[1]))):
        # not one query can run: refuse before any work, with the call that fixes it
        raise DataError(
            f"the model was exported with static shapes ({_dim(shape[0])} nodes, "
            f"{_dim(shape[1])} edges) but the graph it is audited on has {n} nodes and "
            f"{int(served.shape[1])} edges; re-export it with dynamic shapes: "
            f"{reexport_call(model)}")
    spec = shadow_architecture(model, output, model_factory, train_fn, model_class)
    set_eval(model)
    if served_edge_index is not None:
        # The model's private edges are the ones it is served with (edge attacks' truth):
        # edges of ``data`` the model never sees cannot leak through it.
        names = getattr(graph, "node_names", None) if "node_names" in graph else None
        graph = Data(x=graph.x, edge_index=served.detach().cpu().long(), y=graph.y,
                     num_nodes=n)
        if names is not None:
            graph.node_names = names
    target = TrainedTarget(
        model=model, spec=spec, graph=graph, split=split, seed=int(seed),
        ledger=PrivacyLedger.non_private(), interface=iface,
        dataset=DatasetRef.user("user model").pinned(graph),
    )
    try:
        out = target.logits()
    except (DataError, InvalidConfigError):
        raise
    except Exception as exc:  # the user's model: one line, whatever it raised
        raise DataError(f"the model failed on the graph ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0] if str(exc) else ''}); check that it takes "
                        f"(x [{n}, {graph.x.shape[1]}], edge_index [2, E]) and the feature "
                        "width it was trained with") from exc
    raw = out if iface.output == "logits" else (
        out.exp() if iface.output == "probabilities" else out)
    check_outputs(raw, iface, num_classes(graph))
    return target


def _dim(size: int | None) -> str:
    return "any number of" if size is None else str(size)


def exposure(iface: ModelInterface) -> frozenset[Output]:
    """What a user's model exposes: labels, posteriors and feature queries always; logits
    only when it outputs them, embeddings only when layers are named, parameters only for an
    in-memory module."""
    out = set(ALL_OUTPUTS) - {Output.RELEASED_EMBEDDINGS}
    if iface.output != "logits":
        out.discard(Output.LOGITS)
    if not iface.embedding_layers:
        out.discard(Output.EMBEDDINGS)
    if not iface.parameters:
        out.discard(Output.PARAMETERS)
    return frozenset(out)


def audit_target(
    target: TrainedTarget, *, attacks: Sequence[Any] | None = None, seed: int = 0,
    suite: Any = "standard", n_bootstrap: int | None = None,
    config: dict[str, Any] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    model_label: str | None = None, compare_surrogate: bool = False,
) -> Any:
    """Audit a :func:`model_target`; the :class:`~graphleaks.audit.runner.AuditRun`.

    ``params`` are per-attack config overrides (resolved ``--param`` values), applied on top
    of the suite's budgets to attacks given by name. ``model_label`` names the model on the
    target card (default: its class, or the file format it came from).
    ``compare_surrogate`` runs the attacks that train shadow/reference models a second time
    with the surrogate GCN (when copies of the model itself are available) and records both
    AUCs in ``config["surrogate_comparison"]``: what a surrogate changes, measured.

    Attacks its exposure forbids, attacks that query graphs of another size when the model
    was exported with static shapes, and (in the default audit) attacks that need an
    auxiliary population when fewer than :data:`MIN_AUX_NODES` nodes are neither members
    nor non-members, are listed in ``config["skipped_attacks"]`` with the missing
    capability. A named attack that cannot run, or whose estimated cost exceeds the
    suite's budget, is refused before any work.
    """
    from graphleaks.attacks import registry
    from graphleaks.audit.runner import AuditRun, audit_with_scores, static_shape_limits
    from graphleaks.audit.suite import applicable_attacks, build_attack, get_suite

    iface = target.iface
    exposed = exposure(iface)
    the_suite = get_suite(suite)
    skipped: dict[str, str] = {}
    granted = ", ".join(sorted(o.value.upper() for o in exposed))
    limits = static_shape_limits(target)
    if attacks is None:
        names = list(registry)
        runnable = applicable_attacks(exposed)
        for name in names:
            cls = registry.get(name)
            if name not in runnable:
                missing = sorted(o.value.upper() for o in cls.requires - exposed)
                why = ", ".join(missing)
                if Output.EMBEDDINGS in cls.requires and not iface.embedding_layers:
                    why += (" (the model names no embedding layer; pass "
                            "embedding_layers=('conv1',), on the command line "
                            "--embedding-layer conv1)")
                skipped[name] = f"{name} requires {why}; the model exposes {{{granted}}}"
            elif (cls.threat_model.shadow_data != "none"
                  and len(target.split.aux) < MIN_AUX_NODES):
                skipped[name] = (f"{name} needs an auxiliary population (nodes neither member "
                                 f"nor non-member, or population=); only "
                                 f"{len(target.split.aux)} given, at least {MIN_AUX_NODES} "
                                 "needed")
        attack_objs = [build_attack(n, the_suite, (params or {}).get(n))
                       for n in runnable if n not in skipped]
        for a in list(attack_objs):
            if a.needs() & limits:
                skipped[a.name] = _static_reason(a.name, target)
                attack_objs.remove(a)
    else:
        attack_objs = [a if not isinstance(a, str) else build_attack(
                           registry.get(a).name, the_suite,
                           (params or {}).get(registry.get(a).name))
                       for a in attacks]
        for a in attack_objs:  # a named attack the model cannot serve: refused before any work
            missing = sorted(o.value.upper() for o in a.requires - exposed)
            if missing:
                hint = (" (name embedding layers: embedding_layers=('conv1',), on the "
                        "command line --embedding-layer conv1)"
                        if "EMBEDDINGS" in missing else "")
                raise CapabilityError(f"{a.name} requires {', '.join(missing)}; the model "
                                      f"exposes {{{granted}}}{hint}")
            if a.needs() & limits:
                raise CapabilityError(_static_reason(a.name, target))
    cfg = dict(config or {})
    cfg.setdefault("attacks", [a.name for a in attack_objs] if attacks is not None
                   else "all applicable")
    label = model_label or _model_class(target)
    protocol = served_protocol(target)
    cfg["target_model"] = {"model_class": label, "output": iface.output,
                           "embedding_layers": list(iface.embedding_layers),
                           "parameters_exposed": iface.parameters,
                           "shadow_models": _shadow_source(target.spec),
                           "protocol": protocol,
                           "surrogate_effect": _surrogate_effect(target.spec)}
    shape = fixed_shape(target.model)
    if shape is not None:
        cfg["target_model"]["static_shapes"] = {"nodes": shape[0], "edges": shape[1]}
    run = audit_with_scores(target, attack_objs, seed=seed, n_bootstrap=n_bootstrap,
                            exposed=exposed, config=cfg, suite=the_suite,
                            skip_unrunnable=attacks is None)
    report = run.report
    if skipped:
        report.config["skipped_attacks"] = {**skipped,
                                            **report.config.get("skipped_attacks", {})}
    report = _with_notes(report, surrogate=isinstance(target.spec, SurrogateArchitecture))
    report = dataclasses.replace(report, target=_user_card(report.target, target, label,
                                                           protocol))
    if compare_surrogate and isinstance(target.spec, UserArchitecture):
        report.config["surrogate_comparison"] = _surrogate_comparison(
            target, report, [a for a in attack_objs if _trains_models(a)], seed=seed,
            n_bootstrap=n_bootstrap, suite=the_suite, exposed=exposed)
    return AuditRun(report, run.tables)


def _trains_models(attack: Any) -> bool:
    from graphleaks.attacks.capabilities import Capability

    return Capability.REFERENCE_MODELS in attack.needs()


def _surrogate_comparison(target: TrainedTarget, report: Any, attacks: list[Any], *,
                          seed: int, n_bootstrap: int | None, suite: Any,
                          exposed: frozenset[Output]) -> dict[str, dict[str, float | None]]:
    """Each model-training attack's AUC with copies of the model and with the surrogate GCN
    (same seed, challenge and budgets; only the shadow/reference architecture differs)."""
    from graphleaks.audit.runner import audit_with_scores

    if not attacks:
        return {}
    surrogate = dataclasses.replace(target, spec=SurrogateArchitecture(arch="gcn"))
    other = audit_with_scores(surrogate, attacks, seed=seed, n_bootstrap=n_bootstrap,
                              exposed=exposed, suite=suite, canary=False).report

    def aucs(rep: Any) -> dict[str, float | None]:
        return {a.attack: (float(a.metrics.binary.auc.value)
                           if a.metrics.binary is not None else None) for a in rep.attacks}

    own, sur = aucs(report), aucs(other)
    return {name: {"own_architecture": own.get(name), "surrogate_gcn": sur.get(name)}
            for name in sur}


def _static_reason(name: str, target: TrainedTarget) -> str:
    shape = fixed_shape(target.model)
    assert shape is not None
    return (f"{name} queries graphs of another size than the served one (edges dropped or "
            f"removed), and the model was exported with static shapes ({_dim(shape[0])} "
            f"nodes, {_dim(shape[1])} edges): it needs dynamic shapes; re-export with "
            f"{reexport_call(target.model)}")


def served_protocol(target: TrainedTarget) -> str:
    """``inductive`` when no served edge touches a non-member (members are queried in a
    graph without the non-members' edges), else ``transductive``."""
    ei = target.edges("target")
    if ei.numel() == 0:
        return "inductive"
    non = np.zeros(int(target.graph.num_nodes), dtype=bool)
    non[target.split.test] = True
    e = ei.cpu().numpy()
    return "transductive" if bool((non[e[0]] | non[e[1]]).any()) else "inductive"


def _surrogate_effect(spec: ArchitectureSpec) -> str:
    if isinstance(spec, SurrogateArchitecture):
        return ("shadow and reference models are a surrogate graphleaks GCN, not the model's "
                "own architecture: the figures of attacks that train them (confidence/shadow "
                "calibration, LiRA, RMIA, BASE, G-BASE, TIA) can differ from those an "
                "adversary with the real architecture reaches; give model_factory (or a "
                "state_dict with --model-class) to train copies of the model itself")
    if isinstance(spec, UserArchitecture):
        return ("shadow and reference models are fresh copies of the model's own "
                f"architecture ({spec.source})")
    return "shadow and reference models are graphleaks' own architecture, as the target's"


def _user_card(summary: Any, target: TrainedTarget, label: str, protocol: str) -> Any:
    """The target card of a user's model: its class or format, hooked layers, protocol and
    the accuracy its outputs reach on the members (train) and non-members (test)."""
    from graphleaks.metrics.multiclass import accuracy

    y = target.graph.y.cpu().numpy()
    pred = target.logits().argmax(1).cpu().numpy()
    utility = dict(summary.utility)
    for part, ids in (("train", target.split.train), ("test", target.split.test)):
        if len(ids):
            utility[f"{part}_accuracy"] = accuracy(y[ids], pred[ids])
    arch = {**summary.architecture, "model": label,
            "embedding_layers": list(target.iface.embedding_layers)}
    return dataclasses.replace(summary, architecture=arch, protocol=protocol, utility=utility)


def _model_class(target: TrainedTarget) -> str:
    spec = target.spec
    return spec.model_class if isinstance(spec, UserArchitecture) else _qualname(target.model)


def _shadow_source(spec: ArchitectureSpec) -> str:
    if isinstance(spec, UserArchitecture):
        return spec.source
    return SURROGATE_NOTE if isinstance(spec, SurrogateArchitecture) else "graphleaks spec"


def _with_notes(report: Any, *, surrogate: bool) -> Any:
    """Say, on every attack that trained its own models, when they were surrogate GCNs, and
    on every feature-query attack, that the model answered at its own precision."""
    attacks = []
    for a in report.attacks:
        tm = a.threat_model if isinstance(a.threat_model, dict) else a.threat_model.to_dict()
        notes = list(a.notes)
        if surrogate and (tm.get("architecture_knowledge")
                          or tm.get("shadow_data", "none") != "none"):
            notes.append(f"shadow/reference models: {SURROGATE_NOTE}")
        if "feature_queries" in tm.get("outputs", ()):
            notes.append("feature queries answered by the model's own forward pass at its "
                         "own precision (graphleaks' exact float64 local update applies to "
                         "its own GCN only); finite-difference influence is weaker in float32")
        attacks.append(dataclasses.replace(a, notes=notes) if notes != list(a.notes) else a)
    return dataclasses.replace(report, attacks=attacks)


def audit_model(
    model: Any,
    data: Any,
    members: Any,
    non_members: Any,
    *,
    output: str = "logits",
    embedding_layers: Sequence[str] | None = None,
    served_edge_index: torch.Tensor | None = None,
    model_factory: Callable[[], nn.Module] | None = None,
    train_fn: TrainFn | None = None,
    attacks: Sequence[Any] | None = None,
    seed: int = 0,
    suite: str = "standard",
    n_bootstrap: int | None = None,
    population: Any = None,
    compare_surrogate: bool = False,
    task: str = "node",
    embedding_layer: str | None = None,
    pairs_layout: str | None = None,
) -> Any:
    """Audit a trained graph model of any class, in memory, and return the report.

    Args:
        model: Anything mapping ``(x, edge_index)`` to ``[num_nodes, C]`` outputs, usually
            a ``torch.nn.Module`` built from PyG layers.
        data: A PyG ``Data`` with ``x``, ``edge_index`` and ``y``, or a networkx graph whose
            nodes ``0..n-1`` carry ``x`` and ``y`` attributes. A ``Data`` may carry
            ``node_names`` (the user's string id of every node): node sets may then be given
            as those strings, and ``scores.csv`` and the report give them back.
        members: The nodes the model trained on: a boolean mask (e.g. ``data.train_mask``)
            or node ids.
        non_members: Nodes it never trained on (mask or ids), disjoint from ``members``.
            Every other node is the adversary's auxiliary population unless ``population``
            names it.
        output: What the model returns: ``logits``, ``probabilities`` or
            ``log_probabilities`` (PyG ``Explainer``'s ``return_type``).
        embedding_layers: Names of submodules whose outputs are node embeddings (read with
            forward hooks), for white-box attacks; without them those attacks are skipped.
        served_edge_index: The graph the model is served with (default: ``data``'s).
        model_factory: Returns a fresh, untrained model for shadow/reference models.
        train_fn: ``train_fn(model, data, train_mask)`` trains one; default: graphleaks'
            full-batch trainer with early stopping.
        attacks: Attack names or objects; default: every attack the model's exposure
            allows (the others are listed in ``report.config["skipped_attacks"]``).
        seed: Root seed of challenges, attacks, shadow models and intervals.
        suite: Budgets: ``quick``, ``standard`` or ``thorough``.
        n_bootstrap: Bootstrap replicates per interval (default: the suite's).
        population: The auxiliary nodes the adversary holds (mask or ids) for shadow and
            reference models, disjoint from members and non-members; default: every node
            that is neither. Give the same population as another audit to compare the two.
        compare_surrogate: Also run the attacks that train shadow/reference models with
            graphleaks' surrogate GCN instead of copies of the model, and record both AUCs
            in ``report.config["surrogate_comparison"]`` (those attacks run twice).
        task: ``node`` (a node classifier, the default), ``link`` or ``graph``.
            ``link``: a pair scorer ``model(x, edge_index, pairs)`` with one score per pair,
            ``members`` its training edges and ``non_members`` pairs it never trained on
            (``[K, 2]`` or ``[2, K]``), audited for edge membership by
            :func:`graphleaks.audit.link_audit.audit_link_model` (whose further options, e.g.
            ``non_member_sampling``, are reached there). ``graph``: a graph classifier
            ``model(x, edge_index, batch) -> [num_graphs, C]`` audited on ``data``, a
            :class:`~graphleaks.data.graphsets.GraphSet` or a list of PyG graphs, with graph
            ids as ``members``/``non_members`` (:mod:`graphleaks.audit.graph_audit`).
        embedding_layer: For ``task="graph"``: the submodule whose output is the pooled
            graph embedding (e.g. ``pool``).
        pairs_layout: ``task="link"`` only: how the model takes pairs, ``columns``
            (``[2, P]``, PyG's ``edge_label_index``) or ``rows`` (``[P, 2]``).

    Returns:
        The :class:`~graphleaks.report.report.AuditReport`.

    Raises:
        DataError: For malformed data, overlapping or out-of-range node sets, or outputs
            whose width is not the number of classes.
        InvalidConfigError: For an unknown output kind, embedding layer or attack.
        CapabilityError: If a named attack needs what the model does not expose.

    Example:
        >>> from graphleaks.data import tiny_graph
        >>> from torch_geometric.nn import SGConv
        >>> g = tiny_graph()
        >>> model = SGConv(g.num_features, int(g.y.max()) + 1, K=2)
        >>> r = audit_model(model, g, range(0, 20), range(20, 40),
        ...                 attacks=["confidence_mia"], n_bootstrap=20)
        >>> r.attacks[0].attack
        'confidence_mia'
    """
    if task == "graph":  # whole graphs as records: graph classifiers
        from graphleaks.audit.graph_audit import audit_graph_model

        if (embedding_layers is not None or served_edge_index is not None or compare_surrogate
                or train_fn is not None or pairs_layout is not None):
            raise InvalidConfigError("embedding_layers, served_edge_index, train_fn, "
                                     "compare_surrogate and pairs_layout are node- or "
                                     "link-task options; for "
                                     "task='graph' name the pooled layer with "
                                     "embedding_layer='pool' and copies with model_factory")
        return audit_graph_model(model, data, members, non_members, output=output,
                                 embedding_layer=embedding_layer, model_factory=model_factory,
                                 attacks=attacks, seed=seed, suite=suite,
                                 n_bootstrap=n_bootstrap, population=population)
    if task == "link":
        node_only = {"model_factory": model_factory, "train_fn": train_fn,
                     "population": population, "compare_surrogate": compare_surrogate or None,
                     "embedding_layer": embedding_layer}
        given = [k for k, v in node_only.items() if v is not None]
        if given:
            raise InvalidConfigError(f"{given[0]} does not apply to link predictors; drop it for "
                                     "task='link'")
        from graphleaks.audit.link_audit import audit_link_model

        return audit_link_model(model, data, members, non_members, output=output,
                                pairs_layout=pairs_layout, embedding_layers=embedding_layers,
                                served_edge_index=served_edge_index, attacks=attacks,
                                seed=seed, suite=suite, n_bootstrap=n_bootstrap).report
    if task != "node":
        raise InvalidConfigError(f"unknown task {str(task)[:20]!r}; choose node, link or graph")
    if pairs_layout is not None:
        raise InvalidConfigError("pairs_layout applies to task='link' only; drop it")
    if embedding_layer is not None:  # node task from here
        raise InvalidConfigError("embedding_layer is a task='graph' option; node models name "
                                 "their layers with embedding_layers=('conv1',)")
    graph = as_graph(data)
    target = model_target(model, graph, members, non_members, output=output,
                          embedding_layers=embedding_layers,
                          served_edge_index=served_edge_index, model_factory=model_factory,
                          train_fn=train_fn, seed=seed, population=population)
    return audit_target(target, attacks=attacks, seed=seed, suite=suite,
                        n_bootstrap=n_bootstrap, compare_surrogate=compare_surrogate).report
