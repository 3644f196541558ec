"""``graphleaks serve``: the bundle over the protocol, with a rate limit and an allow-list."""

from __future__ import annotations

import httpx
import numpy as np
import pytest
from typer.testing import CliRunner

from graphleaks.cli import app
from graphleaks.cli.serve import build_server


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory):
    from graphleaks.audit.runner import train_target
    from graphleaks.bundles import save_bundle
    from graphleaks.data import tiny_graph
    from graphleaks.models.gnn import ArchitectureSpec

    t = train_target(tiny_graph(), spec=ArchitectureSpec(hidden=(8,), epochs=5), seed=0)
    return save_bundle(t, tmp_path_factory.mktemp("bundle") / "b")


def test_serves_the_bundle_on_loopback(bundle) -> None:
    from graphleaks.bundles import load_bundle

    t = load_bundle(bundle)
    with build_server(bundle).start() as server:
        assert server.url.startswith("http://127.0.0.1:")
        info = httpx.get(server.url + "/info").json()
        assert info["num_nodes"] == int(t.graph.num_nodes)
        got = httpx.post(server.url + "/query", json={"nodes": [0, 3]}).json()
    np.testing.assert_array_equal(np.asarray(got["logits"], dtype=np.float32),
                                  t.logits([0, 3]).numpy())
    assert server.counts["answered"] == 1


def test_allow_list_and_rate_limit(bundle, tmp_path) -> None:
    allow = tmp_path / "allow.txt"
    allow.write_text("node_id\n0\n1\n2\n")  # named: a bare first 0 reads as a header too
    with build_server(bundle, allow_list=allow, rate_limit=2).start() as server:
        ok = httpx.post(server.url + "/query", json={"nodes": [0, 2]})
        denied = httpx.post(server.url + "/query", json={"nodes": [0, 5]})
        limited = httpx.post(server.url + "/query", json={"nodes": [1]})
    assert ok.status_code == 200 and denied.status_code == 403
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
    assert server.counts == {**server.counts, "received": 3, "answered": 1, "forbidden": 1,
                             "limited": 1}


@pytest.mark.parametrize("args, match", [
    (["--rate-limit", "0"], "--rate-limit"),
    (["--outputs", "scores"], "--outputs"),
    (["--credential-env", "GL_UNSET_SERVE_TOKEN"], "GL_UNSET_SERVE_TOKEN"),
])
def test_bad_options(bundle, args, match) -> None:
    r = CliRunner().invoke(app, ["serve", str(bundle), "--port", "0", *args])
    assert r.exit_code == 2 and r.output.startswith("error: ") and match in r.output
