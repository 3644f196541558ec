"""Audit spec parsing and validation."""

from __future__ import annotations

import pytest

from graphleaks.audit.spec import (
    METRICS,
    AuditSpec,
    load_spec,
    parse_spec,
)
from graphleaks.errors import InvalidConfigError
from graphleaks.report.records import MetricReading, decode_readings

GOOD = """
[target]
dataset = "synthetic"
defense = "gap_ndp"
[target.defense_params]
epsilon = 2.0
[target.synthetic]
num_nodes = 80
seed = 3
[target.architecture]
hidden = [16]
epochs = 20

[audit]
seed = 5
n_bootstrap = 50
metrics = ["auc", "TPR@1%FPR"]

[attacks.confidence_mia]
threshold = "none"

[gate]
bound = "upper"
baseline = "base.json"
tolerance = 0.02
[gate.tolerances]
"tpr@0.1%fpr" = 0.1
[gate.thresholds]
auc = 0.9
[gate.thresholds.confidence_mia]
"tpr@1%fpr" = 0.3
"""


def test_parse_good_spec(tmp_path):
    p = tmp_path / "audit.toml"
    p.write_text(GOOD)
    spec = load_spec(p)
    assert isinstance(spec, AuditSpec)
    assert spec.target.defense == "gap_ndp" and spec.target.defense_params == {"epsilon": 2.0}
    assert spec.target.synthetic == {"num_nodes": 80, "seed": 3}
    assert spec.seed == 5 and spec.n_bootstrap == 50
    assert spec.metrics == ("auc", "tpr@1%fpr")
    assert spec.attacks == {"confidence_mia": {"threshold": "none"}}
    th = {(t.attack, t.metric): t.limit for t in spec.gate.thresholds}
    assert th == {(None, "auc"): 0.9, ("confidence_mia", "tpr@1%fpr"): 0.3}
    assert spec.gate.tolerances == {"tpr@0.1%fpr": 0.1}
    assert "tpr@0.1%fpr" in spec.gate.metrics
    assert spec.baseline_path() == tmp_path / "base.json"
    # the hash is stable and depends on the content only
    assert spec.hash() == load_spec(p).hash()
    p.write_text(GOOD.replace("seed = 5", "seed = 6"))
    assert load_spec(p).hash() != spec.hash()



def test_old_kebab_defense_name_in_a_spec_resolves_to_canonical(tmp_path):
    # specs written before the rename say "gap-ndp"; the spec (and so its hash and the
    # report's config) holds the canonical name
    p = tmp_path / "audit.toml"
    p.write_text(GOOD.replace('defense = "gap_ndp"', 'defense = "gap-ndp"'))
    old = load_spec(p)
    p.write_text(GOOD)
    new = load_spec(p)
    assert old.target.defense == "gap_ndp"
    assert old.to_dict() == new.to_dict() and old.hash() == new.hash()

def test_defaults():
    spec = parse_spec({})
    assert spec.target.dataset == "cora" and spec.target.defense == "none"
    assert list(spec.attacks) == ["confidence_mia"] and spec.gate.bound == "upper"


@pytest.mark.parametrize(("raw", "field"), [
    ({"attacks": {"no_such_attack": {}}}, "attacks.no_such_attack"),
    ({"target": {"defense": "nope"}}, "target.defense"),
    ({"target": {"dataset": "nope"}}, "target.dataset"),
    ({"gate": {"thresholds": {"aucc": 0.5}}}, "gate.thresholds.aucc"),
    ({"audit": {"metrics": ["auc", "bogus"]}}, "audit.metrics[1]"),
    ({"gate": {"thresholds": {"auc": 1.5}}}, "gate.thresholds.auc"),
    ({"gate": {"thresholds": {"tpr@1%fpr": -0.1}}}, "gate.thresholds.tpr@1%fpr"),
    ({"gate": {"thresholds": {"confidence_mia": {"auc": 2}}}},
     "gate.thresholds.confidence_mia.auc"),
    ({"gate": {"thresholds": {"shadow_mia": {"auc": 0.5}}}}, "gate.thresholds.shadow_mia"),
    ({"gate": {"bound": "middle"}}, "gate.bound"),
    ({"gate": {"thresholdz": {}}}, "gate: unknown key 'thresholdz'"),
    ({"target": {"epochs": 3}}, "target: unknown key 'epochs'"),
    ({"target": {"architecture": {"epochs": 0}}}, "target.architecture"),
    ({"target": {"defense": "gap_ndp", "defense_params": {"epsilon": -1}}},
     "target.defense_params"),
    ({"attacks": {"confidence_mia": {"score": "weird"}}}, "attacks.confidence_mia"),
    ({"audit": {"seed": "zero"}}, "audit.seed"),
    ({"target": {"synthetic": {"num_nodes": 10}}}, "target.synthetic"),
    ({"extra": 1}, "spec: unknown key 'extra'"),
])
def test_bad_specs_name_the_field(raw, field):
    with pytest.raises(InvalidConfigError) as exc:
        parse_spec(raw)
    assert field in str(exc.value)
    assert "\n" not in str(exc.value)


def test_epsilon_threshold_may_exceed_one():
    spec = parse_spec({"gate": {"thresholds": {"epsilon_lb": 3.0}}})
    assert spec.gate.thresholds[0].limit == 3.0


def test_bad_toml(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("[target\n")
    with pytest.raises(InvalidConfigError, match="not valid TOML"):
        load_spec(p)
    with pytest.raises(InvalidConfigError, match="does not exist"):
        load_spec(tmp_path / "missing.toml")


def test_readings_of_partial_metrics_rows():
    # results-store rows and recorded sweep rows hold only some metrics
    row = {"binary": {"auc": {"value": 0.7, "ci": [0.6, 0.8]},
                      "tpr_at_fpr": {"0.01": {"value": 0.1, "ci": [0.0, 0.2]}}},
           "epsilon_lower_bound": {"epsilon_lb": "inf"}}
    r = decode_readings(row, "row")
    assert r.get("auc") == MetricReading(0.7, (0.6, 0.8))
    assert r.get("tpr@1%fpr").ci == (0.0, 0.2)
    assert r.get("epsilon_lb") == MetricReading(float("inf"))
    assert r.get("f1_macro") is None
    assert decode_readings(r.to_dict(), "again").get("auc") == r.get("auc")
    assert "tpr@0.1%fpr" in METRICS


def test_bundle_and_data_root_resolve_against_the_spec_file(tmp_path):
    from graphleaks.audit.spec import load_spec

    d = tmp_path / "ci"
    d.mkdir()
    (d / "audit.toml").write_text('[target]\nbundle = "bundles/m"\ndata_root = "data"\n'
                                  '[attacks.confidence_mia]\n')
    spec = load_spec(d / "audit.toml")
    t = spec.resolved_target()
    assert t.bundle == str(d / "bundles" / "m") and t.data_root == str(d / "data")
    assert spec.target.bundle == "bundles/m"  # the spec (and its hash) keeps what was written
