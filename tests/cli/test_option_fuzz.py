"""Every option of every audit mode is used or refused (issue 28).

For each mode (``graphleaks audit``, ``audit model|scores|spec|embeddings``) and each option
it declares, one case runs the mode on tiny files with that option changed. A case is one of:

* ``recorded``: the run succeeds, its report differs from the mode's base run (timings
  aside), and the report records the value where the case says;
* ``refused``: exit 2, one ``error:`` line, nothing written;
* ``output``: an option that changes only what is printed or where (``--out``, ``--json``,
  ``--quiet``, ``--progress``, ``--mlflow``, ``-v``), checked by its effect.

``test_every_declared_option_has_a_case`` reads the options from the commands themselves, so
a new option without a case here fails the suite. ``test_an_option_of_another_mode_is_refused``
gives every mode every option it lacks.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()
MODES = ("audit", "model", "scores", "spec", "embeddings")
#: Modes whose options are fuzzed in their own tests (tests/cli/test_audit_endpoint.py) but
#: that the refusal of a misplaced option names as owners, with their argument's name.
OWNER_ONLY = {"endpoint": "URL"}
QUICK = {"--suite": "quick", "--n-bootstrap": "50", "--attack": "confidence_mia"}

USER_MODULE = '''
import torch


class Lin(torch.nn.Module):
    """A linear node classifier that ignores the edges; returns log-probabilities."""

    def __init__(self, d, c, scale=1.0):
        super().__init__()
        self.lin = torch.nn.Linear(d, c)
        self.scale = scale

    def forward(self, x, edge_index):
        return torch.log_softmax(self.scale * self.lin(x), dim=1)


class Lin2(Lin):
    def forward(self, x, edge_index):
        return torch.log_softmax(3.0 * self.lin(x), dim=1)
'''

SPEC = """
[target]
dataset = "synthetic"
[target.synthetic]
num_nodes = 120
num_features = 8
[target.architecture]
epochs = 20
hidden = [16]
[audit]
seed = 0
n_bootstrap = 30
[attacks.confidence_mia]
threshold = "none"
"""


@pytest.fixture(scope="module")
def f(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Every input file the cases use: two versions of each graph file, node sets, a
    state_dict and its class, scores, a spec, embeddings, a bundle and a sweep store."""
    import sys

    import torch

    from graphleaks.data.synthetic import csbm
    from graphleaks.sweep.results_store import ResultsStore

    d = tmp_path_factory.mktemp("fuzz")
    g = csbm(120, num_classes=3, num_features=8, seed=0)
    ei = g.edge_index.numpy()
    (d / "edges.csv").write_text("src,dst\n" + "\n".join(f"{a},{b}" for a, b in ei.T))
    keep = ei[:, ei[0] % 5 != 0]  # another graph on the same nodes
    (d / "edges2.csv").write_text("src,dst\n" + "\n".join(f"{a},{b}" for a, b in keep.T))
    np.save(d / "x.npy", g.x.numpy())
    np.save(d / "x2.npy", g.x.numpy() * 2.0)
    (d / "y.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
    (d / "y2.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
    rng = np.random.default_rng(0)
    nodes = rng.permutation(120)
    for name, ids in (("m", nodes[:40]), ("m2", nodes[:30]), ("n", nodes[40:80]),
                      ("n2", nodes[40:70]), ("pop", nodes[80:120]), ("pop2", nodes[90:120])):
        (d / f"{name}.txt").write_text("\n".join(map(str, ids)) + "\n")
    # a user's model: a state_dict and its class, importable from the test's folder
    (d / "fuzz_user_model.py").write_text(USER_MODULE)
    sys.path.insert(0, str(d))
    from fuzz_user_model import Lin  # type: ignore[import-not-found]

    torch.manual_seed(0)
    model = Lin(8, 3)
    torch.save(model.state_dict(), d / "w.pt")
    with torch.no_grad():
        post = torch.exp(model(g.x, g.edge_index)).double().numpy()
    every = np.arange(120)  # every node scored: the non-members default to the rest
    np.savez(d / "scores.npz", scores=post, labels=g.y.numpy(), node_ids=every)
    np.save(d / "scores.npy", post)
    (d / "score_labels.txt").write_text("\n".join(map(str, g.y.numpy())) + "\n")
    np.save(d / "scores_rev.npy", post[::-1])  # rows in another order, named by --score-ids
    (d / "score_labels_rev.txt").write_text("\n".join(map(str, g.y.numpy()[::-1])) + "\n")
    np.save(d / "score_ids.npy", every[::-1])
    (d / "audit.toml").write_text(SPEC)
    # embeddings whose first coordinate carries a binary attribute
    attr = np.arange(80) % 2
    np.save(d / "emb.npy", rng.normal(size=(80, 4)) + 3.0 * attr[:, None])
    (d / "attr.csv").write_text("node,attr\n" + "\n".join(f"{i},{a}" for i, a in
                                                          enumerate(attr)))
    (d / "attr2.csv").write_text("node,attr\n" + "\n".join(f"{i},{(i // 2) % 2}"
                                                           for i in range(80)))
    (d / "chain.csv").write_text("src,dst\n" + "\n".join(f"{i},{i + 1}" for i in range(79)))
    r = runner.invoke(app, ["train", "--out", str(d / "bundle"), "--dataset", "synthetic",
                            "--epochs", "5"])
    assert r.exit_code == 0, r.output
    report = json.loads((Path(__file__).parents[2] / "ci" / "privacy-baseline.json")
                        .read_text())
    with ResultsStore(d / "sweep.sqlite") as store:
        store.add_pending([{"config_hash": "h1", "defense": "edgerand", "epsilon": 1.0,
                            "attack": "confidence_mia", "seed": 0, "config": {}}])
        store.record_done("h1", metrics=report["attacks"][0]["metrics"],
                          utility={"test_accuracy": 0.8}, ledger=report["ledger"], train_s=1.0,
                          attack_s=1.0)
    yield {p.name: p for p in d.iterdir()} | {"dir": d}
    sys.path.remove(str(d))


# --------------------------------------------------------------------------- the cases

Args = dict[str, Any]  # flag -> value (str), True (a flag), a list (repeated), None (dropped)


def _base(mode: str, f: dict[str, Path]) -> Args:
    """The base run of each mode; a case changes one option of it."""
    graph = {"--edges": f["edges.csv"], "--features": f["x.npy"], "--labels": f["y.csv"]}
    if mode == "audit":
        return {**graph, **QUICK}
    if mode == "model":
        return {"FILE": f["w.pt"], "--model-class": "fuzz_user_model:Lin",
                "--model-kwargs": '{"d": 8, "c": 3}', **graph, "--members": f["m.txt"],
                "--non-members": f["n.txt"], **QUICK}
    if mode == "scores":
        return {"FILE": f["scores.npz"], "--members": f["m.txt"], **QUICK}
    if mode == "spec":
        return {"FILE": f["audit.toml"]}
    return {"FILE": f["emb.npy"], "--attributes": f["attr.csv"], "--classifier": "rf",
            "--n-bootstrap": "50"}


@dataclass(frozen=True)
class Case:
    """One (mode, option) case: what changes, and what to expect."""

    kind: str  # recorded | refused | output
    change: Callable[[dict[str, Path]], Args]
    check: Callable[[dict[str, Any]], bool] | None = None  # on report.json (recorded)
    effect: Callable[[Any, Path, Any], bool] | None = None  # result, out, spies (output)
    why: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def rec(change: Callable[[dict[str, Path]], Args], check: Callable[[dict[str, Any]], bool],
        ) -> Case:
    return Case("recorded", change, check=check)


def refused(change: Callable[[dict[str, Path]], Args], why: str) -> Case:
    return Case("refused", change, why=why)


def _cfg(key: str, value: Any) -> Callable[[dict[str, Any]], bool]:
    return lambda rep: rep["config"].get(key) == value


def _budget_cases() -> dict[str, Case]:
    """The budget options every model/scores/train audit has."""
    return {
        "--attack": rec(lambda f: {"--attack": "label_only_mia"},
                        lambda r: [a["attack"] for a in r["attacks"]] == ["label_only_mia"]),
        "--suite": rec(lambda f: {"--suite": "standard"}, _cfg("suite", "standard")),
        "--param": rec(lambda f: {"--param": "confidence_mia.score=max"},
                       lambda r: r["config"]["params"] == {"confidence_mia": {"score": "max"}}),
        "--n-bootstrap": rec(lambda f: {"--n-bootstrap": "60"}, _cfg("n_bootstrap", 60)),
        "--seed": rec(lambda f: {"--seed": "3"}, lambda r: r["seed"] == 3),
    }


def _output_cases(progress: bool = True, mlflow: bool = True) -> dict[str, Case]:
    """Options that change only what is printed or where; checked by their effect."""
    cases = {
        "--out": Case("output", lambda f: {},
                      effect=lambda res, out, spy: (out / "report.json").is_file()),
        "--json": Case("output", lambda f: {"--json": True}, effect=lambda res, out, spy: (
            json.loads(res.stdout) == json.loads((out / "report.json").read_text()))),
        "--quiet": Case("output", lambda f: {"--quiet": True},
                        effect=lambda res, out, spy: res.stdout == ""),
        "--verbose": Case("output", lambda f: {"--verbose": True},
                          effect=lambda res, out, spy: logging.getLogger().level == logging.INFO),
    }
    if progress:
        cases["--progress"] = Case("output", lambda f: {"--progress": True},
                                   effect=lambda res, out, spy: spy["bars"] == [True])
    if mlflow:
        cases["--mlflow"] = Case("output", lambda f: {"--mlflow": True},
                                 effect=lambda res, out, spy: spy["mlflow"] == ["open", out])
    return cases


CASES: dict[str, dict[str, Case]] = {
    "audit": {
        "--bundle": rec(lambda f: {"--bundle": f["bundle"], "--edges": None, "--features": None,
                                   "--labels": None},
                        lambda r: r["config"]["bundle"].endswith("bundle")),
        "--dataset": rec(lambda f: {"--dataset": "synthetic", "--edges": None,
                                    "--features": None, "--labels": None},
                         lambda r: r["target"]["dataset"]["name"] == "synthetic"),
        "--data-root": refused(lambda f: {"--data-root": f["dir"]}, "reads none"),
        "--edges": rec(lambda f: {"--edges": f["edges2.csv"]},
                       lambda r: r["target"]["dataset"]["edges"] == "edges2.csv"),
        "--features": rec(lambda f: {"--features": f["x2.npy"]},
                          lambda r: r["target"]["dataset"]["features"] == "x2.npy"),
        "--labels": rec(lambda f: {"--labels": f["y2.csv"]},
                        lambda r: r["target"]["dataset"]["labels"] == "y2.csv"),
        **_budget_cases(),
        "--query-graph": rec(lambda f: {"--query-graph": "full"}, _cfg("query_graph", "full")),
        "--arch": rec(lambda f: {"--arch": "sage"},
                      lambda r: r["target"]["architecture"]["arch"] == "sage"),
        # a CPU-only host has one device: the value is checked and recorded, and cuda:99 is
        # refused in tests/cli/test_cli.py
        "--device": Case("recorded", lambda f: {"--device": "cpu"},
                         check=_cfg("device", "cpu"), extra={"same_as_base": True}),
        "--defense": rec(lambda f: {"--defense": "edgerand"},
                         lambda r: r["target"]["defense"] == "edgerand"),
        "--epsilon": rec(lambda f: {"--defense": "edgerand", "--epsilon": "2"},
                         lambda r: r["target"]["defense_config"]["epsilon"] == 2.0),
        "--delta": rec(lambda f: {"--defense": "eclipse_strict", "--epsilon": "4",
                                  "--delta": "1e-4", "--param": "eclipse_strict.rank=2"},
                       lambda r: r["target"]["defense_config"]["delta"] == 1e-4),
        "--defense-unaware": rec(lambda f: {"--defense-unaware": True},
                                 _cfg("defense_aware", False)),
        "--compare-unit": rec(lambda f: {"--defense": "edgerand", "--compare-unit": "edge",
                                         "--attack": "link_stealing"},
                              _cfg("compare_unit", "edge")),
        "--sweep-results": rec(lambda f: {"--sweep-results": f["sweep.sqlite"]},
                               lambda r: bool(r["config"].get("sweep_rows"))),
        "--canary-audit": rec(lambda f: {"--canary-audit": "edge", "--canaries": "40"},
                              lambda r: r["canary_audits"][0]["unit"] == "edge"),
        "--canaries": rec(lambda f: {"--canary-audit": "edge", "--canaries": "30"},
                          lambda r: r["canary_audits"][0]["bound"]["num_canaries"] == 30),
        "--canary-attack": rec(lambda f: {"--canary-audit": "edge", "--canaries": "40",
                                          "--canary-attack": "influence"},
                               lambda r: r["canary_audits"][0]["attack"] == "influence"),
        # fan-out needs a cluster (tests/test_executor_ray.py): here, one that is not there
        "--ray": refused(lambda f: {"--ray": "127.0.0.1:1"},
                         "no Ray cluster answers there" if importlib.util.find_spec("ray")
                         else "--ray needs Ray"),
        "--query-budgets": rec(lambda f: {"--attack": "label_only_mia", "--query-budgets": "3,9"},
                               _cfg("query_budgets", [3, 9])),
        **_output_cases(),
    },
    "model": {
        "--model-class": rec(lambda f: {"--model-class": "fuzz_user_model:Lin2"},
                             _cfg("model_class", "fuzz_user_model:Lin2")),
        "--model-kwargs": rec(lambda f: {"--model-kwargs": '{"d": 8, "c": 3, "scale": 4.0}'},
                              _cfg("model_kwargs", '{"d": 8, "c": 3, "scale": 4.0}')),
        "--model-output": rec(lambda f: {"--model-output": "log_probabilities"},
                              _cfg("model_output", "log_probabilities")),
        "--embedding-layer": rec(lambda f: {"--embedding-layer": "lin"},
                                 _cfg("embedding_layers", ["lin"])),
        "--edges": rec(lambda f: {"--edges": f["edges2.csv"]},
                       lambda r: r["config"]["graph"]["edges"] == "edges2.csv"),
        "--features": rec(lambda f: {"--features": f["x2.npy"]},
                          lambda r: r["config"]["graph"]["features"] == "x2.npy"),
        "--labels": rec(lambda f: {"--labels": f["y2.csv"]},
                        lambda r: r["config"]["graph"]["labels"] == "y2.csv"),
        "--members": rec(lambda f: {"--members": f["m2.txt"]}, _cfg("members", "m2.txt")),
        "--non-members": rec(lambda f: {"--non-members": f["n2.txt"]},
                             _cfg("non_members", "n2.txt")),
        "--population": rec(lambda f: {"--population": f["pop2.txt"], "--attack": "shadow_mia"},
                            _cfg("population", "pop2.txt")),
        # the graph-classifier door (--task graph) is fuzzed in tests/cli/
        # test_audit_model_graph.py; on this node model its options are refused
        "--task": refused(lambda f: {"--task": "graph"}, "give one graph of a node model"),
        **{flag: refused(lambda f, flag=flag, v=v: {flag: v(f)},
                         "name a graph set for --task graph")
           for flag, v in (("--dataset", lambda f: "motif"), ("--data-root", lambda f: f["dir"]),
                           ("--graphs", lambda f: f["edges.csv"]),
                           ("--on-invalid", lambda f: "skip"))},
        # the link-predictor door (--task link) is fuzzed in tests/cli/test_audit_model_link.py
        "--pairs-layout": refused(lambda f: {"--pairs-layout": "rows"},
                                  "--pairs-layout applies to --task link only"),
        "--query-budgets": rec(lambda f: {"--attack": "label_only_mia", "--query-budgets": "3,9"},
                               _cfg("query_budgets", [3, 9])),
        **_budget_cases(),
        **_output_cases(),
    },
    "scores": {
        "--members": rec(lambda f: {"--members": f["m2.txt"]},
                         lambda r: r["config"]["members"].endswith("m2.txt")),
        "--non-members": rec(lambda f: {"--non-members": f["n2.txt"]},
                             lambda r: r["config"]["non_members"].endswith("n2.txt")),
        # --task link reads pair scores and edge files (tests/audit/test_link_scores_only.py)
        "--scores-output": rec(lambda f: {"--scores-output": "logits"},
                               _cfg("scores_output", "logits")),
        "--labels": rec(lambda f: {"FILE": f["scores.npy"], "--labels": f["score_labels.txt"]},
                        _cfg("labels", "score_labels.txt")),
        "--score-ids": rec(lambda f: {"FILE": f["scores_rev.npy"], "--labels":
                                      f["score_labels_rev.txt"],
                                      "--score-ids": f["score_ids.npy"]},
                           _cfg("score_ids", "score_ids.npy")),
        **_budget_cases(),
        # confidence_mia is the one attack scores alone serve: without --attack the others
        # are skipped, each with its reason
        "--attack": rec(lambda f: {"--attack": None},
                        lambda r: r["config"]["attacks"] == "all applicable"
                        and "label_only_mia" in r["config"]["skipped_attacks"]),
        # the same export read as one row per graph: the graph attacks scores can serve
        "--task": rec(lambda f: {"--task": "graph", "--attack": "graph_confidence_mia"},
                      lambda r: r["config"]["task"] == "graph"
                      and r["attacks"][0]["task"] == "graph_membership"),
        **_output_cases(),
    },
    "spec": {
        "--seed": rec(lambda f: {"--seed": "3"}, lambda r: r["seed"] == 3
                      and r["config"]["overrides"]["seed"] == {"spec": 0, "used": 3}),
        "--n-bootstrap": rec(lambda f: {"--n-bootstrap": "20"}, _cfg("n_bootstrap", 20)),
        "--query-graph": rec(lambda f: {"--query-graph": "full"}, _cfg("query_graph", "full")),
        "--device": Case("recorded", lambda f: {"--device": "cpu"},
                         check=_cfg("device", "cpu"), extra={"same_as_base": True}),
        **_output_cases(),
    },
    "embeddings": {
        "--attributes": rec(lambda f: {"--attributes": f["attr2.csv"]},
                            lambda r: r["source"]["attributes"].endswith("attr2.csv")),
        "--classifier": rec(lambda f: {"--classifier": "svm"},
                            lambda r: [c["classifier"] for c in r["results"]] == ["svm"]),
        "--aux-frac": rec(lambda f: {"--aux-frac": "0.5"}, lambda r: r["aux_frac"] == 0.5),
        "--edges": rec(lambda f: {"--edges": f["chain.csv"]},
                       lambda r: r["source"]["edges"] == "chain.csv"),
        "--n-bootstrap": rec(lambda f: {"--n-bootstrap": "40"},
                             lambda r: r["source"]["n_bootstrap"] == 40),
        "--seed": rec(lambda f: {"--seed": "3"}, lambda r: r["seed"] == 3),
        **_output_cases(progress=False, mlflow=False),
    },
}


def _argv(mode: str, args: Args, out: Path) -> list[str]:
    argv = ["audit"] if mode == "audit" else ["audit", mode, str(args["FILE"])]
    for flag, value in args.items():
        if flag == "FILE" or value is None or value is False:
            continue
        for v in value if isinstance(value, list) else [value]:
            argv += [flag] if v is True else [flag, str(v)]
    return [*argv, "--out", str(out)]


def _strip_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_timings(v) for k, v in value.items()
                if not (k.endswith("_s") or k in ("versions", "timings"))}
    if isinstance(value, list):
        return [_strip_timings(v) for v in value]
    return value


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Record whether progress bars were opened, and what would be logged to MLflow."""
    import contextlib

    from graphleaks.audit import tracking
    from graphleaks.cli import audit, audit_model, audit_scores, audit_spec

    seen: dict[str, list[Any]] = {"bars": [], "mlflow": []}

    @contextlib.contextmanager
    def display(enabled: bool):  # noqa: ANN202
        seen["bars"].append(enabled)
        yield

    for module in (audit, audit_model, audit_scores, audit_spec):
        monkeypatch.setattr(module, "progress_display", display)
    # no store is touched: the tracker is made, opened before the work and logs after it
    tracker = tracking.MlflowTracker
    monkeypatch.setattr(tracker, "from_env", classmethod(lambda cls: cls()))
    monkeypatch.setattr(tracker, "open", lambda self: seen["mlflow"].append("open"))
    monkeypatch.setattr(tracker, "log_audit",
                        lambda self, report, out=None: seen["mlflow"].append(out) or "run")
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield seen
    root.setLevel(level)
    root.handlers[:] = handlers


_BASES: dict[str, dict[str, Any]] = {}


def _run(mode: str, args: Args, out: Path) -> Any:
    return runner.invoke(app, _argv(mode, args, out))


def _base_report(mode: str, f: dict[str, Path], tmp_path: Path) -> dict[str, Any]:
    if mode not in _BASES:  # one base run per mode and session
        r = _run(mode, _base(mode, f), tmp_path / "base")
        assert r.exit_code == 0, r.output
        assert r.stdout.startswith("Verdict" if mode != "embeddings" else "{")
        _BASES[mode] = json.loads((tmp_path / "base" / "report.json").read_text())
    return _BASES[mode]


PAIRS = [(mode, flag) for mode in MODES for flag in CASES[mode]]


@pytest.mark.parametrize(("mode", "flag"), PAIRS, ids=[f"{m}{fl}" for m, fl in PAIRS])
def test_each_option_is_used_and_recorded_or_refused(mode, flag, f, tmp_path, spies):
    case = CASES[mode][flag]
    out = tmp_path / "o"
    args = {**_base(mode, f), **case.change(f)}
    r = _run(mode, args, out)
    if case.kind == "refused":
        assert r.exit_code == 2, r.output
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and case.why in lines[0]
        assert not out.exists()
        return
    assert r.exit_code == 0, r.output
    if case.kind == "output":
        assert case.effect is not None and case.effect(r, out, spies), (r.stdout, spies)
        return
    report = json.loads((out / "report.json").read_text())
    assert case.check is not None and case.check(report), report.get("config")
    if not case.extra.get("same_as_base"):
        base = _base_report(mode, f, tmp_path)
        assert _strip_timings(report) != _strip_timings(base), f"{flag} changed nothing"


@functools.cache
def _declared() -> dict[str, set[str]]:
    """Each mode's options, read from the commands: the longest spelling of each."""
    group = typer.main.get_command(app).commands["audit"]  # type: ignore[attr-defined]
    cmds = {"audit": group, **{m: group.commands[m] for m in (*MODES[1:], *OWNER_ONLY)}}
    return {mode: {max(p.opts, key=len) for p in cmd.params
                   if p.opts and p.opts[0].startswith("-") and p.name != "help"}
            for mode, cmd in cmds.items()}


def test_every_declared_option_has_a_case():
    declared = _declared()
    for mode in MODES:
        assert declared[mode] == set(CASES[mode]), mode


_ALL = sorted(set().union(*(_declared()[m] for m in MODES)))
OTHER = [(mode, flag) for mode in MODES for flag in _ALL if flag not in _declared()[mode]]


@pytest.mark.parametrize(("mode", "flag"), OTHER, ids=[f"{m}{fl}" for m, fl in OTHER])
def test_an_option_of_another_mode_is_refused(mode, flag, tmp_path):
    out = tmp_path / "o"
    argv = ["audit"] if mode == "audit" else ["audit", mode, "FILE"]
    r = runner.invoke(app, [*argv, flag, "x", "--out", str(out)])
    assert r.exit_code == 2, r.output
    [line] = r.stderr.strip().splitlines()
    owners = [m for m in (*MODES, *OWNER_ONLY) if flag in _declared()[m]]
    names = ["graphleaks audit" if m == "audit" else
             f"graphleaks audit {m} {OWNER_ONLY.get(m, 'FILE')}" for m in owners]
    assert line.startswith(f"error: {flag} belongs to {' or '.join(names)}, not to "), line
    assert not out.exists()


@pytest.mark.parametrize("mode", MODES)
def test_help_lists_the_modes_own_options_each_in_a_panel(mode):
    group = typer.main.get_command(app).commands["audit"]  # type: ignore[attr-defined]
    cmd = group if mode == "audit" else group.commands[mode]
    options = [p for p in cmd.params if p.opts and p.opts[0].startswith("-")
               and p.name != "help"]
    assert all(getattr(p, "rich_help_panel", None) for p in options), mode
    argv = ["audit", "--help"] if mode == "audit" else ["audit", mode, "--help"]
    r = runner.invoke(app, argv, env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    for p in options:
        assert max(p.opts, key=len) in r.stdout, (mode, p.opts)
    for panel in {p.rich_help_panel for p in options}:  # type: ignore[attr-defined]
        assert panel in r.stdout
