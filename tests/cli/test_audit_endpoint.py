"""``graphleaks audit endpoint``: a served bundle audited through the CLI; bad inputs are one
line, exit 2, nothing written, and the credential is never printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app
from graphleaks.models.remote import verify_log
from graphleaks.models.remote_server import EndpointModel, EndpointServer

SECRET = "tok-9f8e7d-never-shown"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from graphleaks.audit.runner import train_target
    from graphleaks.bundles import save_bundle
    from graphleaks.data import tiny_graph
    from graphleaks.models.gnn import ArchitectureSpec

    t = train_target(tiny_graph(), spec=ArchitectureSpec(hidden=(8,), epochs=30), seed=0)
    return save_bundle(t, tmp_path_factory.mktemp("bundle") / "b")


@pytest.fixture(scope="module")
def server(bundle: Path):
    from graphleaks.bundles import load_bundle

    with EndpointServer(EndpointModel(load_bundle(bundle)), credential=SECRET) as srv:
        yield srv


def description(tmp_path: Path, **extra) -> Path:
    fields = {"outputs": ["labels", "posteriors", "logits"], "requests": ["nodes", "features"],
              "timeout_s": 5, "max_retries": 1, "backoff_s": 0.01, **extra}
    lines = [f"{k} = {json.dumps(v)}" for k, v in fields.items()]
    path = tmp_path / "endpoint.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def invoke(url: str, desc: Path, out: Path, *extra: str, budget: str = "200",
           bundle: Path | None = None):
    args = ["audit", "endpoint", url, "--budget", budget, "--description", str(desc),
            "--out", str(out), "--suite", "quick", "--n-bootstrap", "20",
            "--attack", "confidence_mia", "--attack", "linkteller", *extra]
    if bundle is not None:
        args += ["--bundle", str(bundle)]
    return CliRunner().invoke(app, args)


def test_audit_a_served_bundle(server, bundle, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GL_TOKEN", SECRET)
    before = server.counts["answered"]
    out = tmp_path / "r"
    r = invoke(server.url, description(tmp_path), out, "--credential-env", "GL_TOKEN",
               bundle=bundle)
    assert r.exit_code == 0, r.output
    report = json.loads((out / "report.json").read_text())
    q = report["config"]["queries"]
    assert q["made"] == server.counts["answered"] - before
    assert verify_log(out / "queries.jsonl") == q["log_head"]
    assert {a["attack"] for a in report["attacks"]} == {"confidence_mia", "linkteller"}
    for f in out.iterdir():  # the credential is nowhere in what was written
        assert SECRET not in f.read_text(errors="replace")
    assert SECRET not in r.output


@pytest.mark.parametrize("case", ["budget0", "plan", "no_env", "dead_url", "outputs"])
def test_bad_input_is_one_line_exit_2_nothing_written(case, server, bundle, tmp_path,
                                                       monkeypatch) -> None:
    monkeypatch.setenv("GL_TOKEN", SECRET)
    url, desc, budget, extra = server.url, description(tmp_path), "200", ["--credential-env",
                                                                         "GL_TOKEN"]
    if case == "budget0":
        budget = "0"
    elif case == "plan":
        budget = "5"
    elif case == "no_env":
        extra = ["--credential-env", "GL_MISSING_TOKEN"]
    elif case == "dead_url":
        url = "http://127.0.0.1:9"
    elif case == "outputs":
        desc = description(tmp_path, outputs=["logits", "embeddings"])
    before = server.counts["received"]
    out = tmp_path / "r"
    r = invoke(url, desc, out, *extra, budget=budget, bundle=bundle)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    assert SECRET not in r.output
    assert not out.exists()
    assert server.counts["received"] == before  # refused before any query
    want = {"budget0": "--budget", "plan": "--budget is 5", "no_env": "GL_MISSING_TOKEN",
            "dead_url": "does not answer", "outputs": "'embeddings'"}[case]
    assert want in lines[0]


def test_a_nan_answer_is_refused_and_nothing_written(bundle, tmp_path) -> None:
    from graphleaks.bundles import load_bundle

    class NaNModel(EndpointModel):
        def answer(self, body):
            out = super().answer(body)
            out["logits"][0][0] = float("nan")
            return out

    with EndpointServer(NaNModel(load_bundle(bundle))) as srv:
        out = tmp_path / "r"
        r = invoke(srv.url, description(tmp_path), out, bundle=bundle)
    assert r.exit_code == 2 and "NaN" in r.output and not out.exists()
