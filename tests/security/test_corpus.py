"""Run the whole CLI against every malformed input of ``corpus.py``."""

from __future__ import annotations

import sys

import pytest

corpus = sys.modules["graphleaks_hostile_corpus"]  # loaded by this folder's conftest.py


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
