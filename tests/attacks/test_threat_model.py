"""ThreatModel: Literal fields validated when built, decoded from reports, no query budget."""

import dataclasses

import pytest

from graphleaks.attacks import registry
from graphleaks.attacks.base import THREAT_MODEL_CHOICES, Output, ThreatModel
from graphleaks.errors import InvalidConfigError


@pytest.mark.parametrize(("field", "value"), [
    ("access", "blak-box"), ("access", "black-box"), ("graph_knowledge", "Full"),
    ("graph_knowledge", "FULL"), ("shadow_data", "disjoint"), ("access", None),
])
def test_unknown_choice_is_refused_naming_the_choices(field, value):
    with pytest.raises(InvalidConfigError) as exc:
        ThreatModel(**{field: value})
    msg = str(exc.value)
    assert field in msg and repr(value) in msg and "\n" not in msg
    assert all(c in msg for c in THREAT_MODEL_CHOICES[field])


def test_the_issue_example_is_refused():
    with pytest.raises(InvalidConfigError, match="access='blak-box'.*blackbox, graybox, whitebox"):
        ThreatModel(access="blak-box", graph_knowledge="Full")


@pytest.mark.parametrize("field", ["feature_knowledge", "label_knowledge",
                                   "architecture_knowledge", "defense_knowledge"])
def test_flags_must_be_bools(field):
    with pytest.raises(InvalidConfigError, match=field):
        ThreatModel(**{field: "False"})


def test_outputs_accept_members_or_their_values_and_nothing_else():
    tm = ThreatModel(outputs=frozenset({"posteriors", Output.LABELS}))  # type: ignore[arg-type]
    assert tm.outputs == frozenset({Output.POSTERIORS, Output.LABELS})
    with pytest.raises(InvalidConfigError, match="outputs"):
        ThreatModel(outputs=frozenset({"probabilities"}))  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigError, match="outputs"):
        ThreatModel(outputs="posteriors")  # type: ignore[arg-type]


def test_replace_validates_too():
    with pytest.raises(InvalidConfigError, match="shadow_data"):
        dataclasses.replace(ThreatModel(), shadow_data="lots")


def test_query_budget_is_gone_and_v1_reports_still_decode():
    assert "query_budget" not in {f.name for f in dataclasses.fields(ThreatModel)}
    tm = ThreatModel(access="whitebox", outputs=frozenset({Output.EMBEDDINGS}),
                     graph_knowledge="partial")
    d = tm.to_dict()
    assert ThreatModel.from_dict(d) == tm
    v1 = {**d, "query_budget": None}  # what every version-1 report holds
    assert ThreatModel.from_dict(v1) == tm
    with pytest.raises(InvalidConfigError, match="query_budget"):
        ThreatModel.from_dict({**d, "query_budget": 100})
    with pytest.raises(InvalidConfigError, match="'budget'"):
        ThreatModel.from_dict({**d, "budget": 1})


@pytest.mark.parametrize("name", sorted(registry))
def test_every_registered_threat_model_round_trips(name):
    tm = registry.get(name)().threat_model
    assert ThreatModel.from_dict(tm.to_dict()) == tm


def test_the_vocabulary_is_one_set_of_classes_re_exported_by_base():
    # graphleaks.threat is the torch-free home; a second copy would break isinstance/equality
    import graphleaks.attacks.base as base
    import graphleaks.threat as threat

    for name in threat.__all__:
        assert getattr(base, name) is getattr(threat, name), name
