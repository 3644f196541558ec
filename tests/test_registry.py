"""Plug-in names: one canonical snake_case name each; old kebab spellings resolve to it."""

from __future__ import annotations

import re

import pytest

from graphleaks._registry import LEGACY_NAMES, Registry, canonical_name, normalize_name
from graphleaks.attacks import registry as attacks
from graphleaks.attacks.base import Task
from graphleaks.defenses import registry as defenses
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ARCHITECTURES
from graphleaks.privacy.ledger import PrivacyUnit

SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")

#: Every registered defense and the unit it protects; a new defense must be added here.
DEFENSE_UNITS = {
    "eclipse": PrivacyUnit.EDGE, "eclipse_strict": PrivacyUnit.EDGE,
    "edgerand": PrivacyUnit.EDGE, "gap_edp": PrivacyUnit.EDGE, "gap_ndp": PrivacyUnit.NODE,
    "heterorr": PrivacyUnit.NODE_FEATURE, "lapgraph": PrivacyUnit.EDGE,
    "lpgnn": PrivacyUnit.NODE_FEATURE, "none": PrivacyUnit.NONE,
}
#: Every registered attack and its task; a new attack must be added here.
ATTACK_TASKS = {
    "attribute_inference": Task.ATTRIBUTE, "base_mia": Task.MEMBERSHIP,
    "confidence_mia": Task.MEMBERSHIP, "embedding_cluster_mia": Task.MEMBERSHIP,
    "gbase_mia": Task.MEMBERSHIP, "graph_reconstruction": Task.LINK,
    "label_only_mia": Task.MEMBERSHIP, "link_stealing": Task.LINK, "linkteller": Task.LINK,
    "lira_mia": Task.MEMBERSHIP, "rmia_mia": Task.MEMBERSHIP, "shadow_mia": Task.MEMBERSHIP,
    "tia": Task.LINK,
}


def _all_names() -> list[tuple[str, str]]:
    return ([("attack", n) for n in attacks.names()]
            + [("defense", n) for n in defenses.names()]
            + [("architecture", a) for a in ARCHITECTURES])


def test_every_plugin_is_registered_with_its_unit_or_task():
    # one registry-wide check (it replaces a test_registered per plug-in test module)
    assert {n: defenses.get(n).privacy_unit for n in defenses.names()} == DEFENSE_UNITS
    assert {n: attacks.get(n).task for n in attacks.names()} == ATTACK_TASKS
    assert all(defenses.get(n).name == n for n in defenses.names())
    assert all(attacks.get(n).name == n for n in attacks.names())
    assert defenses.get("eclipse").strict is False
    assert defenses.get("eclipse_strict").strict is True


@pytest.mark.parametrize(("kind", "name"), _all_names())
def test_every_canonical_name_is_snake_case(kind, name):
    assert SNAKE.match(name), f"{kind} {name!r} is not snake_case"


def test_no_two_plugins_share_a_normalised_name():
    # --param OWNER.FIELD pools attacks, defenses and the architecture: a normalised name
    # shared across kinds would make an owner ambiguous, so the check spans all of them
    seen: dict[str, tuple[str, str]] = {}
    for kind, name in _all_names():
        key = normalize_name(name)
        assert key not in seen, f"{kind} {name!r} clashes with {seen[key]}"
        seen[key] = (kind, name)
    assert len(seen) == len(attacks) + len(defenses) + len(ARCHITECTURES)


@pytest.mark.parametrize(("old", "new"), sorted(LEGACY_NAMES.items()))
def test_old_kebab_spelling_resolves_to_the_canonical_name(old, new):
    assert new in defenses.names() and old not in defenses.names()
    assert defenses.get(old).name == new
    assert defenses.get(old.upper()) is defenses.get(new)
    # the registry-free mapping used by the report decoder agrees with the registry
    assert canonical_name(old) == new and canonical_name(new) == new


def test_canonical_name_keeps_other_strings():
    # a foreign model's defense label is free text: not rewritten
    assert canonical_name("my-own-defense") == "my-own-defense"
    assert canonical_name("none") == "none"


def test_unknown_name_lists_only_canonical_names():
    with pytest.raises(InvalidConfigError, match="unknown defense 'gap-xdp'") as exc:
        defenses.get("gap-xdp")
    assert "gap_edp" in str(exc.value) and "gap-edp" not in str(exc.value)


def test_a_kebab_case_plugin_is_refused_at_definition():
    from graphleaks.defenses.base import Defense

    before = defenses.names()
    with pytest.raises(TypeError, match="'my-defense' is not snake_case; name it 'my_defense'"):
        class _Kebab(Defense):  # noqa: F841 - defining it is the test
            name = "my-defense"
    assert defenses.names() == before


def test_registry_duplicate_normalised_name_is_an_error():
    reg: Registry[object] = Registry("thing")
    reg.register("gap_edp", object)
    with pytest.raises(RuntimeError, match="duplicate thing name 'gap-edp'"):
        reg.register("gap-edp", int)


def test_listing_shows_canonical_names():
    from graphleaks.cli.listing import catalogue

    rows = catalogue(use_cache=False)
    assert {"gap_edp", "gap_ndp", "eclipse_strict"} <= set(rows["defenses"])
    for kind in ("attacks", "defenses", "architectures"):
        assert all(SNAKE.match(n) for n in rows[kind]), rows[kind]
