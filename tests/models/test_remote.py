"""RemoteTarget against the reference server: same scores as in-process, hard budget, back-off
on 429, hash-chained log, non-determinism detected, bad answers refused."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from graphleaks.audit.endpoint_audit import QueryPlanError, audit_endpoint
from graphleaks.audit.runner import audit_with_scores, train_target
from graphleaks.data import tiny_graph
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.remote import (
    EndpointClient,
    EndpointDescription,
    QueryBudgetError,
    parse_description,
    remote_target,
    verify_log,
)
from graphleaks.models.remote_server import EndpointModel, EndpointServer

ATTACKS = ["confidence_mia", "linkteller"]


@pytest.fixture(scope="module")
def target():
    return train_target(tiny_graph(), spec=ArchitectureSpec(hidden=(8,), epochs=30), seed=0)


def describe(url: str, **kw) -> EndpointDescription:
    return EndpointDescription(url=url, outputs=("labels", "posteriors", "logits"),
                               requests=("nodes", "features", "subgraph"), **kw)


def connect(target, server, budget, **kw):
    client = EndpointClient(describe(server.url, **kw), budget, sleep=lambda s: None)
    return remote_target(client, target, client.info())


def test_served_audit_gives_the_direct_scores(target) -> None:
    with EndpointServer(EndpointModel(target)) as server:
        remote = connect(target, server, 200)
        run = audit_endpoint(remote, attacks=ATTACKS, seed=0, suite="quick", n_bootstrap=20)
        counts = dict(server.counts)
    direct = audit_with_scores(target, ATTACKS, seed=0, suite="quick", n_bootstrap=20)
    for r, d in zip(run.report.attacks, direct.report.attacks, strict=True):
        assert r.attack == d.attack
        assert r.metrics.binary.auc.value == d.metrics.binary.auc.value
    for r, d in zip(run.tables, direct.tables, strict=True):
        # confidence: bit-identical; LinkTeller: float64 feature rows sent as JSON, replaced
        # rather than scaled on the server (rounding at 1e-12)
        np.testing.assert_allclose(r.scores, d.scores, rtol=1e-7, atol=1e-9)
    q = run.report.config["queries"]
    # one read for confidence_mia, n_nodes + 1 feature queries, 3 re-checks
    assert q["made"] == counts["answered"] == counts["received"] == q["log_entries"]
    assert q["per_attack"]["confidence_mia"] == 1
    assert q["per_attack"]["recheck"] == 3
    assert q["determinism"]["deterministic"] is True


def test_no_request_is_sent_past_the_budget(target) -> None:
    with EndpointServer(EndpointModel(target)) as server:
        remote = connect(target, server, 5)
        for _ in range(5):
            remote.client.query({"nodes": [0, 1]})
        with pytest.raises(QueryBudgetError, match="budget of 5 spent"):
            remote.client.query({"nodes": [0]})
        assert server.counts["received"] == 5


def test_a_plan_over_the_budget_is_refused_before_any_query(target) -> None:
    with EndpointServer(EndpointModel(target)) as server:
        remote = connect(target, server, 10)
        with pytest.raises(QueryPlanError, match=r"plans \d+ queries .*--budget is 10"):
            audit_endpoint(remote, attacks=ATTACKS, seed=0, suite="quick")
        assert server.counts["received"] == 0


def test_a_rate_limited_endpoint_is_audited_to_completion(target) -> None:
    waits: list[float] = []
    # one query per 0.2 s window: the next query (sent at once) is limited, whatever the load;
    # the test's sleep shortens Retry-After's whole second to the window
    with EndpointServer(EndpointModel(target), rate_limit=1, window_s=0.2) as server:
        client = EndpointClient(describe(server.url, backoff_s=0.01), 200,
                                sleep=lambda s: (waits.append(s), time.sleep(min(s, 0.2)))[0])
        remote = remote_target(client, target, client.info())
        run = audit_endpoint(remote, attacks=["linkteller"], seed=0, suite="quick",
                             n_bootstrap=20, params={"linkteller": {"n_nodes": 20}})
        counts = dict(server.counts)
    q = run.report.config["queries"]
    assert counts["limited"] > 0 and q["retries"] == counts["limited"]
    assert q["made"] == counts["answered"]
    assert q["requests_sent"] == counts["received"]
    assert max(waits) >= 1.0  # Retry-After (whole seconds) honoured over the 0.01 s back-off


def test_the_query_log_is_a_hash_chain(target, tmp_path: Path) -> None:
    with EndpointServer(EndpointModel(target)) as server:
        remote = connect(target, server, 10)
        for i in range(3):
            remote.client.query({"nodes": [i]})
    path = tmp_path / "queries.jsonl"
    head = remote.client.log.write(path)
    assert verify_log(path) == head
    lines = path.read_text().splitlines()
    entry = json.loads(lines[1])
    entry["response_sha256"] = "0" * 64
    lines[1] = json.dumps(entry)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match="line 2 breaks the hash chain"):
        verify_log(path)


def test_a_non_deterministic_endpoint_is_reported(target) -> None:
    with EndpointServer(EndpointModel(target, noise=0.1, noise_seed=1)) as server:
        remote = connect(target, server, 50)
        run = audit_endpoint(remote, attacks=["confidence_mia"], seed=0, suite="quick",
                             n_bootstrap=20, recheck=1)
    det = run.report.config["queries"]["determinism"]
    assert det == {"rechecked": 1, "differing": 1, "deterministic": False}
    assert any("NON-DETERMINISTIC" in n for n in run.report.attacks[0].notes)


def _fake(answer: dict) -> httpx.MockTransport:
    info = {"protocol": "graphleaks-endpoint/1", "outputs": ["logits"], "requests": ["nodes"]}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/info"):
            return httpx.Response(200, json=info)
        return httpx.Response(200, content=json.dumps(answer).encode())

    return httpx.MockTransport(handler)


@pytest.mark.parametrize("answer, match", [
    ({"logits": [[0.0, float("nan")]]}, "NaN or infinite"),
    ({"logits": [[0.0, 1.0, 2.0]]}, "wrong shape"),
    ({"posteriors": [[0.5, 0.5]]}, "does not return 'logits'"),
])
def test_bad_answers_are_refused(target, answer, match) -> None:
    d = EndpointDescription(url="http://example.invalid", outputs=("logits",),
                            requests=("nodes",), num_classes=2)
    client = EndpointClient(d, 5, transport=_fake(answer))
    with pytest.raises(DataError, match=match):
        remote_target(client, target, None).logits([0])


def test_an_endpoint_that_does_not_answer(monkeypatch) -> None:
    d = EndpointDescription(url="http://127.0.0.1:9", outputs=("logits",), max_retries=1,
                            timeout_s=0.5)
    client = EndpointClient(d, 5, sleep=lambda s: None)
    with pytest.raises(DataError, match="does not answer .* after 2 tries"):
        client.info()


def test_the_credential_stays_out_of_repr_and_errors(monkeypatch, target) -> None:
    monkeypatch.setenv("GL_TEST_TOKEN", "s3cret-value")
    with EndpointServer(EndpointModel(target), credential="other") as server:
        client = EndpointClient(describe(server.url), 5, credential_env="GL_TEST_TOKEN")
        assert "s3cret" not in repr(client)
        with pytest.raises(DataError) as err:
            client.info()
        assert "s3cret" not in str(err.value) and "401" in str(err.value)
    monkeypatch.delenv("GL_TEST_TOKEN")
    with pytest.raises(InvalidConfigError, match="GL_TEST_TOKEN is not set"):
        EndpointClient(describe("http://x.invalid"), 5, credential_env="GL_TEST_TOKEN")


@pytest.mark.parametrize("data, match", [
    ({"outputs": ["logits"]}, "'url'"),
    ({"url": "ftp://x", "outputs": ["logits"]}, "'url'"),
    ({"url": "http://x", "outputs": ["scores"]}, "'outputs'"),
    ({"url": "http://x", "outputs": ["logits"], "max_retries": 99}, "'max_retries'"),
    ({"url": "http://x", "outputs": ["logits"], "token": "abc"}, "unknown field 'token'"),
])
def test_bad_descriptions(data, match) -> None:
    with pytest.raises(InvalidConfigError, match=match):
        parse_description(data)


def test_a_budget_must_be_positive() -> None:
    with pytest.raises(InvalidConfigError, match="--budget must be a positive"):
        EndpointClient(describe("http://x.invalid"), 0)
