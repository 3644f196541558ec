"""Audit specs: one TOML file describes a whole audit and its CI gate.

A spec names the target (a saved bundle, or a training recipe: dataset, architecture,
defense), the attacks and their parameters, the seed, the metrics to report and the gate
(thresholds, a baseline report and tolerances). Every key is validated, unknown keys are
rejected, and errors name the offending field, e.g. ``gate.thresholds.auc``.

Example spec::

    [target]
    dataset = "cora"
    arch = "gcn"
    defense = "none"

    [audit]
    seed = 0
    n_bootstrap = 200
    metrics = ["auc", "tpr@0.1%fpr", "tpr@1%fpr"]
    defense_aware = true        # false: shadow models ignore the defense (comparison only)
    # compare_unit = "node"     # insist on comparing ε bounds with the ledger in this unit

    [attacks.confidence_mia]

    [gate]
    bound = "upper"
    baseline = "privacy-baseline.json"
    tolerance = 0.05

    [gate.thresholds]
    auc = 0.95
    "tpr@1%fpr" = 0.5

Example:
    >>> spec = parse_spec({"target": {"dataset": "synthetic"},
    ...                    "attacks": {"confidence_mia": {}},
    ...                    "gate": {"thresholds": {"auc": 0.9}}})
    >>> spec.gate.thresholds[0].metric, spec.gate.thresholds[0].limit
    ('auc', 0.9)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphleaks._limits import MAX_JSON_BYTES, input_boundary
from graphleaks._tables import no_unknown as _no_unknown
from graphleaks._tables import table as _table
from graphleaks._tables import typed as _typed
from graphleaks._tables import wrap as _wrap
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.report.gates import BOUNDS as BOUNDS
from graphleaks.report.gates import DEFAULT_METRICS, GateSpec, parse_gate
from graphleaks.report.gates import METRICS as METRICS
from graphleaks.report.gates import UNBOUNDED_METRICS as UNBOUNDED_METRICS
from graphleaks.report.gates import Threshold as Threshold
from graphleaks.report.gates import check_metric as check_metric
from graphleaks.report.gates import check_threshold as check_threshold
from graphleaks.report.gates import is_metric as is_metric
from graphleaks.report.gates import parse_metrics as _parse_metrics

if TYPE_CHECKING:  # graphleaks.data imports torch; a spec is parsed without it
    from graphleaks.data.ref import DatasetRef

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SPEC_VERSION = 1

#: Most bootstrap replicates an audit accepts: more adds nothing to a 95% interval and a
#: hostile value (10**21) would make the audit run forever.
MAX_BOOTSTRAP = 100_000


@dataclass(frozen=True)
class TargetSpec:
    """What to audit: a saved bundle, or a recipe to train one.

    Attributes:
        dataset: Dataset registry name (``graphleaks list datasets``).
        bundle: Path of a saved bundle; when set, the training fields are ignored.
        data_root: Data root for datasets other than Cora.
        arch: Architecture (used unless ``architecture`` sets ``arch``).
        defense: Defense registry name.
        defense_params: Overrides of the defense's config (e.g. ``epsilon``).
        architecture: Overrides of :class:`~graphleaks.models.gnn.ArchitectureSpec`.
        synthetic: With ``dataset = "synthetic"``: arguments of
            :func:`graphleaks.data.synthetic.csbm` (``num_nodes``, ``seed``, ...).
        task: ``node``, ``link`` or ``graph`` (see :mod:`graphleaks.audit.task_spec`).
        split: Link and graph targets: their split's fields (edge split kind, non-member
            sampling...; member and validation fractions of the graphs).
    """

    dataset: str = "cora"
    bundle: str | None = None
    data_root: str | None = None
    arch: str = "gcn"
    defense: str = "none"
    defense_params: dict[str, Any] = field(default_factory=dict)
    architecture: dict[str, Any] = field(default_factory=dict)
    synthetic: dict[str, Any] = field(default_factory=dict)
    task: str = "node"
    split: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditSpec:
    """A validated audit spec (see the module docstring for the TOML layout)."""

    target: TargetSpec
    attacks: dict[str, dict[str, Any]]
    seed: int = 0
    n_bootstrap: int = 1000
    query_graph: str = "target"
    metrics: tuple[str, ...] = DEFAULT_METRICS
    gate: GateSpec = field(default_factory=GateSpec)
    source: str | None = field(default=None, compare=False)
    defense_aware: bool = True
    compare_unit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary (without ``source``)."""
        d = dataclasses.asdict(self)
        d.pop("source", None)
        if d["target"]["task"] == "node":  # a node spec keeps the hash it had before tasks
            d["target"].pop("task")
            d["target"].pop("split")
        return json.loads(json.dumps(d, default=str))

    def hash(self) -> str:
        """SHA-256 (16 hex digits) of the resolved spec: equal specs, equal hashes."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def resolved_target(self) -> TargetSpec:
        """The target with relative ``bundle`` and ``data_root`` resolved against the spec
        file's folder, so a spec runs from any working directory (e.g. a CI runner). The
        spec itself (and its hash) keeps the paths as written."""
        if self.source is None:
            return self.target
        folder = Path(self.source).parent

        def resolve(value: str | None) -> str | None:
            return value if value is None or Path(value).is_absolute() else str(folder / value)

        bundle, data_root = resolve(self.target.bundle), resolve(self.target.data_root)
        if (bundle, data_root) == (self.target.bundle, self.target.data_root):
            return self.target
        return dataclasses.replace(self.target, bundle=bundle, data_root=data_root)

    def baseline_path(self) -> Path | None:
        """The baseline report path, resolved against the spec file's folder."""
        if self.gate.baseline is None:
            return None
        p = Path(self.gate.baseline)
        if not p.is_absolute() and self.source is not None:
            p = Path(self.source).parent / p
        return p


