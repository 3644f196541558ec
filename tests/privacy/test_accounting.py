"""Tests for graphleaks.privacy.accounting and PrivacyLedger.from_event.

Golden values: the Opacus RDP cross-check (defenses.md §8.3, from
``pytorch/opacus:opacus/tests/accountants_test.py``): σ=1.5, q=0.04, 2250 steps, δ=1e-5 gives
RDP ε = 7.32911117143.

Why graphleaks' "rdp" ε is slightly larger than Opacus': both libraries use the same
improved RDP→(ε,δ) conversion and agree to ~1e-13 at integer orders. At fractional orders
dp_accounting 0.6.0 sums the absolute values of the binomial-series terms
(``_compute_log_a_frac``), an upper bound, whereas Opacus subtracts the negative terms
(exact). On the golden case both pick α=3.9, and dp_accounting gives 7.32933470 (+2.2e-4,
+3.1e-5 relative). The check is therefore: ours ≥ Opacus (conservative) and within 1e-4
relative.
"""

from __future__ import annotations

import importlib.metadata
import json
import math

import numpy as np
import pytest

from graphleaks.errors import InvalidConfigError
from graphleaks.privacy import (
    ComposedEvent,
    GaussianEvent,
    GuaranteeStatus,
    LaplaceEvent,
    NonPrivateEvent,
    PoissonSampledEvent,
    PrivacyLedger,
    PrivacyUnit,
    PureEpsilonEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
    accountant_name,
    analytic_gaussian_delta,
    analytic_gaussian_epsilon,
    describe_accounting,
    epsilon,
    event_from_dict,
    is_pure,
    pure_epsilon,
)

OPACUS_GOLDEN = 7.32911117143  # opacus/tests/accountants_test.py, RDP accountant

# (q, σ, steps, δ): the Opacus golden case and a few more shared DP-SGD settings.
SHARED_CASES = [
    (0.04, 1.5, 2250, 1e-5),
    (0.01, 1.0, 10_000, 1e-5),
    (0.1, 4.0, 1000, 1e-5),
    (1.0, 2.0, 10, 1e-6),  # q = 1: a plain Gaussian, integer-order optimum
]


def _sgd(q: float, sigma: float, steps: int) -> SelfComposedEvent:
    return SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(sigma)), steps)


def _opacus_epsilon(q: float, sigma: float, steps: int, delta: float, orders: list[float]) -> float:
    opacus_rdp = pytest.importorskip("opacus.accountants.analysis.rdp")  # only these skip
    rdp = opacus_rdp.compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=orders)
    eps, _ = opacus_rdp.get_privacy_spent(orders=orders, rdp=rdp, delta=delta)
    return float(eps)


def test_opacus_golden_value_itself() -> None:
    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))  # Opacus defaults
    assert _opacus_epsilon(0.04, 1.5, 2250, 1e-5, orders) == pytest.approx(OPACUS_GOLDEN, abs=1e-9)


def test_rdp_epsilon_matches_opacus_golden() -> None:
    eps = epsilon(_sgd(0.04, 1.5, 2250), 1e-5, accountant="rdp")
    assert eps >= OPACUS_GOLDEN
    assert eps == pytest.approx(OPACUS_GOLDEN, rel=1e-4)
    assert eps == pytest.approx(7.329334702381698, rel=1e-9)  # dp_accounting 0.6.0 today


@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), SHARED_CASES)
def test_rdp_epsilon_cross_checks_opacus(q: float, sigma: float, steps: int, delta: float) -> None:
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

    ours = epsilon(_sgd(q, sigma, steps), delta, accountant="rdp")
    theirs = _opacus_epsilon(q, sigma, steps, delta, list(DEFAULT_RDP_ORDERS))
    assert ours >= theirs - 1e-12
    assert ours == pytest.approx(theirs, rel=1e-4)


