"""The README's defense table agrees with the ledgers the defenses write (issue 15, item 8)."""

from __future__ import annotations

import re

import pytest

from graphleaks.audit.runner import train_target
from graphleaks.data.synthetic import csbm
from graphleaks.defenses import registry

from .conftest import REPO

FAST = {"gap_edp": {"encoder_epochs": 1, "epochs": 1},
        "gap_ndp": {"encoder_epochs": 1, "epochs": 1, "batch_size": 1000},
        "lpgnn": {"epochs": 1}, "eclipse": {"rank": 2}, "eclipse_strict": {"rank": 2}}
STATUS = {"verified": "verified", "authors' claim": "authors_claim"}


def _table() -> list[tuple[str, dict, str]]:
    """(defense, params, expected status) for every row of the README's defense table."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Defenses"):text.index("## Datasets")]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        names = re.findall(r"`([a-z][a-z0-9_]*)`", cells[0])
        modes = re.findall(r"`mode=(\w+)`: ([a-z' ]+)", cells[2])
        for name in names:
            if modes:
                rows += [(name, {"mode": m}, STATUS[s.strip()]) for m, s in modes]
            else:
                rows.append((name, {}, STATUS[cells[2]]))
    return rows


def test_every_defense_is_in_the_table():
    listed = {name for name, _, _ in _table()}
    assert listed == set(registry.names()) - {"none"}


@pytest.mark.parametrize(("name", "params", "status"), _table())
def test_readme_status_matches_the_ledger(name, params, status):
    t = train_target(csbm(60, seed=0), defense=name, seed=0,
                     defense_params={**FAST.get(name, {}), **params})
    assert t.ledger.status.value == status


def test_readme_ci_checks_are_the_ones_ci_runs():
    text = (REPO / "README.md").read_text()
    after = text.split("CI (`.ci/run`) also runs", 1)[1]
    block = after.split("```bash\n", 1)[1].split("```", 1)[0]
    ci_lines = (REPO / ".ci" / "run").read_text().splitlines()
    commands = block.strip().split(" && ")
    assert len(commands) == 3
    for cmd in commands:
        assert cmd in ci_lines, f"README says CI runs {cmd!r}; .ci/run does not"
