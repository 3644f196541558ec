"""Privacy records and accounting: what a defense claims, as data.

Mechanisms emit immutable event records (:mod:`.events`); pure functions turn records into ε
(:mod:`.accounting`) and budgets into noise scales (:mod:`.calibration`); :mod:`.mechanisms`
holds the generator-driven noise samplers; :class:`PrivacyLedger` is the record a trained
target carries.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from graphleaks.privacy.accounting import (
    ACCOUNTANTS,
    Accountant,
    accountant_name,
    analytic_gaussian_delta,
    analytic_gaussian_epsilon,
    describe_accounting,
    epsilon,
    is_pure,
    pure_epsilon,
)
from graphleaks.privacy.calibration import (
    MAX_NOISE_MULTIPLIER,
    analytic_gaussian_sigma,
    calibrate_gaussian_sigma,
    calibrate_noise_multiplier,
    classic_gaussian_sigma,
    laplace_scale,
)
from graphleaks.privacy.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureEpsilonEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
    event_from_dict,
)
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyLedger, PrivacyUnit

if TYPE_CHECKING:  # pragma: no cover
    from graphleaks.privacy.mechanisms import (
        gaussian_noise,
        laplace_noise,
        randomized_response,
        rr_keep_probability,
        rr_matrix,
    )

# The samplers import torch; the records above do not. Reading a report decodes its ledger
# (graphleaks check), so the samplers are loaded on first use (PEP 562) and that path stays
# torch-free.
_LAZY = {"gaussian_noise", "laplace_noise", "randomized_response", "rr_keep_probability",
         "rr_matrix"}

__all__ = [
    "ACCOUNTANTS",
    "MAX_NOISE_MULTIPLIER",
    "Accountant",
    "ComposedEvent",
    "GaussianEvent",
    "GuaranteeStatus",
    "LaplaceEvent",
    "NonPrivateEvent",
    "PoissonSampledEvent",
    "PrivacyEvent",
    "PrivacyLedger",
    "PrivacyUnit",
    "PureEpsilonEvent",
    "RandomizedResponseEvent",
    "SelfComposedEvent",
    "accountant_name",
    "analytic_gaussian_delta",
    "analytic_gaussian_epsilon",
    "analytic_gaussian_sigma",
    "calibrate_gaussian_sigma",
    "calibrate_noise_multiplier",
    "classic_gaussian_sigma",
    "describe_accounting",
    "epsilon",
    "event_from_dict",
    "gaussian_noise",
    "is_pure",
    "laplace_noise",
    "laplace_scale",
    "pure_epsilon",
    "randomized_response",
    "rr_keep_probability",
    "rr_matrix",
]


def __getattr__(name: str) -> Any:
    """Import a sampler from :mod:`.mechanisms` when it is first used."""
    if name in _LAZY:
        return getattr(importlib.import_module("graphleaks.privacy.mechanisms"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