@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), SHARED_CASES[:2])
def test_rdp_agrees_with_opacus_exactly_at_integer_orders(
    q: float, sigma: float, steps: int, delta: float
) -> None:
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    orders = [float(a) for a in range(2, 64)]
    accountant = RdpAccountant(orders=orders)
    accountant.compose(_sgd(q, sigma, steps).to_dp_event())
    theirs = _opacus_epsilon(q, sigma, steps, delta, orders)
    assert accountant.get_epsilon(delta) == pytest.approx(theirs, rel=1e-10)
    assert isinstance(_sgd(q, sigma, steps).to_dp_event(), dp_accounting.SelfComposedDpEvent)


def test_pld_is_not_larger_than_rdp() -> None:
    q, sigma, steps, delta = SHARED_CASES[2]
    event = _sgd(q, sigma, steps)
    pld = epsilon(event, delta, accountant="pld")
    rdp = epsilon(event, delta, accountant="rdp")
    assert 0.0 < pld <= rdp
    assert pld == pytest.approx(3.44434, abs=1e-3)  # PLD, discretisation 1e-4


def test_plain_gaussian_pld_and_rdp_bracket_the_exact_value() -> None:
    event = GaussianEvent(4.0)
    exact = epsilon(event, 1e-6, accountant="analytic")
    assert epsilon(event, 1e-6, accountant="pld") == pytest.approx(exact, abs=1e-3)
    assert epsilon(event, 1e-6, accountant="pld") >= exact - 1e-9
    assert epsilon(event, 1e-6, accountant="rdp") > exact


@pytest.mark.parametrize("accountant", ["rdp", "pld", "analytic"])
def test_gaussian_compositions_collapse_exactly(accountant: str) -> None:
    k = 4
    composed = SelfComposedEvent(GaussianEvent(20.0), k)
    single = GaussianEvent(10.0)
    assert epsilon(composed, 1e-7, accountant=accountant) == pytest.approx(  # type: ignore[arg-type]
        epsilon(single, 1e-7, accountant=accountant),
        rel=1e-12,  # type: ignore[arg-type]
    )
    mixed = ComposedEvent((GaussianEvent(10.0), GaussianEvent(20.0, 2.0), GaussianEvent(30.0)))
    precision = 1.0 / 100.0 + 1.0 / 100.0 + 1.0 / 900.0
    assert epsilon(mixed, 1e-6, accountant=accountant) == pytest.approx(  # type: ignore[arg-type]
        epsilon(GaussianEvent(precision**-0.5), 1e-6, accountant=accountant),  # type: ignore[arg-type]
        rel=1e-12,
    )


def test_sensitivity_enters_only_through_the_noise_multiplier() -> None:
    a = epsilon(GaussianEvent(3.0, 2.0), 1e-5)
    b = epsilon(GaussianEvent(1.5), 1e-5)
    assert a == b


def test_poisson_structures_normalise() -> None:
    base = epsilon(_sgd(0.1, 2.0, 20), 1e-5)
    nested = PoissonSampledEvent(0.5, PoissonSampledEvent(0.2, GaussianEvent(2.0)))
    two_queries = PoissonSampledEvent(0.1, SelfComposedEvent(GaussianEvent(2.0 * math.sqrt(2)), 2))
    both = ComposedEvent((SelfComposedEvent(nested, 10), SelfComposedEvent(two_queries, 10)))
    assert epsilon(both, 1e-5) == pytest.approx(base, rel=1e-12)
    full = PoissonSampledEvent(1.0, GaussianEvent(2.0))
    assert epsilon(full, 1e-5) == epsilon(GaussianEvent(2.0), 1e-5)
    assert epsilon(PoissonSampledEvent(0.0, NonPrivateEvent()), 1e-5) == 0.0
    assert epsilon(SelfComposedEvent(GaussianEvent(1.0), 0), 1e-5) == 0.0


