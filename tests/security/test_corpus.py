"""Run the whole CLI against every malformed input of ``corpus.py``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("graphleaks_hostile_corpus",
                                               Path(__file__).with_name("corpus.py"))
assert _spec is not None and _spec.loader is not None
corpus = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = corpus  # dataclasses look their module up while it loads
_spec.loader.exec_module(corpus)


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    return corpus.build_assets(tmp_path_factory.mktemp("assets"))


def test_corpus_is_large_and_covers_every_kind():
    kinds = {c.kind for c in corpus.CASES}
    assert len(corpus.CASES) >= 40
    assert {"graph", "bundle", "report", "spec", "database", "parameter"} <= kinds
    assert len({(c.kind, c.name) for c in corpus.CASES}) == len(corpus.CASES)


@pytest.mark.parametrize("case", corpus.CASES, ids=lambda c: f"{c.kind}-{c.name}")
def test_malformed_input_is_refused(case, assets, tmp_path):
    assert corpus.run_case(case, assets, tmp_path / "sandbox") is None
