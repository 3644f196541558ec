"""Report honesty over the whole registry (issue 12, Deliver 2).

For every registered attack, defense and architecture and every field of its config, a
``--param`` value given in any accepted spelling of owner and value reaches the instance and
is what the report's config records. The path is the CLI's own (``resolve_cli_params`` ->
``build_attack`` / ``build_plugin`` / ``ArchitectureSpec`` -> ``config_record``), without
running attacks; one end-to-end audit through ``CliRunner`` closes the loop.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import types
import typing
from typing import Any, Literal, get_args, get_origin

import pytest

from graphleaks._params import config_record, field_types, to_record
from graphleaks._validation import validate
from graphleaks.attacks import registry as attacks
from graphleaks.audit.suite import build_attack, get_suite
from graphleaks.cli._common import defense_params, resolve_cli_params
from graphleaks.defenses import registry as defenses
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ARCHITECTURES, ArchitectureSpec

OWNERS = ([("attack", n) for n in attacks.names()] + [("defense", n) for n in defenses.names()]
          + [("architecture", a) for a in ARCHITECTURES])


def _config_cls(kind: str, name: str) -> type[Any]:
    if kind == "attack":
        return attacks.get(name).Config
    if kind == "defense":
        return defenses.get(name).Config
    return ArchitectureSpec


def _numbers(default: Any, meta: Any, integer: bool) -> list[Any]:
    lo, hi = meta.get("range", (None, None))
    base = default if isinstance(default, (int, float)) and not isinstance(default, bool) else 1
    if integer:
        cands = [base + 1, base - 1, lo, hi, 2, 1, 0]
    else:
        mid = (lo + hi) / 2 if lo is not None and hi is not None else None
        cands = [base * 0.5 if base else 0.25, mid, base + 0.5, 0.25, 2.5]
    out = []
    for c in cands:
        if c is None or (isinstance(c, float) and not math.isfinite(c)):
            continue
        out.append(int(c) if integer else float(c))
    return out


def _candidates(tp: Any, default: Any, meta: Any) -> list[Any]:
    """Values of type ``tp`` other than ``default``, most ordinary first."""
    if "choices" in meta:
        return [c for c in meta["choices"] if c != default]
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        cands = [c for a in inner for c in _candidates(a, default, meta)]
        return cands if default is None else [*cands, None]
    if origin is Literal:
        return [c for c in get_args(tp) if c != default]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return [m for m in tp if m != default]
    if tp is bool:
        return [not default]
    if tp is int:
        return _numbers(default, meta, True)
    if tp is float:
        return _numbers(default, meta, False)
    if tp is str:
        return ["probe"]
    if origin is tuple:
        return [(8, 4), (7,)]
    return []


BOOL_TEXT = {True: ["TRUE", "yes", "1", "True"], False: ["false", "No", "0", "FALSE"]}


def _texts(value: Any) -> list[str]:
    """Every command-line spelling the value may be given in."""
    if isinstance(value, bool):
        return BOOL_TEXT[value]
    if value is None:
        return ["none", "None"]
    if isinstance(value, enum.Enum):
        return [str(value.value)]
    if isinstance(value, tuple):
        return [json.dumps(list(value)), ",".join(str(v) for v in value)]
    if isinstance(value, float):
        return [repr(value)]
    return [str(value)]


def _spellings(name: str) -> list[str]:
    return sorted({name, name.upper(), name.replace("_", "-"), name.replace("-", "_"),
                   name.title()})


def _instance(kind: str, name: str, values: dict[str, Any]) -> Any:
    if kind == "attack":
        return attacks.get(name)(**values)
    if kind == "defense":
        return defenses.get(name)(**values)
    return None


def _valid(kind: str, name: str, values: dict[str, Any], field: str) -> bool:
    """Whether ``values`` validate and the mode they set reads ``field``."""
    base = {"arch": name} if kind == "architecture" else {}
    try:
        validate(_config_cls(kind, name)(**{**base, **values}))
    except (InvalidConfigError, TypeError, ValueError):
        return False
    plugin = _instance(kind, name, values)
    return plugin is None or field not in plugin.unused_fields()


def _cases() -> list[tuple[str, str, str, Any, dict[str, Any]]]:
    """(kind, name, field, non-default value, the other fields that select a mode using it)."""
    cases = []
    for kind, name in OWNERS:
        cls = _config_cls(kind, name)
        hints = field_types(cls)
        fields = dataclasses.fields(cls)
        defaults = cls(**({"arch": name} if kind == "architecture" else {}))
        for f in fields:
            if kind == "architecture" and f.name == "arch":
                continue  # the owner itself: --arch names it
            found: Any = (dataclasses.MISSING, {})
            # the defaults' mode first, then each single other field that selects a mode
            contexts: list[dict[str, Any]] = [{}] + [
                {g.name: c} for g in fields if g.name != f.name
                and not (kind == "architecture" and g.name == "arch")
                for c in _candidates(hints[g.name], getattr(defaults, g.name), g.metadata)]
            for ctx in contexts:
                for cand in _candidates(hints[f.name], getattr(defaults, f.name), f.metadata):
                    if _valid(kind, name, {**ctx, f.name: cand}, f.name):
                        found = (cand, ctx)
                        break
                if found[0] is not dataclasses.MISSING:
                    break
            cases.append((kind, name, f.name, *found))
    return cases


CASES = _cases()


#: Fields that accept only their default because no mode uses them; any other value must be
#: refused (tested below), so nothing can be recorded that did not run.
DEFAULT_ONLY = {("defense", "gap_ndp", "weight_decay")}


def test_every_config_field_has_a_testable_non_default_value():
    untestable = {(k, n, f) for k, n, f, v, _ in CASES if v is dataclasses.MISSING}
    assert untestable == DEFAULT_ONLY
    assert {n for _, n, _, _, _ in CASES} >= set(attacks.names()) - {"none"}


def _build(kind: str, name: str, params: dict[str, dict[str, Any]]) -> tuple[Any, dict]:
    """The instance and the record the report serializes, along the CLI's own path."""
    if kind == "attack":
        a = build_attack(name, get_suite("standard"), params.get(name, {}))
        return a.get_config(), a.config_record()  # AttackReport.config
    if kind == "defense":
        from graphleaks.defenses.base import reported_config

        d = defenses.get(name)(**defense_params(name, params, None, None))
        # Defense.fit stores the full record on the target; the runner reports it through
        # reported_config (TargetSummary.defense_config).
        stored = d.config_record(unused_as_none=False)
        return d.get_config(), reported_config(d.name, stored)
    spec = validate(ArchitectureSpec(**{"arch": name, **params.get(name, {})}))
    return spec, spec.to_dict()  # TargetSummary.architecture