@pytest.mark.parametrize("accountant", ["rdp", "pld", "analytic"])
@pytest.mark.parametrize("delta", [0.0, 1e-9, 0.5])
def test_pure_events_compose_additively(accountant: str, delta: float) -> None:
    event = ComposedEvent(
        (
            RandomizedResponseEvent(1.0, 3),
            PureEpsilonEvent(0.5),
            SelfComposedEvent(LaplaceEvent(4.0, 2.0), 2),  # 2 × 0.5
        )
    )
    assert is_pure(event)
    assert epsilon(event, delta, accountant=accountant) == 2.5  # type: ignore[arg-type]
    assert pure_epsilon(event) == 2.5


def test_poisson_sampling_amplifies_pure_epsilon() -> None:
    q, eps = 0.1, 1.0
    expected = math.log(1 + q * (math.e - 1))
    for inner in (PureEpsilonEvent(eps), RandomizedResponseEvent(eps, 5), LaplaceEvent(2.0, 2.0)):
        sampled = PoissonSampledEvent(q, inner)
        assert epsilon(sampled, 1e-5) == pytest.approx(expected, rel=1e-14)
    both = ComposedEvent((PureEpsilonEvent(0.4), PureEpsilonEvent(0.6)))
    composite = PoissonSampledEvent(q, both)
    assert pure_epsilon(composite) == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("accountant", ["rdp", "pld", "analytic"])
