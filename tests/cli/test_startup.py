"""Start-up: --help and list import neither torch nor torch_geometric; threads default."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from graphleaks.cli import default_threads
from graphleaks.cli.listing import _build_catalogue, catalogue

_PROBE = """
import sys
from graphleaks.cli import main
sys.argv = ["graphleaks", *{args!r}]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
heavy = sorted(m for m in ("torch", "torch_geometric", "sklearn", "scipy") if m in sys.modules)
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
"""


def _heavy_modules(args: list[str], cache: str) -> str:
    env = {**os.environ, "GRAPHLEAKS_CACHE": cache}
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(args=args)], env=env,
                          capture_output=True, text=True, check=True)
    return proc.stderr.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def filled_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A cache folder holding the catalogue, as the first listing leaves it.

    Filled in this process, where torch is imported already: a fresh interpreter that fills
    it pays seconds of CPU importing every plug-in, once per test.
    """
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRAPHLEAKS_CACHE", str(cache))
        catalogue()
    assert list(cache.glob("catalogue-*.json"))
    return str(cache)


@pytest.mark.parametrize("args", [["--help"], ["list", "attacks"], ["list", "defenses"],
                                  ["list", "datasets", "--json"]])
def test_start_up_imports_no_torch(args: list[str], filled_cache: str) -> None:
    assert _heavy_modules(args, filled_cache) == "HEAVY="


def test_cached_catalogue_equals_the_registries(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GRAPHLEAKS_CACHE", str(tmp_path))
    first = catalogue()
    assert list(tmp_path.glob("catalogue-*.json"))
    assert catalogue() == first == json.loads(json.dumps(_build_catalogue()))
    assert "linkteller" in first["attacks"] and "none" in first["defenses"]


def test_default_threads_do_not_oversubscribe_small_machines() -> None:
    assert default_threads(1) == 1 and default_threads(2) == 1
    assert default_threads(8) == 4
