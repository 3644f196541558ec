"""``graphleaks audit --ray``: refusals in one line, exit 2, nothing written (no cluster
needed; the cluster runs are in ``tests/test_executor_ray.py`` and ``.ci/real_components.sh``).
"""

from __future__ import annotations

import importlib.util

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app


def _one_error_line(r) -> str:  # noqa: ANN001
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    return lines[0]


def test_an_unreachable_cluster_exits_2_before_any_work(edge_files, tmp_path):
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["audit", "--edges", str(edge_files / "edges.csv"),
                                 "--features", str(edge_files / "x.npy"), "--labels",
                                 str(edge_files / "y.csv"), "--attack", "confidence_mia",
                                 "--ray", "127.0.0.1:1", "--out", str(out)])
    line = _one_error_line(r)
    if importlib.util.find_spec("ray") is None:
        assert "--ray needs Ray, which is not installed" in line
    else:
        assert line.startswith("error: --ray 127.0.0.1:1: no Ray cluster answers there")
        assert "ray start --head" in line
    assert not out.exists()


@pytest.mark.parametrize("mode", ["scores", "model", "embeddings", "endpoint", "spec"])
def test_ray_on_a_mode_that_cannot_fan_out_exits_2(mode, tmp_path):
    r = CliRunner().invoke(app, ["audit", mode, "--ray", "127.0.0.1:6379", "--out",
                                 str(tmp_path / "o"), "x"])
    line = _one_error_line(r)
    assert line.startswith("error: --ray belongs to graphleaks audit, not to "
                           f"graphleaks audit {mode}")
    assert not (tmp_path / "o").exists()


def test_ray_before_a_subcommand_is_refused(tmp_path):
    r = CliRunner().invoke(app, ["audit", "--ray", "127.0.0.1:6379", "scores", "x"])
    line = _one_error_line(r)
    assert "--ray before `scores` is an option of graphleaks audit itself" in line