@pytest.mark.parametrize(("kind", "name", "field", "value", "mode"),
                         [c for c in CASES if c[3] is not dataclasses.MISSING],
                         ids=lambda x: str(x))
def test_param_in_any_spelling_reaches_the_instance_and_the_report(kind, name, field, value,
                                                                  mode):
    for i, text in enumerate(_texts(value)):
        owner = _spellings(name)[i % len(_spellings(name))]
        fld = field if i % 2 == 0 else field.upper()
        item = f"{owner}.{fld}={text}"
        # The other field that selects a mode reading this one (e.g. embedder=node2vec for p).
        extra = [f"{name}.{k}={_texts(v)[0]}" for k, v in mode.items()]
        params = resolve_cli_params(
            [item, *extra], attacks=[name] if kind == "attack" else [],
            defense=name if kind == "defense" else None,
            arch=name if kind == "architecture" else None)
        canonical = (attacks.get(name).name if kind == "attack" else
                     defenses.get(name).name if kind == "defense" else name)
        assert params == {canonical: {field: value, **mode}}, item
        config, record = _build(kind, name, params)
        assert getattr(config, field) == value, item
        assert type(getattr(config, field)) is type(value), item
        assert record[field] == to_record(value), item
        assert record == config_record(config) or kind == "architecture" or (
            {k for k in record if record[k] != config_record(config)[k]}
            <= set(_instance(kind, name, params[canonical]).unused_fields()))


MODE_DEPENDENT = sorted((k, n, f, m) for k, n, f, v, m in CASES
                        if m and v is not dataclasses.MISSING)


def test_mode_dependent_fields_are_declared():
    # Today's: attribute_inference's walk knobs and layer, link_stealing's per-attack fields.
    assert {(n, f) for _, n, f, _ in MODE_DEPENDENT} >= {
        ("attribute_inference", "p"), ("attribute_inference", "layer"),
        ("link_stealing", "family"), ("link_stealing", "epochs")}


@pytest.mark.parametrize(("kind", "name", "field", "mode"), MODE_DEPENDENT,
                         ids=lambda x: str(x))
def test_a_param_the_default_mode_does_not_read_is_refused_and_recorded_none(kind, name,
                                                                            field, mode):
    value = next(v for k, n, f, v, _ in CASES if (k, n, f) == (kind, name, field))
    params = resolve_cli_params([f"{name}.{field}={_texts(value)[0]}"],
                                attacks=[name] if kind == "attack" else [],
                                defense=name if kind == "defense" else None)
    with pytest.raises(InvalidConfigError, match=f"{field} has no effect"):
        if kind == "attack":
            build_attack(name, get_suite("standard"), params[attacks.get(name).name])
        else:
            from graphleaks.plugins import build_plugin

            build_plugin("defense", name, params[defenses.get(name).name])
    assert _instance(kind, name, {}).config_record()[field] is None


