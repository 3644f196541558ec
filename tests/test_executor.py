"""The executor of an audit's model trainings (``graphleaks/_executor.py``), without Ray.

The local path is the loop it replaced: the same seeds whatever order the trainings run
in, so a report does not depend on where they ran; a training that fails fails the audit
with its own error. Ray's side is in ``test_executor_ray.py`` (marker ``ray``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from graphleaks._executor import LOCAL, LocalExecutor, RayExecutor, make_executor
from graphleaks.attacks.lira_mia import LiRAMIA
from graphleaks.attacks.rmia_mia import RMIAMIA
from graphleaks.attacks.shadow_mia import ShadowMIA
from graphleaks.audit.runner import run_audit
from graphleaks.errors import DataError, InvalidConfigError


class _Recording:
    """Runs the items last to first (as remote tasks may finish), returns them in order,
    and records every map call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def map(self, fn: Callable[[Any, Any], Any], items: Sequence[Any], *, shared: Any,
            desc: str | None = None) -> list[Any]:
        self.calls.append((fn.__name__, len(items)))
        out = {i: fn(shared, items[i]) for i in reversed(range(len(items)))}
        return [out[i] for i in range(len(items))]


def _attacks() -> list[Any]:
    return [LiRAMIA(num_references=4, ref_epochs=8), ShadowMIA(num_shadows=3),
            RMIAMIA(num_references=3, ref_epochs=8)]


def _json(report: Any) -> str:
    return json.dumps(report.to_dict(include_timings=False), sort_keys=True)


def test_local_executor_maps_in_order_with_the_shared_object():
    shared = object()
    seen: list[Any] = []

    def fn(s: Any, item: int) -> int:
        seen.append(s)
        return item * 10

    assert LocalExecutor().map(fn, [3, 1, 2], shared=shared) == [30, 10, 20]
    assert LocalExecutor().map(fn, [3], shared=shared, desc="models") == [30]
    assert all(s is shared for s in seen)
    assert make_executor(None) is LOCAL


def test_audit_through_an_executor_equals_the_local_audit(trained_target):
    """Every training of the audit goes through the executor, in whatever order it runs
    them, and the report is the local one to the byte (timings aside)."""
    local = run_audit(trained_target, _attacks(), seed=3, n_bootstrap=30, canary=False)
    recording = _Recording()
    other = run_audit(trained_target, _attacks(), seed=3, n_bootstrap=30, canary=False,
                      executor=recording)
    assert _json(other) == _json(local)
    # LiRA's 4 references, shadow_mia's 3 shadows and RMIA's 3 pooled references fanned out
    assert sorted(recording.calls) == [("_lira_reference_phi", 4), ("_train_reference", 3),
                                       ("_train_shadow_item", 3)]


def test_a_failing_training_fails_the_audit_with_its_error(trained_target, monkeypatch):
    import graphleaks.attacks._shadow as shadow_module

    real = shadow_module.fit_model
    calls = []

    def flaky(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise DataError("reference training failed: out of memory in task 3")
        return real(*args, **kwargs)

    monkeypatch.setattr(shadow_module, "fit_model", flaky)
    with pytest.raises(DataError, match="out of memory in task 3"):
        run_audit(trained_target, [LiRAMIA(num_references=4, ref_epochs=5)], seed=0,
                  n_bootstrap=20, canary=False, executor=LOCAL)
    assert len(calls) == 3  # the audit stopped at the failing training: no partial report


def test_ray_executor_refuses_bad_settings_before_connecting():
    with pytest.raises(InvalidConfigError,
                       match="max_retries parameter of RayExecutor must be an integer >= 0"):
        RayExecutor("127.0.0.1:1", max_retries=-1).connect()


def test_an_unreachable_address_is_refused_in_one_line():
    pytest.importorskip("ray")
    with pytest.raises(InvalidConfigError) as exc:
        run_audit(object(), ["confidence_mia"], seed=0,  # type: ignore[arg-type]
                  executor="127.0.0.1:1")
    msg = str(exc.value)
    assert msg.startswith("--ray 127.0.0.1:1: no Ray cluster answers there")
    assert "ray start --head" in msg and "\n" not in msg