def parse_target(raw: Any, where: str = "target") -> TargetSpec:
    """Validate a ``[target]`` table."""
    from graphleaks._params import resolve_fields
    from graphleaks._validation import validate
    from graphleaks.data.datasets import datasets
    from graphleaks.defenses import registry as defenses
    from graphleaks.models.gnn import ArchitectureSpec
    from graphleaks.plugins import architecture_owner, check_used, defense_owner

    t = _table(raw, where)
    _no_unknown(t, {f.name for f in dataclasses.fields(TargetSpec)}, where)
    from graphleaks.audit.task_spec import check_task, parse_task_target

    task = check_task(t.get("task", "node"), f"{where}.task")
    if task != "node":  # the link and graph tasks' own registries and model specs
        return parse_task_target(t, where, task)
    if "split" in t:
        raise InvalidConfigError(f"{where}.split applies to link and graph targets (task = "
                                 "\"link\" or \"graph\"); a node target's split is "
                                 "graphleaks' inductive default; drop it")
    dataset = _typed(t, "dataset", str, where, "cora")
    if dataset not in datasets:
        raise InvalidConfigError(f"{where}.dataset: unknown dataset {dataset!r}; choose one "
                                 f"of: {', '.join(datasets.names())}")
    defense = _typed(t, "defense", str, where, "none")
    try:
        defense_cls = defenses.get(defense)
    except InvalidConfigError as exc:
        raise _wrap(f"{where}.defense", exc) from None
    dparams = _table(t.get("defense_params", {}), f"{where}.defense_params")
    try:
        # TOML values arrive typed: checked against the fields' declared types, not parsed.
        dparams = resolve_fields(defense_owner(defense_cls.name), dparams, text=False)
        dobj = defense_cls(**dparams)
        validate(dobj.config, defense_cls.__name__)
        check_used(dobj, dparams)
    except (TypeError, ValueError) as exc:
        raise _wrap(f"{where}.defense_params", exc) from None
    arch = _typed(t, "arch", str, where, "gcn")
    archp = _table(t.get("architecture", {}), f"{where}.architecture")
    try:
        arch = architecture_owner(str(archp.get("arch", arch))).name
        archp = resolve_fields(architecture_owner(arch), archp, text=False)
        archp.pop("arch", None)
        validate(ArchitectureSpec(**{"arch": arch, **archp}))
    except (TypeError, ValueError) as exc:
        raise _wrap(f"{where}.architecture", exc) from None
    synth = _table(t.get("synthetic", {}), f"{where}.synthetic")
    if synth and dataset != "synthetic":
        raise InvalidConfigError(f"{where}.synthetic is only allowed with dataset = "
                                 f"\"synthetic\", got dataset = {dataset!r}")
    if synth:
        from graphleaks.data.ref import DatasetRef

        try:  # the same check as a bundle's record: names, numbers, size limit
            DatasetRef.synthetic(**synth)
        except (DataError, TypeError) as exc:
            raise _wrap(f"{where}.synthetic", exc) from None
    return TargetSpec(
        dataset=datasets.get(dataset).name if hasattr(datasets.get(dataset), "name")
        else dataset,
        bundle=_typed(t, "bundle", str, where, None),
        data_root=_typed(t, "data_root", str, where, None),
        arch=arch, defense=defense_cls.name, defense_params=dparams,
        architecture=archp, synthetic=synth,
    )


