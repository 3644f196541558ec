"""``population=``: the adversary's auxiliary nodes of a foreign-model audit.

Default: every node that is neither member nor non-member (unchanged). Given: exactly those
nodes reach the attacks' shadow/reference training, the rest stay the owner's; a population
that overlaps the membership sets or leaves the graph is one line, and the CLI exits 2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from graphleaks import audit_model
from graphleaks.attacks.base import TargetView, ThreatModel
from graphleaks.audit.model_audit import MIN_AUX_NODES, as_graph, model_target
from graphleaks.cli import app
from graphleaks.errors import DataError


def test_default_population_is_every_node_neither_member_nor_non_member(user_setup):  # noqa: ANN001
    s = user_setup
    t = model_target(s.model, as_graph(s.graph), s.members, s.non_members)
    rest = np.setdiff1d(np.arange(s.graph.num_nodes), np.r_[s.members, s.non_members])
    np.testing.assert_array_equal(t.split.aux, rest)
    assert t.split.val.size == 0


def test_given_population_is_the_adversarys_and_the_rest_stays_the_owners(user_setup):  # noqa: ANN001
    s = user_setup
    rest = np.setdiff1d(np.arange(s.graph.num_nodes), np.r_[s.members, s.non_members])
    pop = rest[::2][::-1]  # any order; a mask works too (below)
    t = model_target(s.model, as_graph(s.graph), s.members, s.non_members, population=pop)
    np.testing.assert_array_equal(t.split.aux, np.sort(pop))
    np.testing.assert_array_equal(t.split.val, np.setdiff1d(rest, pop))
    # the partition still covers every node exactly once
    assert (t.split.part_ids() >= 0).all()
    # what a shadow-training attack receives is exactly the population
    view = TargetView(t, ThreatModel(access="blackbox", shadow_data="same_distribution"))
    graph, ids = view.population()
    np.testing.assert_array_equal(ids, np.sort(pop))
    assert graph.num_nodes == len(pop)
    mask = np.zeros(s.graph.num_nodes, dtype=bool)
    mask[pop] = True
    t2 = model_target(s.model, as_graph(s.graph), s.members, s.non_members, population=mask)
    np.testing.assert_array_equal(t2.split.aux, t.split.aux)


def test_population_changes_shadow_attacks_only(user_setup):  # noqa: ANN001
    s = user_setup
    rest = np.setdiff1d(np.arange(s.graph.num_nodes), np.r_[s.members, s.non_members])
    kw = {"attacks": ["confidence_mia", "shadow_mia"], "seed": 1, "n_bootstrap": 20,
          "model_factory": lambda: s.module.SGNet(**s.kwargs)}
    default = audit_model(s.model, s.graph, s.members, s.non_members, **kw)
    same = audit_model(s.model, s.graph, s.members, s.non_members, population=rest, **kw)
    half = audit_model(s.model, s.graph, s.members, s.non_members, population=rest[::2], **kw)

    def auc(r, name):  # noqa: ANN001, ANN202
        return next(a.metrics.binary.auc.value for a in r.attacks if a.attack == name)

    # population= of the default nodes is the default audit
    for name in ("confidence_mia", "shadow_mia"):
        assert auc(same, name) == auc(default, name)
    # the confidence MIA trains nothing; the shadow MIA's shadows train on the population
    assert auc(half, "confidence_mia") == auc(default, "confidence_mia")
    assert auc(half, "shadow_mia") != auc(default, "shadow_mia")


def test_a_too_small_population_skips_shadow_attacks_in_the_default_audit(user_setup):  # noqa: ANN001
    s = user_setup
    rest = np.setdiff1d(np.arange(s.graph.num_nodes), np.r_[s.members, s.non_members])
    r = audit_model(s.model, s.graph, s.members, s.non_members, population=rest[:3],
                    n_bootstrap=20, suite="quick")
    skipped = r.config["skipped_attacks"]
    assert "shadow_mia" in skipped and "only 3 given" in skipped["shadow_mia"]
    assert 3 < MIN_AUX_NODES


@pytest.mark.parametrize(("change", "match"), [
    ("members", "shares 1 node.*with the members"),
    ("non_members", "shares 1 node.*with the non-members"),
    ("outside", "population ids must lie in 0..239"),
    ("negative", "population ids must lie in 0..239"),
    ("duplicate", "duplicates"),
    ("mask", "population mask has shape"),
    ("float", "population must be a boolean mask or integer node ids"),
])
def test_bad_population_is_one_line(user_setup, change, match):  # noqa: ANN001
    s = user_setup
    rest = np.setdiff1d(np.arange(s.graph.num_nodes), np.r_[s.members, s.non_members])
    pop = {"members": np.r_[rest[:20], s.members[:1]],
           "non_members": np.r_[rest[:20], s.non_members[:1]],
           "outside": np.r_[rest[:20], [240]], "negative": np.r_[rest[:20], [-1]],
           "duplicate": np.r_[rest[:20], rest[:1]],
           "mask": np.ones(10, dtype=bool), "float": rest[:20].astype(float)}[change]
    with pytest.raises(DataError, match=match) as exc:
        audit_model(s.model, s.graph, s.members, s.non_members, population=pop,
                    attacks=["confidence_mia"], n_bootstrap=20)
    assert "\n" not in str(exc.value)


def _files(s, folder: Path) -> list[str]:  # noqa: ANN001
    from graphleaks.models.foreign import export_pt2

    graph = s.write_graph(folder)
    (folder / "m.txt").write_text("node_id\n" + "\n".join(str(i) for i in s.members))
    (folder / "n.txt").write_text("node_id\n" + "\n".join(str(i) for i in s.non_members))
    pt2 = export_pt2(s.model, s.graph.x, s.graph.edge_index, folder / "model.pt2")
    return ["audit", "model", str(pt2), *graph,
            "--members", str(folder / "m.txt"), "--non-members", str(folder / "n.txt"),
            "--attack", "shadow_mia", "--n-bootstrap", "20", "--quiet", "--seed", "1"]


def test_cli_population_file_reaches_the_audit_and_bad_ones_exit_2(user_setup, tmp_path):  # noqa: ANN001
    import json

    s = user_setup
    args = _files(s, tmp_path / "f")
    rest = np.setdiff1d(np.arange(s.graph.num_nodes), np.r_[s.members, s.non_members])
    (tmp_path / "pop.txt").write_text("node_id\n" + "\n".join(str(i) for i in rest[::2]))
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "o"),
                                 "--population", str(tmp_path / "pop.txt")])
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["config"]["population"] == "pop.txt"
    api = audit_model(s.model, s.graph, s.members, s.non_members, population=rest[::2],
                      attacks=["shadow_mia"], seed=1, n_bootstrap=20)
    # the CLI's .pt2 program is the same model: the same shadows, the same scores
    assert report["attacks"][0]["metrics"]["binary"]["auc"]["value"] == pytest.approx(
        api.attacks[0].metrics.binary.auc.value, abs=1e-3)

    (tmp_path / "bad.txt").write_text("node_id\n" + "\n".join(str(i) for i in s.members[:3]))
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "bad"),
                                 "--population", str(tmp_path / "bad.txt")])
    assert r.exit_code == 2, r.output
    assert len([ln for ln in r.stderr.splitlines() if ln.strip()]) == 1
    assert "members" in r.stderr and not (tmp_path / "bad").exists()
    # --population only means something to audit model
    r = CliRunner().invoke(app, ["audit", "--dataset", "tiny", "--out", str(tmp_path / "t"),
                                 "--population", str(tmp_path / "pop.txt")])
    assert r.exit_code == 2 and "--population belongs to graphleaks audit model FILE" in r.stderr
    assert not (tmp_path / "t").exists()
