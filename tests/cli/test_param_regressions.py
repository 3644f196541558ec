"""Issue 12, "Why": every parameter or flag bug, end to end through the CLI.

Each test failed on main at 555e0d9 and passes now: a parameter given in any accepted
spelling is used and recorded as used, a bad one is exit 2 before any work, and a flag a
mode does not use is refused or applied and recorded, never dropped.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from graphleaks.cli import app


def _files(files):  # noqa: ANN001, ANN202
    return ["--edges", str(files / "edges.csv"), "--features", str(files / "x.npy"),
            "--labels", str(files / "y.csv")]


def _audit(files, out, *extra):  # noqa: ANN001, ANN202
    return CliRunner().invoke(app, ["audit", *_files(files), "--out", str(out),
                                    "--attack", "confidence_mia", "--n-bootstrap", "20",
                                    *extra])


def _report(out):  # noqa: ANN001, ANN202
    return json.loads((out / "report.json").read_text())


def test_gap_edp_hops_in_the_other_spelling_is_trained_with(edge_files, tmp_path):
    # main: the owner check matched gap_edp loosely, the value lookup used 'gap-edp': hops 2.
    r = CliRunner().invoke(app, [
        "train", *_files(edge_files), "--out", str(tmp_path / "b"), "--defense", "gap-edp",
        "--epsilon", "4", "--param", "gap_edp.hops=3", "--param", "GAP_EDP.encoder_epochs=2",
        "--param", "gap-edp.epochs=2", "--epochs", "2"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    # The ledger is written by the mechanism that ran: 3 Gaussian releases, one per hop.
    assert "3 Gaussian aggregation releases" in json.dumps(out["ledger"])
    # the old spelling resolved once: the bundle records only the canonical name
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["defense"] == "gap_edp"


def test_confidence_mia_threshold_none_is_used_and_recorded(edge_files, tmp_path):
    # main: 'confidence-mia' never reached the attack (it ran 'shadow'), yet the report's
    # params recorded {"confidence-mia": {"threshold": "none"}}.
    r = _audit(edge_files, tmp_path / "o", "--param", "confidence-mia.threshold=none")
    assert r.exit_code == 0, r.output
    rep = _report(tmp_path / "o")
    (a,) = rep["attacks"]
    assert a["config"]["threshold"] == "none"
    assert not any("shadow model" in n for n in a["notes"])  # no shadow calibration ran
    assert rep["config"]["params"] == {"confidence_mia": {"threshold": "none"}}


def test_compat_flag_false_keeps_the_compat_mode_off(edge_files, tmp_path):
    # main: 'False' was not JSON, stayed the string 'False', and a non-empty string is truthy.
    r = _audit(edge_files, tmp_path / "o",
               "--param", "confidence_mia.compat_duddu_label_indexing=False")
    assert r.exit_code == 0, r.output
    (a,) = _report(tmp_path / "o")["attacks"]
    assert a["config"]["compat_duddu_label_indexing"] is False
    assert a["compat_flags"] == []


def test_bool_param_refuses_anything_but_its_spellings(edge_files, tmp_path):
    r = _audit(edge_files, tmp_path / "o",
               "--param", "confidence_mia.compat_duddu_label_indexing=nope")
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "error: --param confidence_mia.compat_duddu_label_indexing must be a bool "
        "(true/false, 1/0 or yes/no); got 'nope'"]
    assert not (tmp_path / "o").exists()


def test_int_param_refuses_a_fraction_with_exit_2_before_any_work(edge_files, tmp_path):
    # main: 1.5 passed validation (int and float were not told apart), then exit 1.
    r = CliRunner().invoke(app, ["audit", *_files(edge_files), "--out", str(tmp_path / "o"),
                                 "--attack", "shadow_mia", "--param",
                                 "shadow_mia.num_shadows=1.5"])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "shadow_mia.num_shadows must be an int" in lines[0]
    assert "'1.5'" in lines[0]
    assert not (tmp_path / "o").exists()


def test_literal_param_refuses_an_unknown_choice_listing_the_choices(edge_files, tmp_path):
    r = _audit(edge_files, tmp_path / "o", "--param", "confidence_mia.threshold=maybe")
    assert r.exit_code == 2
    assert "one of {'shadow', 'median', 'none'}" in r.output and "'maybe'" in r.output
    assert not (tmp_path / "o").exists()


def test_unknown_owner_and_field_exit_2_naming_the_choices(edge_files, tmp_path):
    r = _audit(edge_files, tmp_path / "o", "--param", "shadow_mia.num_shadows=2")
    assert r.exit_code == 2 and "can be set for: confidence_mia" in r.output
    r = _audit(edge_files, tmp_path / "o", "--param", "confidence_mia.thresh=none")
    assert r.exit_code == 2 and "valid parameters: score, threshold" in r.output
    assert not (tmp_path / "o").exists()


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


def test_seed_n_bootstrap_query_graph_with_config_are_applied_and_recorded(tmp_path):
    # main: --seed, --n-bootstrap and --query-graph were silently ignored with --config.
    spec = tmp_path / "a.toml"
    spec.write_text(SPEC)
    r = CliRunner().invoke(app, ["audit", "spec", str(spec), "--out", str(tmp_path / "o"),
                                 "--seed", "7", "--n-bootstrap", "20", "--query-graph",
                                 "full", "--quiet"])
    assert r.exit_code == 0, r.output
    rep = _report(tmp_path / "o")
    assert rep["seed"] == 7
    assert rep["config"]["n_bootstrap"] == 20 and rep["config"]["query_graph"] == "full"
    assert rep["attacks"][0]["query_graph"] == "full"
    assert rep["config"]["overrides"] == {"seed": {"spec": 0, "used": 7},
                                          "n_bootstrap": {"spec": 30, "used": 20},
                                          "query_graph": {"spec": "target", "used": "full"}}


def test_target_and_attack_options_with_a_spec_exit_2(tmp_path):
    spec = tmp_path / "a.toml"
    spec.write_text(SPEC)
    for extra in (["--attack", "shadow_mia"], ["--param", "confidence_mia.threshold=shadow"],
                  ["--defense", "none"], ["--suite", "quick"]):
        r = CliRunner().invoke(app, ["audit", "spec", str(spec), "--out",
                                     str(tmp_path / "o"), *extra])
        assert r.exit_code == 2, (extra, r.output)
        assert f"{extra[0]} belongs to graphleaks audit" in r.output
        assert "not to graphleaks audit spec FILE" in r.output
        assert not (tmp_path / "o").exists()


def test_toml_float_for_an_int_field_is_refused(tmp_path):
    spec = tmp_path / "a.toml"
    spec.write_text(SPEC.replace('threshold = "none"', "threshold = \"none\"\n"
                                 "[attacks.shadow_mia]\nnum_shadows = 1.5"))
    r = CliRunner().invoke(app, ["audit", "spec", str(spec), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    # the spec is a file: its value is named by type, never quoted (issue 23)
    assert "num_shadows must be an int; got a float" in r.output and "1.5" not in r.output
    assert not (tmp_path / "o").exists()


def test_options_a_bundle_or_embedding_audit_cannot_use_exit_2(tmp_path):
    r = CliRunner().invoke(app, ["audit", "--bundle", str(tmp_path / "b"), "--out",
                                 str(tmp_path / "o"), "--epsilon", "1"])
    assert r.exit_code == 2
    assert "--epsilon describes a target trained here, and --bundle is a target" in r.output
    r = CliRunner().invoke(app, ["audit", "embeddings", str(tmp_path / "e.npy"),
                                 "--attributes", str(tmp_path / "a.csv"), "--out",
                                 str(tmp_path / "o"), "--attack", "shadow_mia"])
    assert r.exit_code == 2
    assert "--attack belongs to graphleaks audit" in r.output
    assert "not to graphleaks audit embeddings FILE" in r.output
    assert not (tmp_path / "o").exists()


def test_train_refuses_epochs_given_twice(edge_files, tmp_path):
    r = CliRunner().invoke(app, ["train", *_files(edge_files), "--out", str(tmp_path / "b"),
                                 "--epochs", "3", "--param", "gcn.epochs=4"])
    assert r.exit_code == 2 and "give one of them" in r.output
    assert not (tmp_path / "b").exists()


def test_canary_and_embedding_options_without_their_mode_exit_2(tmp_path):
    r = CliRunner().invoke(app, ["audit", "--out", str(tmp_path / "o"), "--canaries", "50"])
    assert r.exit_code == 2
    assert "--canaries sets up a canary audit, and none is asked for" in r.output
    r = CliRunner().invoke(app, ["audit", "--out", str(tmp_path / "o"), "--aux-frac", "0.5"])
    assert r.exit_code == 2
    assert "--aux-frac belongs to graphleaks audit embeddings FILE" in r.output
    assert not (tmp_path / "o").exists()