def parse_attacks(raw: Any, where: str = "attacks", *,
                  task: str = "node") -> dict[str, dict[str, Any]]:
    """Validate an ``[attacks]`` table: one sub-table of parameters per attack name, each
    an attack of ``task``'s registry."""
    from graphleaks._params import Owner, resolve_fields
    from graphleaks._validation import validate
    from graphleaks.audit.task_spec import TASK_WORDS, attack_registry
    from graphleaks.plugins import check_used

    attacks = attack_registry(task)
    t = _table(raw, where)
    if not t:
        raise InvalidConfigError(f"{where}: name at least one attack, e.g. "
                                 "[attacks.confidence_mia]")
    out: dict[str, dict[str, Any]] = {}
    for name, params in t.items():
        try:
            cls = attacks.get(name)
        except InvalidConfigError as exc:
            if task != "node":  # a node attack's name in a link or graph spec, said so
                raise InvalidConfigError(
                    f"{where}.{str(name)[:40]}: not an attack of {TASK_WORDS[task]}; choose "
                    f"among {', '.join(attacks.names())}") from None
            raise _wrap(f"{where}.{name}", exc) from None
        p = _table(params, f"{where}.{name}")
        try:
            p = resolve_fields(Owner(cls.name, "attack", cls.Config), p, text=False)
            attack = cls(**p)
            validate(attack.config, cls.__name__)
            check_used(attack, p)
        except (TypeError, ValueError) as exc:
            raise _wrap(f"{where}.{name}", exc) from None
        if cls.name in out:
            raise InvalidConfigError(f"{where}.{name}: {cls.name} is given twice under "
                                     "different spellings; give it once")
        out[cls.name] = p
    return out


