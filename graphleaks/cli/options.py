"""The option groups of the audit commands, declared once, and the records they parse into.

Each group (graph source, membership sets, audit budgets, training, defense, adversary,
canary audit, output) is a set of ``Annotated`` option types and one frozen dataclass. A mode
command lists the options it has, in its own signature, and parses them at the edge into
these records, which it passes on; a mode without an option simply does not declare it, so
click refuses it as unknown (``cli/__init__.py`` names the command that has it). There is no
table of conflicting options to keep in step: what a command accepts is its signature.

Adding a mode (``graphleaks audit NAME FILE``) is one module with one function that uses the
groups it needs, and one line in ``cli/__init__.py``.

This module stays torch-free: ``graphleaks audit --help`` imports it.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from graphleaks._validation import validate
from graphleaks.audit.tracking import MlflowTracker
from graphleaks.cli._common import check_audit_options, check_seed, load_graph, setup_logging
from graphleaks.errors import InvalidConfigError
from graphleaks.report.verdict import compute_verdict, verdict_notes

# The registries of attacks and defenses, plug-in lookup and the canary audit import torch:
# imported inside the methods that need them, so that `graphleaks audit --help` stays
# torch-free.

if TYPE_CHECKING:
    from torch_geometric.data import Data

    from graphleaks.data.ref import DatasetRef
    from graphleaks.report.report import AuditReport

# Help panels: ``--help`` lists each command's options under these headings.
GRAPH = "Graph"
MEMBERSHIP = "Membership"
BUDGETS = "Audit budgets"
TRAINING = "Target trained here (not with --bundle)"
ADVERSARY = "Adversary and ledger"
CANARY = "Canary audit (not with --bundle)"
OUTPUT = "Output"

# ---------------------------------------------------------------- graph source

Dataset = Annotated[str | None, typer.Option(
    "--dataset", help="Dataset (graphleaks list datasets; default: cora).",
    rich_help_panel=GRAPH)]
# No envvar here: GRAPHLEAKS_DATA is read by the data layer itself, so a --data-root typed
# for a graph that reads no data root can be refused without refusing the environment.
DataRoot = Annotated[Path | None, typer.Option(
    "--data-root", help="Folder laid out like shared/datasets, for the datasets read from a "
                        "data root (default: GRAPHLEAKS_DATA).", rich_help_panel=GRAPH)]
Edges = Annotated[Path | None, typer.Option(
    "--edges", help="Edge-list CSV of a user graph.", rich_help_panel=GRAPH)]
Features = Annotated[Path | None, typer.Option(
    "--features", help="Feature CSV or .npy of a user graph.", rich_help_panel=GRAPH)]
Labels = Annotated[Path | None, typer.Option(
    "--labels", help="Label CSV of a user graph.", rich_help_panel=GRAPH)]


@dataclass(frozen=True)
class GraphSource:
    """Where the graph comes from: a named dataset, or user files (paths on this machine)."""

    dataset: str | None = None
    data_root: Path | None = None
    edges: Path | None = None
    features: Path | None = None
    labels: Path | None = None

    @property
    def given(self) -> bool:
        """Whether any graph was named (a bundle otherwise brings its own)."""
        return any(v is not None for v in (self.dataset, self.edges, self.features,
                                           self.labels))

    def load(self) -> tuple[Data, DatasetRef]:
        """The graph and its dataset record.

        Raises:
            InvalidConfigError: For partial or conflicting graph options, or a --data-root
                given for a graph that reads none.
        """
        graph, ref = load_graph(self.dataset, self.data_root, self.edges, self.features,
                                self.labels)
        self.check_data_root(ref.kind)
        return graph, ref

    def check_data_root(self, kind: str) -> None:
        """Refuse a --data-root that the graph of record ``kind`` would never read.

        Raises:
            InvalidConfigError: Naming the option and what to do.
        """
        if self.data_root is not None and kind != "data_root":
            raise InvalidConfigError(f"--data-root is read only for datasets kept under a "
                                     f"data root, and this graph ({kind}) reads none; drop "
                                     "--data-root")


# ---------------------------------------------------------------- membership sets

Members = Annotated[Path | None, typer.Option(
    "--members", help="Member (training) node ids, one per line or .npy.",
    rich_help_panel=MEMBERSHIP)]
NonMembers = Annotated[Path | None, typer.Option(
    "--non-members", help="Non-member node ids, one per line or .npy.",
    rich_help_panel=MEMBERSHIP)]
Population = Annotated[Path | None, typer.Option(
    "--population", help="The auxiliary node ids the adversary holds for shadow/reference "
                         "models, one per line or .npy (default: every node neither member "
                         "nor non-member).", rich_help_panel=MEMBERSHIP)]


@dataclass(frozen=True)
class MembershipFiles:
    """Node-id files of the members, the non-members and the adversary's population."""

    members: Path | None = None
    non_members: Path | None = None
    population: Path | None = None