@pytest.mark.parametrize(("kind", "name", "field"), sorted(DEFAULT_ONLY))
def test_a_field_no_mode_uses_refuses_any_other_value(kind, name, field):
    with pytest.raises(InvalidConfigError, match=f"{field}.*no effect"):
        resolved = resolve_cli_params([f"{name}.{field}=0.5"], defense=name)
        _build(kind, name, resolved)[0].check()


@pytest.mark.parametrize(("name", "params"), [
    ("confidence_mia", {"compat_duddu_label_indexing": True, "score": "max"}),
    ("shadow_mia", {"posterior": "raw", "top_k": 2}),
    ("shadow_mia", {"compat_duddu_protocol": True, "classifier": "gbdt"}),
])
def test_a_field_the_mode_ignores_is_refused(name, params):
    with pytest.raises(InvalidConfigError, match="no effect"):
        build_attack(name, get_suite("standard"), params).validate()


@pytest.mark.parametrize(("name", "flag", "used"), [
    ("confidence_mia", "compat_duddu_label_indexing", {"threshold": "none"}),
    ("shadow_mia", "compat_duddu_protocol", {"posterior": "raw", "balanced": False}),
])
def test_a_compat_mode_records_the_values_it_runs_with(name, flag, used):
    record = build_attack(name, get_suite("standard"), {flag: True}).config_record()
    assert record[flag] is True
    assert {k: record[k] for k in used} == used


def test_typed_python_and_toml_values_are_checked_like_text():
    owner_params = {"shadow_mia": {"num_shadows": 1.5}}
    with pytest.raises(InvalidConfigError, match="num_shadows must be an int"):
        build_attack("shadow_mia", get_suite("standard"), owner_params["shadow_mia"])
    with pytest.raises(InvalidConfigError, match="compat_duddu_label_indexing"):
        build_attack("confidence_mia", get_suite("standard"),
                     {"compat_duddu_label_indexing": "False"})
    # an int for a float field is widened, as TOML's `epsilon = 2` means 2.0
    d = defenses.get("gap_edp")(**defense_params("gap_edp", {"gap_edp": {"epsilon": 2}},
                                                 None, None))
    assert d.config.epsilon == 2
    from graphleaks.plugins import build_plugin

    assert type(build_plugin("defense", "GAP_EDP", {"epsilon": 2}).config.epsilon) is float


def test_end_to_end_cli_report_records_the_params_used(tmp_path):
    import numpy as np
    from typer.testing import CliRunner

    from graphleaks.cli import app
    from graphleaks.data.synthetic import csbm

    g = csbm(100, num_classes=3, num_features=8, seed=0)
    ei = g.edge_index.numpy()
    (tmp_path / "e.csv").write_text("src,dst\n" + "\n".join(f"{a},{b}" for a, b in ei.T))
    np.save(tmp_path / "x.npy", g.x.numpy())
    (tmp_path / "y.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
    out = tmp_path / "o"
    r = CliRunner().invoke(app, [
        "audit", "--edges", str(tmp_path / "e.csv"), "--features", str(tmp_path / "x.npy"),
        "--labels", str(tmp_path / "y.csv"), "--out", str(out), "--attack", "Confidence-MIA",
        "--n-bootstrap", "20", "--param", "CONFIDENCE-MIA.threshold=none",
        "--param", "confidence_mia.score=max", "--param", "GCN.hidden=8",
        "--param", "gcn.EPOCHS=5", "--quiet"])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "report.json").read_text())
    (a,) = rep["attacks"]
    expected = build_attack("confidence_mia", get_suite("standard"),
                            {"threshold": "none", "score": "max"}).config_record()
    assert a["config"] == expected
    assert rep["config"]["params"] == {"confidence_mia": {"threshold": "none", "score": "max"},
                                       "gcn": {"hidden": [8], "epochs": 5}}
    assert rep["target"]["architecture"]["hidden"] == [8]
    assert rep["target"]["architecture"]["epochs"] == 5


def test_a_defense_field_the_release_ignores_is_refused_and_recorded_none():
    from graphleaks.plugins import build_plugin

    with pytest.raises(InvalidConfigError, match="heterorr.epsilon has no effect"):
        build_plugin("defense", "heterorr", {"features": "public", "epsilon": 2.0})
    d = build_plugin("defense", "heterorr", {"features": "public", "epsilon_e": 0.5})
    assert d.config_record()["epsilon"] is None and d.config_record()["epsilon_e"] == 0.5