def parse_spec(raw: Mapping[str, Any], *, source: str | None = None) -> AuditSpec:
    """Validate a spec given as a dictionary (the parsed TOML).

    Raises:
        InvalidConfigError: Naming the offending field.
    """
    _no_unknown(raw, {"spec_version", "target", "audit", "attacks", "gate"}, "spec")
    version = raw.get("spec_version", SPEC_VERSION)
    if version != SPEC_VERSION:
        raise InvalidConfigError(f"spec.spec_version: this graphleaks reads version "
                                 f"{SPEC_VERSION}, got {version!r}")
    target = parse_target(_with_bundle_task(raw.get("target", {}), source))
    a = _table(raw.get("audit", {}), "audit")
    _no_unknown(a, {"seed", "n_bootstrap", "query_graph", "metrics", "defense_aware",
                    "compare_unit"}, "audit")
    defense_aware = _typed(a, "defense_aware", bool, "audit", True)
    compare_unit = _typed(a, "compare_unit", str, "audit", None)
    seed = _typed(a, "seed", int, "audit", 0)
    n_boot = _typed(a, "n_bootstrap", int, "audit", 1000)
    if not 10 <= n_boot <= MAX_BOOTSTRAP:
        raise InvalidConfigError(f"audit.n_bootstrap must be in [10, {MAX_BOOTSTRAP}], got "
                                 f"{n_boot}")
    query_graph = _typed(a, "query_graph", str, "audit", "target")
    views = ("target", "full", "partitioned", "zero_hop")
    if query_graph not in views:
        raise InvalidConfigError(f"audit.query_graph must be one of {', '.join(views)}, "
                                 f"got {query_graph!r}")
    metrics = _parse_metrics(a.get("metrics", list(DEFAULT_METRICS)), "audit.metrics")
    if target.task != "node":
        from graphleaks.audit.task_spec import DEFAULT_ATTACK, check_task_audit

        check_task_audit(target.task, query_graph=query_graph, defense_aware=defense_aware,
                         compare_unit=compare_unit)
    default_attack = "confidence_mia" if target.task == "node" else DEFAULT_ATTACK[target.task]
    attacks = parse_attacks(raw.get("attacks", {default_attack: {}}), task=target.task)
    gate = parse_gate(raw.get("gate", {}))
    for th in gate.thresholds:
        if th.attack is not None and th.attack not in attacks:
            raise InvalidConfigError(
                f"gate.thresholds.{th.attack}: attack {th.attack!r} is not in [attacks] "
                f"({', '.join(attacks)})")
    return AuditSpec(target=target, attacks=attacks, seed=seed, n_bootstrap=n_boot,
                     query_graph=query_graph, metrics=metrics, gate=gate, source=source,
                     defense_aware=defense_aware, compare_unit=compare_unit)


def _with_bundle_task(raw: Any, source: str | None) -> Any:
    """``[target]`` with the task of its ``bundle`` when the table names none, so a link or
    graph bundle's spec validates its attacks in its own task; a task that disagrees with
    the bundle's is refused. An unreadable bundle is left to the node path (which reports
    it when loading, as before tasks)."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("bundle"), str):
        return raw
    from graphleaks.errors import BundleError
    from graphleaks.graph_bundles import bundle_task

    path = Path(raw["bundle"])
    if source is not None and not path.is_absolute():
        path = Path(source).parent / path
    try:
        found: str | None = bundle_task(path)
    except BundleError:
        found = None
    if found in (None, "node") and "task" not in raw:
        return raw
    if "task" not in raw:
        return {**raw, "task": found}
    if found is not None and raw["task"] != found:
        raise InvalidConfigError(f"target.task: the bundle holds a {found} target, and the "
                                 f"spec says task = {str(raw['task'])[:20]!r}; fix one of them")
    return raw


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse a TOML file, turning I/O and syntax errors into :class:`InvalidConfigError`."""
    p = Path(path)
    if p.exists() and not p.is_file():
        # a folder, device or pipe (/dev/zero would be read forever)
        raise InvalidConfigError(f"spec {p} is not a regular file; give a TOML file")
    try:
        if p.stat().st_size > MAX_JSON_BYTES:
            raise InvalidConfigError(f"spec {p} is larger than {MAX_JSON_BYTES} bytes; give a "
                                     "TOML spec file")
        # tomllib parses nested arrays recursively: "a = [[[[..." must be a refusal
        with input_boundary(f"spec {p}", InvalidConfigError), p.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise InvalidConfigError(f"spec {p} does not exist") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InvalidConfigError(f"spec {p} is not valid TOML: {exc}") from None


def load_spec(path: str | Path) -> AuditSpec:
    """Read and validate an audit spec file.

    Raises:
        InvalidConfigError: If the file is missing, not TOML, or invalid (naming the field).
    """
    return parse_spec(read_toml(path), source=str(path))