# ---------------------------------------------------------------- audit budgets

Attack = Annotated[list[str] | None, typer.Option(
    "--attack", help="Run only this attack (repeatable; graphleaks list attacks). Default: "
                     "every attack the target exposes.", rich_help_panel=BUDGETS)]
Suite = Annotated[str, typer.Option(
    "--suite", help="Budgets: quick, standard (about 30 s on Cora) or thorough.",
    rich_help_panel=BUDGETS)]
Param = Annotated[list[str] | None, typer.Option(
    "--param", help="Parameter NAME.FIELD=VALUE of an attack (or, when training here, of the "
                    "defense or architecture), e.g. confidence_mia.compat_duddu_label_indexing"
                    "=true (repeatable). The value is parsed by the field's type; a bad owner, "
                    "field or value is exit 2.", rich_help_panel=BUDGETS)]
NBootstrap = Annotated[int | None, typer.Option(
    "--n-bootstrap", help="Bootstrap replicates per CI (default: the suite's, 1000 for "
                          "standard).", rich_help_panel=BUDGETS)]
Seed = Annotated[int, typer.Option(
    "--seed", help="Root seed of every random choice (a non-negative integer).",
    callback=check_seed, rich_help_panel=BUDGETS)]
QueryGraph = Annotated[str, typer.Option(
    "--query-graph", help="Graph the queries are evaluated in: target, full, partitioned or "
                          "zero_hop.", rich_help_panel=BUDGETS)]
# A spec sets its own seed and budgets: these override them only when given.
SeedOverride = Annotated[int | None, typer.Option(
    "--seed", help="Root seed, replacing the spec's (recorded as an override).",
    callback=check_seed, rich_help_panel=BUDGETS)]
NBootstrapOverride = Annotated[int | None, typer.Option(
    "--n-bootstrap", help="Bootstrap replicates per CI, replacing the spec's (recorded as an "
                          "override).", rich_help_panel=BUDGETS)]
QueryGraphOverride = Annotated[str | None, typer.Option(
    "--query-graph", help="Query graph (target, full, partitioned or zero_hop), replacing the "
                          "spec's (recorded as an override).", rich_help_panel=BUDGETS)]


@dataclass(frozen=True)
class AuditBudgets:
    """Which attacks run, at what budgets, with which seed and query graph."""

    attacks: tuple[str, ...] = ()
    suite: str = "standard"
    params: tuple[str, ...] = ()
    n_bootstrap: int | None = None
    seed: int = 0
    query_graph: str = "target"

    @classmethod
    def parse(cls, attack: list[str] | None, suite: str, param: list[str] | None,
              n_bootstrap: int | None, seed: int, query_graph: str = "target") -> AuditBudgets:
        """The record of the options, checked before any work.

        Raises:
            InvalidConfigError: For a bad --n-bootstrap or --query-graph.
        """
        check_audit_options(n_bootstrap, query_graph)
        return cls(tuple(attack or ()), suite, tuple(param or ()), n_bootstrap, seed,
                   query_graph)

    def attack_names(self) -> list[str] | None:
        """Canonical names of the attacks asked for, or None for the default audit.

        Raises:
            InvalidConfigError: For an unknown attack.
        """
        if not self.attacks:
            return None
        from graphleaks.attacks import registry

        return [registry.get(a).name for a in self.attacks]


QueryBudgets = Annotated[str | None, typer.Option(
    "--query-budgets", help="Also measure leakage against queries: LinkTeller and the "
                            "label-only MIA re-run at each of these query budgets per attack "
                            "(comma-separated, increasing, e.g. 100,1000,10000); the report "
                            "gets AUC and TPR@1%FPR with intervals per budget and the smallest "
                            "budget reaching each risk level.", rich_help_panel=BUDGETS)]


