"""Edge-membership attacks on link predictors (pair scorers); see :mod:`.base`.

Importing this package registers every attack in :data:`edge_registry`.
"""

from graphleaks.attacks.edge_membership import (  # noqa: F401  (registration)
    edge_embedding_similarity,
    edge_lira,
    edge_rmia,
    edge_score_threshold,
)
from graphleaks.attacks.edge_membership.base import (
    TARGET_KIND,
    EdgeAttack,
    LinkTargetView,
    edge_registry,
)

__all__ = ["TARGET_KIND", "EdgeAttack", "LinkTargetView", "edge_registry"]