def dataset_ref(target: TargetSpec) -> DatasetRef:
    """The dataset record of a target spec's graph (a registered name, or csbm parameters)."""
    from graphleaks.data.ref import DatasetRef

    if target.dataset == "synthetic" and target.synthetic:
        return DatasetRef.synthetic(**target.synthetic)
    return DatasetRef.named(target.dataset)


def build_graph(target: TargetSpec) -> tuple[Any, DatasetRef]:
    """The target's graph and its dataset record (which a bundle reloads it from)."""
    ref = dataset_ref(target)
    return ref.load(data_root=target.data_root), ref


def build_target(target: TargetSpec, *, seed: int, device: str = "cpu") -> Any:
    """Load the bundle or train the target a :class:`TargetSpec` describes."""
    from graphleaks.audit.runner import train_target
    from graphleaks.models.gnn import ArchitectureSpec

    if target.bundle is not None:
        from graphleaks.bundles import load_bundle

        return load_bundle(target.bundle, data_root=target.data_root)
    graph, ds = build_graph(target)
    archp = dict(target.architecture)
    if "hidden" in archp:
        archp["hidden"] = tuple(archp["hidden"])
    spec = ArchitectureSpec(**{"arch": target.arch, **archp})
    return train_target(graph, spec=spec, defense=target.defense,
                        defense_params=dict(target.defense_params), dataset=ds, device=device,
                        seed=seed)


def run_spec(spec: AuditSpec, *, device: str = "cpu",
             overrides: Mapping[str, Any] | None = None) -> Any:
    """Run the audit a spec describes and return its :class:`~graphleaks.audit.AuditReport`.

    The report's ``config`` records the resolved spec and its hash (``spec_hash``).

    Args:
        spec: A validated spec.
        device: Torch device for training.
        overrides: ``seed``, ``n_bootstrap`` and/or ``query_graph`` replacing the spec's
            ``[audit]`` values (the CLI's flags). They are applied, and recorded in the
            report's ``config.overrides`` beside the spec they replaced.

    Raises:
        InvalidConfigError: For an override the spec has no field for.
    """
    from graphleaks.attacks import registry as attacks
    from graphleaks.audit.runner import run_audit

    if spec.target.task != "node":  # a link or graph spec: its task's audit
        from graphleaks.audit.task_spec import run_task_spec

        return run_task_spec(spec, device=device, overrides=overrides).report
    over = dict(overrides or {})
    unknown = sorted(set(over) - {"seed", "n_bootstrap", "query_graph"})
    if unknown:
        raise InvalidConfigError(f"run_spec: {unknown[0]!r} cannot override a spec; "
                                 "overridable: seed, n_bootstrap, query_graph")
    declared = spec
    spec = dataclasses.replace(spec, **over)
    target = build_target(spec.resolved_target(), seed=spec.seed, device=device)
    attack_objs = [attacks.get(n)(**p) for n, p in spec.attacks.items()]
    config = {"bundle": spec.target.bundle, "attacks": list(spec.attacks),
              "params": {a.name: {f: a.config_record()[f] for f in spec.attacks[a.name]}
                         for a in attack_objs if spec.attacks[a.name]},
              "query_graph": spec.query_graph, "n_bootstrap": spec.n_bootstrap,
              "seed": spec.seed,
              "overrides": {k: {"spec": getattr(declared, k), "used": v}
                            for k, v in over.items()},
              "spec": declared.to_dict(), "spec_hash": declared.hash()}
    # a spec names its attacks, yet its target is graphleaks' own: a defended one gets its
    # audited ε beside the claimed one, as the default audit does (issue 24)
    return run_audit(target, attack_objs, seed=spec.seed, n_bootstrap=spec.n_bootstrap,
                     view=spec.query_graph, config=config, defense_aware=spec.defense_aware,
                     compare_unit=spec.compare_unit, canary=True)