@dataclass(frozen=True)
class QueryCurveChoice:
    """The query-budget grid of the leakage-against-queries curves (none by default)."""

    budgets: tuple[int, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> QueryCurveChoice:
        """The record of ``--query-budgets``, checked before any work.

        Raises:
            InvalidConfigError: For a budget that is not a positive integer, or a grid that
                does not increase.
        """
        if text is None:
            return cls()
        from graphleaks.report.query_curves import parse_budgets

        return cls(parse_budgets(text))

    def curve_attacks(self, names: list[str] | None) -> list[str] | None:
        """The curve attacks among the attacks asked for (None: every curve attack).

        Raises:
            InvalidConfigError: When attacks are named and none of them has a curve.
        """
        if not self.budgets or names is None:
            return None
        from graphleaks.report.query_curves import CURVE_ATTACK_NAMES

        chosen = [n for n in names if n in CURVE_ATTACK_NAMES]
        if not chosen:
            raise InvalidConfigError(
                "--query-budgets draws curves for " + ", ".join(CURVE_ATTACK_NAMES)
                + ", and none of them is among the --attack ones; add --attack linkteller or "
                "--attack label_only_mia, or drop --query-budgets")
        return chosen

    def add_curves(self, report: AuditReport, target: Any, *, names: list[str] | None,
                   budgets: AuditBudgets, suite: Any, params: dict[str, Any],
                   exposed: Any = None, defense_aware: bool = True) -> None:
        """Run the curves on ``target`` and record them (and the grid) in ``report.config``.

        Nothing is recorded without a grid, so such a report is unchanged.
        """
        if not self.budgets:
            return
        from graphleaks.audit.query_curve import query_curve
        from graphleaks.report.query_curves import CONFIG_KEY

        kwargs = {} if exposed is None else {"exposed": exposed}
        curves = query_curve(target, self.curve_attacks(names), budgets=self.budgets,
                             seed=budgets.seed, n_bootstrap=budgets.n_bootstrap, suite=suite,
                             params=params, view=budgets.query_graph,
                             defense_aware=defense_aware, **kwargs)
        report.config["query_budgets"] = list(self.budgets)
        report.config[CONFIG_KEY] = curves.to_dict()


# ---------------------------------------------------------------- target, defense, adversary

Arch = Annotated[str | None, typer.Option(
    "--arch", help="Architecture (default: gcn).", rich_help_panel=TRAINING)]
Device = Annotated[str | None, typer.Option(
    "--device", help="Torch device for training (default: cpu).", rich_help_panel=TRAINING)]
Defense = Annotated[str | None, typer.Option(
    "--defense", help="Defense (graphleaks list defenses; default: none).",
    rich_help_panel=TRAINING)]
Epsilon = Annotated[float | None, typer.Option(
    "--epsilon", help="Privacy budget ε of the defense (must be > 0).",
    rich_help_panel=TRAINING)]
Delta = Annotated[float | None, typer.Option(
    "--delta", help="δ of the defense, in (0, 1).", rich_help_panel=TRAINING)]
DefenseUnaware = Annotated[bool, typer.Option(
    "--defense-unaware", help="Train shadow/reference/calibration models as plain GNNs on "
                              "clean data instead of through the target's defense (today's "
                              "adversary, for comparison; recorded in the threat model).",
    rich_help_panel=ADVERSARY)]
CompareUnit = Annotated[str | None, typer.Option(
    "--compare-unit", help="Insist on comparing every ε lower bound with the ledger in this "
                           "privacy unit (node, edge, ...); exit 2 if the ledger or an attack "
                           "has another unit.", rich_help_panel=ADVERSARY)]


@dataclass(frozen=True)
class _Given:
    """A record whose unset options are None: :meth:`given` names those set."""

    def given(self) -> list[str]:
        """The options given, as flags (``--arch``), in declaration order."""
        return ["--" + f.name.replace("_", "-") for f in dataclasses.fields(self)
                if getattr(self, f.name) is not None]


@dataclass(frozen=True)
class TrainingChoice(_Given):
    """How a target trained here is built: architecture and device (None: the default)."""

    arch: str | None = None
    device: str | None = None


@dataclass(frozen=True)
class DefenseChoice(_Given):
    """The defense of a target trained here and its budget (None: the default)."""

    defense: str | None = None
    epsilon: float | None = None
    delta: float | None = None

    @property
    def name(self) -> str:
        """The defense, ``none`` by default."""
        return self.defense or "none"

    def check(self, params: dict[str, Any]) -> None:
        """Build and validate the defense's config: a bad ε fails before any training.

        Raises:
            InvalidConfigError: For a value the defense does not accept, or one it ignores.
        """
        from graphleaks.defenses import registry as defenses
        from graphleaks.plugins import check_used

        defense_obj = defenses.get(self.name)(**params)
        validate(defense_obj.config, type(defense_obj).__name__)
        check_used(defense_obj, params)


@dataclass(frozen=True)
class AdversaryChoice:
    """How the adversary is modelled and how its bounds are compared with the ledger."""

    defense_unaware: bool = False
    compare_unit: str | None = None


# ---------------------------------------------------------------- canary audit

CanaryAudit = Annotated[list[str] | None, typer.Option(
    "--canary-audit", help="Run a one-run canary audit of this privacy unit (edge, node or "
                           "node_feature; repeatable) in place of the default one: trains one "
                           "extra target with canaries (node_feature: runs the feature "
                           "mechanism only) and reports claimed beside audited ε. Exit 3 if "
                           "audited > claimed. A defended target gets one of its ledger's "
                           "unit by default; 'none' turns it off.",
    rich_help_panel=CANARY)]
Canaries = Annotated[int | None, typer.Option(
    "--canaries", help="Canaries per --canary-audit (default: 1000).", rich_help_panel=CANARY)]
CanaryAttack = Annotated[str | None, typer.Option(
    "--canary-attack", help="Canary scoring: auto (default), released or influence (edge); "
                            "auto or loss (node); auto or released (node_feature).",
    rich_help_panel=CANARY)]


#: ``--canary-audit none``: no canary audit, not even the default one of a defended target.
CANARY_OFF = "none"


@dataclass(frozen=True)
class CanaryChoice:
    """The canary audits asked for: none named by default (a defended target then gets the
    default one of its ledger's unit), or turned off (``--canary-audit none``)."""

    units: tuple[str, ...] = ()
    canaries: int = 1000
    attack: str = "auto"
    off: bool = False

    @classmethod
    def parse(cls, units: list[str] | None, canaries: int | None,
              attack: str | None) -> CanaryChoice:
        """The record of the options.

        Raises:
            InvalidConfigError: For --canaries or --canary-attack without --canary-audit,
                or ``none`` beside a unit or with them.
        """
        if units and CANARY_OFF in units:
            if len(units) > 1:
                raise InvalidConfigError("--canary-audit none turns the canary audit off, and "
                                         "a unit was named too; give units or none, not both")
            if canaries is not None or attack is not None:
                flag = "--canaries" if canaries is not None else "--canary-attack"
                raise InvalidConfigError(f"{flag} sets up a canary audit, and --canary-audit "
                                         f"none turns it off; drop one of them")
            return cls(off=True)
        if not units:
            for flag, value in (("--canaries", canaries), ("--canary-attack", attack)):
                if value is not None:
                    raise InvalidConfigError(f"{flag} sets up a canary audit, and none is "
                                             "asked for; add --canary-audit UNIT or drop "
                                             f"{flag}")
        return cls(tuple(units or ()), 1000 if canaries is None else canaries,
                   attack or "auto")

    def configs(self, defense: str, params: dict[str, Any]) -> list[Any]:
        """One validated canary config per unit asked for, checked before any training.

        Raises:
            InvalidConfigError: For a bad unit, count or scoring, or a unit the defense
                does not protect.
        """
        if not self.units:
            return []
        from graphleaks.audit.canary import CanaryConfig, check_unit
        from graphleaks.defenses import registry as defenses

        d = defenses.get(defense)(**params)
        configs = []
        for unit in self.units:
            cfg = validate(CanaryConfig(unit=unit, num_canaries=self.canaries,
                                        attack=self.attack), "--canary-audit")
            check_unit(d, unit)
            configs.append(cfg)
        return configs


# ---------------------------------------------------------------- output

Out = Annotated[Path, typer.Option(
    "--out", "-o", help="Folder for the report files (a new folder, or an earlier graphleaks "
                        "report, which is replaced).", rich_help_panel=OUTPUT)]
JsonOut = Annotated[bool, typer.Option(
    "--json", help="Print the report JSON to stdout.", rich_help_panel=OUTPUT)]
Quiet = Annotated[bool, typer.Option(
    "--quiet", "-q", help="Print nothing on success.", rich_help_panel=OUTPUT)]
Progress = Annotated[bool | None, typer.Option(
    "--progress/--no-progress", help="Progress bars on stderr (default: only when stderr is a "
                                     "terminal, never with --quiet or --json).",
    rich_help_panel=OUTPUT)]
Mlflow = Annotated[bool, typer.Option(
    "--mlflow", help="Log parameters, metrics with intervals, the ledger and the report files "
                     "to MLflow (MLFLOW_TRACKING_URI; needs graphleaks\\[mlflow]).",
    rich_help_panel=OUTPUT)]
RayAddress = Annotated[str | None, typer.Option(
    "--ray", metavar="ADDRESS", help="Train the audit's reference and shadow models as Ray "
                                     "tasks on the running cluster at ADDRESS (HOST:PORT of "
                                     "`ray start --head`); the report is the one a local run "
                                     "writes. Needs graphleaks\\[ray] on every node.",
    rich_help_panel=BUDGETS)]
Verbose = Annotated[bool, typer.Option(
    "-v", "--verbose", help="Log progress to stderr.", rich_help_panel=OUTPUT)]
DEFAULT_OUT = Path("graphleaks-report")


@dataclass(frozen=True)
class OutputOptions:
    """Where the report goes and what is printed; none of it changes what runs."""

    out: Path = DEFAULT_OUT
    json: bool = False
    quiet: bool = False
    progress: bool | None = None
    mlflow: bool = False
    verbose: bool = False
    tracker: MlflowTracker | None = dataclasses.field(default=None, compare=False, repr=False)

    @classmethod
    def parse(cls, out: Path, json: bool = False, quiet: bool = False,
              progress: bool | None = None, mlflow: bool = False,
              verbose: bool = False) -> OutputOptions:
        """The record of the options; sets up logging, and checks MLflow's URI.

        Raises:
            InvalidConfigError: For --mlflow without the mlflow extra, or with a store URI
                that cannot work.
        """
        setup_logging(verbose)
        # the URI now; the store itself in before_work, once every other option is checked
        tracker = MlflowTracker.from_env() if mlflow else None
        return cls(out, json, quiet, progress, mlflow, verbose, tracker)

    def before_work(self) -> None:
        """Open the MLflow store, if asked: called once every input is checked, just before
        the work starts, so that a store that is down fails before any training.

        Raises:
            InvalidConfigError: For a store that is down or refuses us.
        """
        if self.tracker is not None:
            self.tracker.open()

    @property
    def bars(self) -> bool:
        """Whether to show progress bars (see :func:`want_progress`)."""
        return want_progress(self.progress, quiet=self.quiet, json_out=self.json)

    def publish(self, report: AuditReport) -> None:
        """Log an audit written to :attr:`out` to MLflow if asked, then print its summary."""
        if self.tracker is not None:
            self.tracker.log_audit(report, self.out)
        print_summary(report, self.out, json_out=self.json, quiet=self.quiet)


def want_progress(flag: bool | None, *, quiet: bool, json_out: bool) -> bool:
    """Whether to show progress bars: asked for, or stderr is a terminal and output is not
    machine-read (``--json``) or silenced (``--quiet``)."""
    if flag is not None:
        return flag and not quiet
    return not quiet and not json_out and sys.stderr.isatty()


def print_summary(report: AuditReport, out: Path, *, json_out: bool, quiet: bool) -> None:
    """The verdict first, one line per risk, then where the files are."""
    if json_out:
        typer.echo(report.to_json())
        return
    if quiet:
        return
    typer.echo("Verdict")
    for v in compute_verdict(report):
        typer.echo(f"  {v.line()}")
    for a in report.canary_audits:
        flag = "VIOLATION: audited ε above claimed ε" if a.violation else "consistent"
        typer.echo(f"  canary audit ({a.unit} unit): claimed ε {a.claimed_epsilon:.3g}, "
                   f"audited ε ≥ {a.audited_epsilon:.3g} ({flag})"
                   + (f"; audited: {a.scope}" if a.scope else ""))
    notes = verdict_notes(report)  # skipped and ungraded attacks, with what to do
    if notes:
        typer.echo("Notes")
        for note in notes:
            typer.echo(f"  - {note}")
    typer.echo(f"Report: {out / 'report.md'} · {out / 'report.html'} · {out / 'report.json'}"
               f" · per-candidate scores {out / 'scores.csv'}")


def file_names(**paths: Path | None) -> dict[str, Any]:
    """File options as the report records them: names only, never where they lie."""
    return {k: (p.name if p is not None else None) for k, p in paths.items()}
