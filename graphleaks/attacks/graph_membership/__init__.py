"""Membership inference over whole graphs (graph classifiers; privacy unit ``graph``).

Each module holds one attack, registered in :data:`~.base.graph_registry` under its module
stem:

* :mod:`.graph_confidence_mia`: loss / confidence threshold (Yeom et al. CSF'18);
* :mod:`.graph_shadow_mia`: Wu et al. ICDM'21's training-based attack (shadow GIN, attack
  classifier on sorted posteriors);
* :mod:`.graph_lira_mia`: LiRA (Carlini et al. S&P'22), references on random halves of the
  candidate graphs, offline and online;
* :mod:`.graph_rmia_mia`: RMIA (Zarifzadeh et al. ICML'24), the same references;
* :mod:`.graph_label_only_mia`: label-only, robustness of the predicted label under random
  edge and feature perturbations (GLO-MIA's idea).
"""

from graphleaks.attacks.graph_membership import (  # noqa: F401  (registers the attacks)
    graph_confidence_mia,
    graph_label_only_mia,
    graph_lira_mia,
    graph_rmia_mia,
    graph_shadow_mia,
)
from graphleaks.attacks.graph_membership.base import (
    GraphAttack,
    GraphReferencePool,
    GraphTargetView,
    graph_registry,
    run_graph_attack,
)

__all__ = ["GraphAttack", "GraphReferencePool", "GraphTargetView", "graph_registry",
           "run_graph_attack"]