def test_randomized_response_is_added_to_the_gaussian_part(accountant: str) -> None:
    gaussian = SelfComposedEvent(GaussianEvent(20.0), 2)
    mixed = ComposedEvent((gaussian, RandomizedResponseEvent(1.0, 7), PureEpsilonEvent(0.5)))
    assert not is_pure(mixed)
    assert epsilon(mixed, 1e-6, accountant=accountant) == pytest.approx(  # type: ignore[arg-type]
        epsilon(gaussian, 1e-6, accountant=accountant) + 1.5,
        rel=1e-12,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_laplace_with_gaussian_takes_the_better_valid_bound(accountant: str) -> None:
    gaussian = GaussianEvent(10.0)
    laplace = SelfComposedEvent(LaplaceEvent(20.0), 10)  # basic composition: 0.5
    mixed = ComposedEvent((gaussian, laplace))
    g = epsilon(gaussian, 1e-6, accountant=accountant)  # type: ignore[arg-type]
    got = epsilon(mixed, 1e-6, accountant=accountant)  # type: ignore[arg-type]
    assert g < got <= g + 0.5 + 1e-12


def test_sampled_laplace_with_gaussian_is_charged_by_pld_or_amplified() -> None:
    mixed = ComposedEvent((GaussianEvent(10.0), PoissonSampledEvent(0.1, LaplaceEvent(1.0))))
    amplified = math.log(1 + 0.1 * (math.e - 1))
    for accountant in ("rdp", "pld"):
        g = epsilon(GaussianEvent(10.0), 1e-6, accountant=accountant)  # type: ignore[arg-type]
        got = epsilon(mixed, 1e-6, accountant=accountant)  # type: ignore[arg-type]
        assert g < got <= g + amplified + 1e-12


def test_non_private_and_zero_delta() -> None:
    assert epsilon(NonPrivateEvent(), 1e-5) == math.inf
    assert epsilon(ComposedEvent((GaussianEvent(1.0), NonPrivateEvent())), 1e-5) == math.inf
    assert epsilon(PoissonSampledEvent(0.1, NonPrivateEvent()), 1e-5) == math.inf
    assert epsilon(GaussianEvent(1.0), 0.0) == math.inf
    assert epsilon(GaussianEvent(1.0), 0.0, accountant="analytic") == math.inf
    assert not is_pure(NonPrivateEvent())


def test_unsupported_structures_raise() -> None:
    with pytest.raises(InvalidConfigError, match="accountant='rdp'"):
        epsilon(_sgd(0.1, 1.0, 5), 1e-5, accountant="analytic")
    mixed = PoissonSampledEvent(0.1, ComposedEvent((GaussianEvent(1.0), PureEpsilonEvent(1.0))))
    with pytest.raises(InvalidConfigError, match="PoissonSampledEvent"):
        epsilon(mixed, 1e-5)
    with pytest.raises(InvalidConfigError, match="pure_epsilon"):
        pure_epsilon(GaussianEvent(1.0))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"delta": 1.0}, "delta"),
        ({"delta": -1e-5}, "delta"),
        ({"delta": math.nan}, "delta"),
        ({"delta": 1e-5, "accountant": "prv"}, "accountant"),
    ],
)
def test_epsilon_validates_arguments(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(InvalidConfigError, match=f"The {name} parameter of epsilon"):
        epsilon(GaussianEvent(1.0), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigError, match="The event parameter of epsilon"):
        epsilon({"kind": "gaussian"}, 1e-5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("eps", "sigma"), [(0.0, 1.0), (0.5, 2.0), (1.0, 1.0), (4.0, 0.7), (8.0, 0.4)]
)
def test_analytic_gaussian_delta_epsilon_round_trip(eps: float, sigma: float) -> None:
    delta = analytic_gaussian_delta(eps, sigma)
    assert 0.0 < delta < 1.0
    assert analytic_gaussian_epsilon(sigma, delta) == pytest.approx(eps, abs=1e-9)
    # Scaling σ and Δ together changes nothing.
    assert analytic_gaussian_delta(eps, 3.0 * sigma, 3.0) == pytest.approx(delta, rel=1e-12)


def test_analytic_gaussian_delta_matches_the_plain_formula() -> None:
    from scipy.stats import norm

    eps, sigma = 1.0, 1.0
    plain = norm.cdf(0.5 - 1.0) - math.e * norm.cdf(-0.5 - 1.0)
    assert analytic_gaussian_delta(eps, sigma) == pytest.approx(plain, rel=1e-12)
    # Tiny δ stays exact in log space.
    assert analytic_gaussian_delta(1.0, 10.0) > 0.0
    assert analytic_gaussian_epsilon(4.679, 1e-300) > 0.0


def test_accountant_names_carry_versions() -> None:
    version = importlib.metadata.version("dp-accounting")
    assert accountant_name("rdp") == f"dp_accounting.rdp {version}"
    assert accountant_name("pld") == f"dp_accounting.pld {version}"
    assert accountant_name("analytic").startswith("graphleaks.analytic_gaussian (scipy ")
    with pytest.raises(InvalidConfigError, match="accountant"):
        accountant_name("moments")  # type: ignore[arg-type]
    assert describe_accounting(PureEpsilonEvent(1.0), "rdp") == "basic_composition"
    assert describe_accounting(GaussianEvent(1.0), "pld") == accountant_name("pld")
    mixed = ComposedEvent((GaussianEvent(1.0), PureEpsilonEvent(1.0)))
    assert describe_accounting(mixed, "rdp") == f"dp_accounting.rdp {version} + basic_composition"


# ------------------------------------------------------------------------------------------
# PrivacyLedger.from_event
# ------------------------------------------------------------------------------------------


def test_ledger_from_gaussian_event() -> None:
    event = SelfComposedEvent(GaussianEvent(6.617), 2)
    ledger = PrivacyLedger.from_event(
        PrivacyUnit.EDGE, event, 1e-7, accountant="analytic", notes=("directed edges",)
    )
    assert ledger.epsilon == pytest.approx(1.0, abs=1e-3)
    assert ledger.delta == 1e-7
    assert ledger.unit is PrivacyUnit.EDGE
    assert ledger.status is GuaranteeStatus.VERIFIED
    assert ledger.is_private
    assert ledger.accountant == accountant_name("analytic")
    assert ledger.events == (event.to_dict(),)
    assert ledger.notes == ("directed edges",)
    assert ledger.components == {}
    restored = PrivacyLedger.from_dict(json.loads(json.dumps(ledger.to_dict())))
    assert restored == ledger
    assert event_from_dict(restored.events[0]) == event


def test_ledger_from_pure_event_records_pure_dp() -> None:
    event = ComposedEvent((PureEpsilonEvent(1.0), RandomizedResponseEvent(2.0, 7)))
    ledger = PrivacyLedger.from_event(
        PrivacyUnit.NODE_FEATURE_AND_LABEL,
        event,
        1e-5,
        components={"epsilon_x": 1.0, "epsilon_y": 2.0},
    )
    assert ledger.epsilon == 3.0
    assert ledger.delta == 0.0
    assert ledger.accountant == "basic_composition"
    assert ledger.components == {"epsilon_x": 1.0, "epsilon_y": 2.0}


def test_ledger_from_dp_sgd_event_uses_rdp_by_default() -> None:
    ledger = PrivacyLedger.from_event(PrivacyUnit.NODE, _sgd(0.04, 1.5, 2250), 1e-5)
    assert ledger.epsilon == pytest.approx(OPACUS_GOLDEN, rel=1e-4)
    assert ledger.accountant.startswith("dp_accounting.rdp ")


def test_ledger_from_non_private_event_and_legacy_api() -> None:
    ledger = PrivacyLedger.from_event(
        PrivacyUnit.EDGE, NonPrivateEvent(), 1e-5, status=GuaranteeStatus.NON_PRIVATE
    )
    assert ledger.epsilon == math.inf and not ledger.is_private and ledger.delta == 0.0
    assert ledger.to_dict()["epsilon"] == "inf"
    legacy = PrivacyLedger.non_private()
    assert PrivacyLedger.from_dict(legacy.to_dict()) == legacy
    assert legacy.to_dict() == {
        "unit": "none",
        "epsilon": "inf",
        "delta": 0.0,
        "accountant": "none",
        "events": [],
        "status": "non_private",
        "notes": ["no privacy defense"],
        "components": {},
    }


def test_ledger_from_event_validates() -> None:
    with pytest.raises(InvalidConfigError, match="delta"):
        PrivacyLedger.from_event(PrivacyUnit.EDGE, GaussianEvent(1.0), 2.0)
    with pytest.raises(ValueError):
        PrivacyLedger.from_event("bogus", GaussianEvent(1.0), 1e-5)  # type: ignore[arg-type]


def test_numpy_scalars_are_accepted() -> None:
    expected = epsilon(GaussianEvent(2.0), 1e-5)
    assert epsilon(GaussianEvent(np.float64(2.0)), np.float64(1e-5)) == expected


def _noisy_event():
    from graphleaks.privacy.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent

    # q = 0.5, σ = 0.3: dp_accounting's RDP series fails to converge at fractional orders and
    # logs one absl warning per order it drops (the GAP-NDP audit's ≈ 400 lines)
    return SelfComposedEvent(PoissonSampledEvent(0.5, GaussianEvent(0.3)), 10)


def _dp_accounting_records(caplog) -> list:  # noqa: ANN001
    return [r for r in caplog.records if "dp_accounting" in r.pathname.replace("\\", "/")]


def test_dp_accounting_convergence_spam_is_silenced_unless_verbose(caplog):
    import logging

    from graphleaks.privacy.accounting import epsilon

    caplog.set_level(logging.WARNING)
    quiet = epsilon(_noisy_event(), 1e-5, accountant="rdp")
    assert _dp_accounting_records(caplog) == []
    # the filters are gone after the call: another library's warning still passes
    assert not logging.getLogger().filters and not logging.getLogger("absl").filters
    logging.getLogger("absl").warning("not dp_accounting")
    assert any(r.getMessage() == "not dp_accounting" for r in caplog.records)
    # verbose (-v sets INFO): dp_accounting's lines are kept, and ε is the same
    caplog.clear()
    caplog.set_level(logging.INFO)
    logging.getLogger("graphleaks").setLevel(logging.INFO)
    try:
        loud = epsilon(_noisy_event(), 1e-5, accountant="rdp")
    finally:
        logging.getLogger("graphleaks").setLevel(logging.NOTSET)
    records = _dp_accounting_records(caplog)
    assert records and "failed to converge" in records[0].getMessage()
    assert loud == quiet
