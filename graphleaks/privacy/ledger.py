"""The privacy ledger every trained target carries.

A ledger is a record, not a computation: it states the neighbouring relation (unit), the
claimed ε and δ, the accountant that produced them, the mechanisms' parameters, and whether
graphleaks stands behind the claim or merely repeats the authors' one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from graphleaks.errors import BundleError

if TYPE_CHECKING:
    from graphleaks.privacy.accounting import Accountant
    from graphleaks.privacy.events import PrivacyEvent


class PrivacyUnit(str, Enum):
    """What two neighbouring datasets differ in."""

    NONE = "none"
    EDGE = "edge"
    NODE = "node"
    NODE_FEATURE = "node_feature"
    NODE_LABEL = "node_label"
    NODE_FEATURE_AND_LABEL = "node_feature_and_label"
    #: One whole graph of a graph-classification training set (a molecule).
    GRAPH = "graph"


class GuaranteeStatus(str, Enum):
    """How far graphleaks stands behind a ledger's ε."""

    NON_PRIVATE = "non_private"
    VERIFIED = "verified"
    AUTHORS_CLAIM = "authors_claim"


@dataclass(frozen=True)
class PrivacyLedger:
    """An immutable record of a target's privacy claim.

    Attributes:
        unit: The neighbouring relation the guarantee is stated for.
        epsilon: The claimed ε (``inf`` for a non-private target).
        delta: The claimed δ (0 for pure DP or a non-private target).
        accountant: The accountant and its version, e.g. ``"dp_accounting.rdp 0.4.4"``.
        events: Mechanism records as plain dictionaries (kind and parameters).
        status: Whether graphleaks verified the claim or repeats the authors'.
        notes: Free-text caveats shown in every report.
        components: Per-unit sub-claims, e.g. ``{"epsilon_x": 1.0, "epsilon_y": 2.0}``.
    """

    unit: PrivacyUnit
    epsilon: float
    delta: float = 0.0
    accountant: str = "none"
    events: tuple[dict[str, Any], ...] = ()
    status: GuaranteeStatus = GuaranteeStatus.NON_PRIVATE
    notes: tuple[str, ...] = ()
    components: dict[str, float] = field(default_factory=dict)

    @classmethod
    def non_private(cls) -> PrivacyLedger:
        """The ledger of a target trained with no defense: ε = ∞."""
        return cls(unit=PrivacyUnit.NONE, epsilon=math.inf, notes=("no privacy defense",))

    @classmethod
    def from_event(
        cls,
        unit: PrivacyUnit,
        event: PrivacyEvent,
        delta: float,
        *,
        accountant: Accountant = "rdp",
        status: GuaranteeStatus = GuaranteeStatus.VERIFIED,
        notes: tuple[str, ...] = (),
        components: dict[str, float] | None = None,
    ) -> PrivacyLedger:
        """A ledger whose ε is computed from ``event`` by :func:`graphleaks.privacy.epsilon`.

        The event is stored as ``events=(event.to_dict(),)`` and the accountant as its name
        and version (:func:`graphleaks.privacy.accounting.describe_accounting`). An event
        made only of pure-ε records is recorded as pure DP: δ = 0 and accountant
        ``"basic_composition"``, whatever ``delta`` and ``accountant`` say.

        Args:
            unit: The neighbouring relation the guarantee is stated for.
            event: The (possibly composed) event record of everything the target released.
            delta: Target δ in [0, 1).
            accountant: ``"rdp"``, ``"pld"`` or ``"analytic"``.
            status: How far graphleaks stands behind the claim.
            notes: Free-text caveats.
            components: Per-unit sub-claims, e.g. ``{"epsilon_x": 1.0}``.

        Returns:
            The ledger.

        Raises:
            InvalidConfigError: If the event, δ or accountant is invalid.

        Example:
            >>> from graphleaks.privacy.events import GaussianEvent, SelfComposedEvent
            >>> ledger = PrivacyLedger.from_event(
            ...     PrivacyUnit.EDGE, SelfComposedEvent(GaussianEvent(6.617), 2), 1e-7,
            ...     accountant="analytic")
            >>> round(ledger.epsilon, 3), ledger.delta, ledger.events[0]["kind"]
            (1.0, 1e-07, 'self_composed')
        """
        from graphleaks.privacy import accounting

        eps = accounting.epsilon(event, delta, accountant=accountant)
        pure = accounting.is_pure(event)
        return cls(
            unit=PrivacyUnit(unit),
            epsilon=eps,
            delta=0.0 if pure or not math.isfinite(eps) else float(delta),
            accountant=accounting.describe_accounting(event, accountant),
            events=(event.to_dict(),),
            status=GuaranteeStatus(status),
            notes=tuple(notes),
            components=dict(components or {}),
        )

    @property
    def is_private(self) -> bool:
        """True when the ledger claims a finite ε."""
        return math.isfinite(self.epsilon)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dictionary (``inf`` written as the string ``"inf"``)."""
        return {
            "unit": self.unit.value,
            "epsilon": self.epsilon if math.isfinite(self.epsilon) else "inf",
            "delta": self.delta,
            "accountant": self.accountant,
            "events": [dict(e) for e in self.events],
            "status": self.status.value,
            "notes": list(self.notes),
            "components": dict(self.components),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PrivacyLedger:
        """Inverse of :meth:`to_dict`.

        Raises:
            BundleError: If a field is missing or malformed.
        """
        try:
            eps = data["epsilon"]
            return cls(
                unit=PrivacyUnit(data["unit"]),
                epsilon=math.inf if eps == "inf" else float(eps),
                delta=float(data.get("delta", 0.0)),
                accountant=str(data.get("accountant", "none")),
                events=tuple(dict(e) for e in data.get("events", [])),
                status=GuaranteeStatus(data.get("status", "non_private")),
                notes=tuple(str(n) for n in data.get("notes", [])),
                components={str(k): float(v) for k, v in data.get("components", {}).items()},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise BundleError(f"malformed privacy ledger in bundle manifest: {exc}") from exc
