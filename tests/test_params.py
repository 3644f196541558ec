"""graphleaks._params: typed value parsing and owner resolution at the edges."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal

import pytest

from graphleaks._params import Owner, parse_param_items, parse_value, resolve_params
from graphleaks.errors import InvalidConfigError


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@pytest.mark.parametrize("text", ["true", "TRUE", "1", "yes", "Yes"])
def test_bool_true_spellings(text):
    assert parse_value(text, bool, where="x", text=True) is True


@pytest.mark.parametrize("text", ["false", "False", "0", "no", "NO"])
def test_bool_false_spellings(text):
    assert parse_value(text, bool, where="x", text=True) is False


@pytest.mark.parametrize("text", ["", "on", "2", "t", "False!", "none"])
def test_bool_refuses_anything_else(text):
    with pytest.raises(InvalidConfigError, match="x must be a bool"):
        parse_value(text, bool, where="x", text=True)


def test_int_refuses_fractions_and_bools_and_float_widens_ints():
    assert parse_value("-3", int, where="x", text=True) == -3
    for bad in ("1.5", "1e3", "three"):
        with pytest.raises(InvalidConfigError, match="must be an int"):
            parse_value(bad, int, where="x", text=True)
    for bad in (1.5, True):  # typed (TOML/Python)
        with pytest.raises(InvalidConfigError, match="must be an int"):
            parse_value(bad, int, where="x", text=False)
    v = parse_value(2, float, where="x", text=False)
    assert v == 2.0 and type(v) is float
    with pytest.raises(InvalidConfigError):
        parse_value("2", float, where="x", text=False)  # a TOML string is not a number


def test_literal_enum_optional_tuple_union():
    lit = Literal["shadow", "none"]
    assert parse_value("none", lit, where="x", text=True) == "none"
    with pytest.raises(InvalidConfigError, match=r"one of \{'shadow', 'none'\}; got 'nil'"):
        parse_value("nil", lit, where="x", text=True)
    assert parse_value("BLUE", Colour, where="x", text=True) is Colour.BLUE
    with pytest.raises(InvalidConfigError, match="'red', 'blue'"):
        parse_value("green", Colour, where="x", text=True)
    assert parse_value("none", int | None, where="x", text=True) is None
    assert parse_value("4", int | None, where="x", text=True) == 4
    assert parse_value("[16, 8]", tuple[int, ...], where="x", text=True) == (16, 8)
    assert parse_value("16,8", tuple[int, ...], where="x", text=True) == (16, 8)
    assert parse_value([16], tuple[int, ...], where="x", text=False) == (16,)
    with pytest.raises(InvalidConfigError):
        parse_value("[1.5]", tuple[int, ...], where="x", text=True)
    assert parse_value("2", int | str, where="x", text=True) == 2
    assert parse_value("abc", int | str, where="x", text=True) == "abc"


@dataclass(frozen=True)
class _Cfg:
    num_shadows: int = 1
    mode: Literal["a", "b"] = "a"


def test_owner_resolution_canonical_ambiguous_unknown_and_twice():
    owners = [Owner("gap-edp", "defense", _Cfg), Owner("shadow_mia", "attack", _Cfg)]
    out = resolve_params({"GAP_EDP": {"num-shadows": "2"}, "Shadow-MIA": {"MODE": "b"}},
                         owners, text=True)
    assert out == {"gap-edp": {"num_shadows": 2}, "shadow_mia": {"mode": "b"}}
    with pytest.raises(InvalidConfigError, match="can be set for: gap-edp, shadow_mia"):
        resolve_params({"lira": {"x": "1"}}, owners, text=True)
    clash = [Owner("gap-edp", "defense", _Cfg), Owner("gap_edp", "attack", _Cfg)]
    with pytest.raises(InvalidConfigError, match="ambiguous"):
        resolve_params({"gapedp": {"mode": "a"}}, clash, text=True)
    with pytest.raises(InvalidConfigError, match="given twice"):
        resolve_params({"gap-edp": {"mode": "a"}, "gap_edp": {"mode": "b"}}, owners, text=True)
    with pytest.raises(InvalidConfigError, match="valid parameters: num_shadows, mode"):
        resolve_params({"gap-edp": {"hops": "3"}}, owners, text=True)


def test_param_items_are_split_not_parsed():
    assert parse_param_items(["a.b=1.5", "a.c=x=y"]) == {"a": {"b": "1.5", "c": "x=y"}}
    for bad in ("a=1", ".b=1", "a.b"):
        with pytest.raises(InvalidConfigError, match="NAME.FIELD=VALUE"):
            parse_param_items([bad])
    with pytest.raises(InvalidConfigError, match="given twice"):
        parse_param_items(["a.b=1", "a.b=2"])
