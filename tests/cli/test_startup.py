"""Start-up: --help and list import neither torch nor torch_geometric; threads default."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from graphleaks.cli import default_threads
from graphleaks.cli.listing import _build_catalogue, catalogue

_PROBE = """
import sys
from graphleaks.cli import main
sys.argv = ["graphleaks", *{args!r}]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
heavy = sorted(m for m in ("torch", "torch_geometric", "sklearn", "scipy") if m in sys.modules)
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
"""


def _heavy_modules(args: list[str], cache: str) -> str:
    env = {**os.environ, "GRAPHLEAKS_CACHE": cache}
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(args=args)], env=env,
                          capture_output=True, text=True, check=True)
    return proc.stderr.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def filled_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A cache folder holding the catalogue, as the first listing leaves it.

    Filled in this process, where torch is imported already: a fresh interpreter that fills
    it pays seconds of CPU importing every plug-in, once per test.
    """
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRAPHLEAKS_CACHE", str(cache))
        catalogue()
    assert list(cache.glob("catalogue-*.json"))
    return str(cache)


@pytest.mark.parametrize("args", [["--help"], ["list", "attacks"], ["list", "defenses"],
                                  ["list", "datasets", "--json"], ["audit", "--help"],
                                  ["audit", "model", "--help"], ["audit", "scores", "--help"],
                                  ["audit", "spec", "--help"], ["audit", "embeddings", "--help"]])
def test_start_up_imports_no_torch(args: list[str], filled_cache: str) -> None:
    assert _heavy_modules(args, filled_cache) == "HEAVY="


def test_cached_catalogue_equals_the_registries(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GRAPHLEAKS_CACHE", str(tmp_path))
    first = catalogue()
    assert list(tmp_path.glob("catalogue-*.json"))
    assert catalogue() == first == json.loads(json.dumps(_build_catalogue()))
    assert "linkteller" in first["attacks"] and "none" in first["defenses"]


def test_default_threads_do_not_oversubscribe_small_machines() -> None:
    assert default_threads(1) == 1 and default_threads(2) == 1
    assert default_threads(8) == 4


# Reading a report: the CI gate runs `check` after every build, so decoding a report (threat
# models, ledger, metrics, canary audits) and gating it must not import torch either.
_READ_PROBE = """
import sys
from pathlib import Path
from graphleaks.report.report import AuditReport
AuditReport.from_json(Path({report!r}).read_bytes())
from graphleaks.cli import main
sys.argv = ["graphleaks", *{args!r}]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
heavy = sorted(m for m in ("torch", "torch_geometric", "sklearn", "scipy") if m in sys.modules)
print(f"EXIT={{code}} HEAVY=" + ",".join(heavy), file=sys.stderr)
"""


@pytest.fixture(scope="module")
def report_with_canary(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The CI baseline report (version 1) with a canary audit, rewritten by this graphleaks."""
    import dataclasses
    import math
    from pathlib import Path

    from graphleaks.metrics.one_run import OneRunBound
    from graphleaks.report.records import CanaryAudit
    from graphleaks.report.report import AuditReport

    v1 = Path(__file__).parents[2] / "ci" / "privacy-baseline.json"  # slices wide enough
    report = AuditReport.from_json(v1.read_bytes())
    audit = CanaryAudit(unit="edge", defense="edgerand", attack="released",
                        claimed_epsilon=math.inf, claimed_delta=0.0,
                        bound=OneRunBound(60, 20, 18, 0.7, 0.3, 0.0, 0.95), violation=False,
                        num_inserted=31, seed=3)
    path = tmp_path_factory.mktemp("report") / "report.json"
    path.write_text(dataclasses.replace(report, canary_audits=[audit]).to_json())
    return str(path)


def _read_probe(report: str, args: list[str]) -> str:
    proc = subprocess.run([sys.executable, "-c", _READ_PROBE.format(report=report, args=args)],
                          capture_output=True, text=True, check=True)
    return proc.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("extra", [
    ["--max", "auc=0.9"],  # link_stealing's upper bound crosses it: exit 3
    ["--max", "auc=0.99"],
    ["--max", "tpr@0.1%fpr=0.5"],  # a metric name holding a dot is not ATTACK.METRIC
    ["--max", "confidence_mia.auc=0.9", "--max", "Link-Stealing.auc=0.9"],
    ["--max", "confidence_mia[degree<=2].tpr@1%fpr=0.9"],
    ["--baseline", "REPORT"],
])
def test_reading_and_gating_a_report_imports_no_torch(report_with_canary: str,
                                                      extra: list[str]) -> None:
    from typer.testing import CliRunner

    from graphleaks.cli import app

    args = ["check", report_with_canary,
            *[report_with_canary if a == "REPORT" else a for a in extra]]
    expected = CliRunner().invoke(app, args).exit_code  # this process has torch loaded
    assert expected in (0, 3)
    assert _read_probe(report_with_canary, args) == f"EXIT={expected} HEAVY="


def test_the_read_probe_sees_torch_when_the_registry_is_needed(report_with_canary: str) -> None:
    # an attack the report does not hold is looked up in the registry, which imports torch:
    # this proves the probe above would notice a torch import on the read path
    out = _read_probe(report_with_canary, ["check", report_with_canary, "--max",
                                           "shadow_mia.auc=0.9"])
    assert out.startswith("EXIT=2 ") and "torch" in out.split("HEAVY=")[1].split(",")


def test_querying_a_results_store_imports_no_torch(tmp_path) -> None:
    import json
    from pathlib import Path

    from graphleaks.sweep.results_store import ResultsStore

    report = json.loads((Path(__file__).parents[2] / "ci" / "privacy-baseline.json").read_text())
    db = tmp_path / "runs.sqlite"
    with ResultsStore(db) as store:
        store.add_pending([{"config_hash": "h1", "defense": "none", "epsilon": None,
                            "attack": "confidence_mia", "seed": 0, "config": {}}])
        store.record_done("h1", metrics=report["attacks"][0]["metrics"],
                          utility={"test_acc": 0.8}, ledger=report["ledger"], train_s=1.0,
                          attack_s=1.0)
    for fmt in ("table", "json"):
        assert _heavy_modules(["results", str(db), "--format", fmt], str(tmp_path)) == "HEAVY="
