"""The Ray executor on a real local Ray instance (marker ``ray``: not in the default run;
``.ci/real_components.sh`` runs it, and it skips where Ray is not installed).

A local instance started in this process stands for the cluster: the executor joins it
with the address ``auto``, exactly as it joins a cluster started with ``ray start``. With
``GRAPHLEAKS_TEST_RAY_ADDRESS=HOST:PORT`` the tests join that running cluster instead (the
CI script's real head and node).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from graphleaks import _executor  # noqa: E402
from graphleaks._executor import RayExecutor, RayTaskFailed  # noqa: E402
from graphleaks.errors import DataError, InvalidConfigError  # noqa: E402

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def cluster():  # noqa: ANN201
    # A running cluster's HOST:PORT (.ci/real_components.sh passes its own), joined once for
    # the module as the local instance is started once
    joined = os.environ.get("GRAPHLEAKS_TEST_RAY_ADDRESS")
    started = not ray.is_initialized()
    if started and joined:
        ray.init(address=joined, include_dashboard=False, log_to_driver=False)
    elif started:
        # address "local": a new instance even where a cluster runs on this machine
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield joined or "auto"
    if started:
        ray.shutdown()


def _fails(shared: Any, item: int) -> int:
    if item == 2:
        raise DataError(f"item {item} cannot be trained")
    return item


def _dies_once(marker: str, item: int) -> int:
    """Kills its worker process the first time it runs (a lost node, an OOM kill)."""
    path = Path(marker)
    if not path.exists():
        path.write_text("died")
        os._exit(1)
    return item + 100


def test_tasks_keep_their_order_and_share_one_object(cluster):
    with RayExecutor(cluster) as ex:
        assert ex.map(lambda s, i: s["k"] * i, [1, 2, 3], shared={"k": 5}) == [5, 10, 15]
        assert ex.map(_fails, [], shared=None) == []


def test_a_failing_task_raises_its_own_error(cluster):
    with RayExecutor(cluster) as ex, pytest.raises(DataError, match="item 2 cannot be trained"):
        ex.map(_fails, [0, 1, 2, 3], shared=None)


def test_a_dead_worker_is_retried_then_fails_for_good(cluster, tmp_path):
    with RayExecutor(cluster, max_retries=1) as ex:
        assert ex.map(_dies_once, [1], shared=str(tmp_path / "a")) == [101]
    with RayExecutor(cluster, max_retries=0) as ex, pytest.raises(RayTaskFailed,
                                                                  match="after 0 retries"):
        ex.map(_dies_once, [1], shared=str(tmp_path / "b"))


def test_workers_of_another_version_are_named(cluster, monkeypatch):
    real = _executor._driver_version()
    monkeypatch.setattr(_executor, "_driver_version", lambda: "9.9.9")
    with pytest.raises(InvalidConfigError) as exc:
        RayExecutor(cluster).connect()
    assert f"the cluster's workers run graphleaks {real}, this driver runs graphleaks " \
           "9.9.9; install graphleaks==9.9.9 on every node" in str(exc.value)


def test_an_audit_on_ray_equals_the_local_one(cluster, trained_target):
    from graphleaks.attacks.lira_mia import LiRAMIA
    from graphleaks.attacks.rmia_mia import RMIAMIA
    from graphleaks.attacks.shadow_mia import ShadowMIA
    from graphleaks.audit.runner import run_audit

    def attacks() -> list[Any]:
        return [LiRAMIA(num_references=4, ref_epochs=8), ShadowMIA(num_shadows=3),
                RMIAMIA(num_references=3, ref_epochs=8)]

    local = run_audit(trained_target, attacks(), seed=5, n_bootstrap=30, canary=False)
    remote = run_audit(trained_target, attacks(), seed=5, n_bootstrap=30, canary=False,
                       executor=cluster)
    assert json.dumps(remote.to_dict(include_timings=False), sort_keys=True) == \
        json.dumps(local.to_dict(include_timings=False), sort_keys=True)


TIMING_KEYS = frozenset({"runtime_s"})


def _without_timings(path: Path) -> list[str]:
    """``report.json``'s lines, those of timing fields blanked (the file is indented JSON,
    one field a line, so every other byte is compared as written)."""
    lines = path.read_text().splitlines()
    return ["<timing>" if any(f'"{k}":' in line for k in TIMING_KEYS) else line
            for line in lines]


def test_cli_report_json_on_ray_equals_the_local_one(cluster, tmp_path):
    from typer.testing import CliRunner

    from graphleaks.cli import app
    from graphleaks.data.synthetic import csbm

    g = csbm(150, num_classes=3, num_features=8, seed=1)
    ei = g.edge_index.numpy()
    (tmp_path / "edges.csv").write_text("src,dst\n" + "\n".join(f"{a},{b}" for a, b in ei.T))
    import numpy as np

    np.save(tmp_path / "x.npy", g.x.numpy())
    (tmp_path / "y.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
    args = ["audit", "--edges", str(tmp_path / "edges.csv"), "--features",
            str(tmp_path / "x.npy"), "--labels", str(tmp_path / "y.csv"), "--suite", "quick",
            "--attack", "lira_mia", "--attack", "shadow_mia", "--attack", "base_mia",
            "--param", "lira_mia.num_references=4", "--param", "shadow_mia.num_shadows=2",
            "--param", "base_mia.num_references=3", "--n-bootstrap", "30", "--quiet"]
    r1 = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "local")])
    assert r1.exit_code == 0, r1.output
    r2 = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "ray"), "--ray", cluster])
    assert r2.exit_code == 0, r2.output
    assert _without_timings(tmp_path / "ray" / "report.json") == \
        _without_timings(tmp_path / "local" / "report.json")
