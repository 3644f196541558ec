"""Shadow targets trained on the adversary's auxiliary population, shared by MIAs.

Defense awareness lives here, so every attack that trains shadow or reference models through
:func:`train_shadow` or :func:`train_on_nodes` gets it: when the population graph carries the
target's mechanism (:meth:`TargetView.population` attaches it under a defense-aware threat
model), the models are trained through the same defense, with the same mechanism and ε and
independent noise (their own seed), instead of as plain GNNs on clean features.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks._executor import LOCAL, Executor
from graphleaks.data.splits import MembershipSplit, SplitConfig
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.trainer import fit_model
from graphleaks.seeding import derive_seed

if TYPE_CHECKING:  # pragma: no cover
    from graphleaks.attacks.base import TargetView
    from graphleaks.models.target import TrainedTarget

_EPOCH_FIELDS = ("epochs", "encoder_epochs")


@dataclass(frozen=True)
class KnownMechanism:
    """A target's defense as a Kerckhoffs adversary knows it: name and full configuration.

    Attributes:
        defense: Defense registry name.
        config: The defense's configuration, with δ pinned to the target's ledger δ when the
            defense would otherwise derive it from the graph size.
    """

    defense: str
    config: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, target: TrainedTarget) -> KnownMechanism | None:
        """The mechanism of ``target``, or None for an undefended one."""
        if target.defense in ("none", ""):
            return None
        config = dict(target.defense_config)
        if "delta" in config and config["delta"] is None and target.ledger.delta > 0:
            config["delta"] = float(target.ledger.delta)
        return cls(defense=target.defense, config=config)

    def describe(self) -> str:
        """One line for result notes, e.g. ``lpgnn (epsilon=1)``."""
        eps = self.config.get("epsilon")
        if isinstance(eps, float) and math.isinf(eps):
            eps = "inf"
        return f"{self.defense} (epsilon={eps})" if eps is not None else self.defense

    def fit(
        self, graph: Data, split: MembershipSplit, spec: ArchitectureSpec, *, seed: int,
        max_epochs: int | None = None,
    ) -> TrainedTarget:
        """Train a model on ``graph`` through this defense with its own (independent) noise.

        Args:
            graph: The adversary's graph.
            split: Who the model trains on.
            spec: The target's architecture.
            seed: Seed of the model's noise, initialisation and training.
            max_epochs: Cap on the defense's epoch fields (the mechanism and ε are unchanged;
                DP-SGD defenses recalibrate their noise for the capped step count).
        """
        from graphleaks.defenses import registry

        # The adversary serves its own models to itself: no serving budget applies to them.
        config = {k: v for k, v in self.config.items() if k != "query_budget"}
        if max_epochs is not None:
            for name in _EPOCH_FIELDS:
                if isinstance(config.get(name), int):
                    config[name] = min(config[name], max_epochs)
        cls = registry.get(self.defense)
        known = {f.name for f in dataclasses.fields(cls.Config)}
        defense = cls(**{k: v for k, v in config.items() if k in known})
        try:
            return defense.fit(graph, split, model=spec, seed=seed)
        except (DataError, InvalidConfigError) as exc:
            raise type(exc)(f"the adversary cannot train its own model through "
                            f"{self.describe()}: {exc}; use a larger auxiliary population, or "
                            "a defense-unaware adversary (defense_aware=False)") from exc


def mechanism_of(graph: Data) -> KnownMechanism | None:
    """The mechanism a population graph carries (None: train plain models)."""
    mech = getattr(graph, "mechanism", None) if "mechanism" in graph else None
    return mech if isinstance(mech, KnownMechanism) else None


def mechanism_note(mechanism: KnownMechanism | None, what: str) -> str:
    """The result note saying how the adversary's own models were trained."""
    if mechanism is None:
        return (f"{what} trained as plain models on clean population data (defense-unaware "
                "adversary, or an undefended target)")
    return (f"{what} trained through the target's defense {mechanism.describe()} with "
            "independent noise (defense-aware adversary)")


@dataclass(frozen=True)
class ShadowTarget:
    """A model the adversary trained itself, with known members and non-members.

    Attributes:
        model: The shadow model (eval mode).
        graph: The population graph it lives on.
        members: Population-local ids of its training nodes.
        nonmembers: Population-local ids it never trained on.
        edges: The true edges it trained with (each node in its own part's induced subgraph).
        served: The shadow as the defense serves it (features, released graph), when it was
            trained through the target's defense; None for a plain shadow.
    """

    model: nn.Module
    graph: Data
    members: np.ndarray
    nonmembers: np.ndarray
    edges: torch.Tensor
    served: TrainedTarget | None = None

    @property
    def features(self) -> torch.Tensor:
        """The node features the shadow is queried with (privatised ones under LPGNN)."""
        return self.graph.x if self.served is None else self.served.served_features()

    @torch.no_grad()
    def logits(self, nodes: np.ndarray) -> torch.Tensor:
        """Logits of population-local ``nodes``, queried as the target is queried."""
        idx = torch.as_tensor(nodes, dtype=torch.long)
        if self.served is not None:
            return self.served.logits(view="target")[idx]
        return self.model(self.graph.x, self.edges)[idx]


def train_shadow(
    population: Data, spec: ArchitectureSpec, num_classes: int, *, seed: int,
    member_frac: float = 0.45, val_frac: float = 0.1,
) -> ShadowTarget:
    """Train one shadow model inductively on a random part of the population.

    When ``population`` carries a mechanism (see :func:`mechanism_of`), the shadow is trained
    through that defense with independent noise; otherwise it is a plain GNN.

    Args:
        population: The adversary's auxiliary graph.
        spec: Architecture and hyperparameters (the target's, under the usual assumption).
        num_classes: Output width (the target's).
        seed: Seed of the shadow split, initialisation and training.
        member_frac: Fraction of the population the shadow trains on.
        val_frac: Fraction used for its early stopping.
    """
    if population.num_nodes < 10:
        raise DataError(f"the auxiliary population has {population.num_nodes} nodes; a shadow "
                        "model needs at least 10 (lower the target's split fractions)")
    split = MembershipSplit.draw(
        population.num_nodes,
        SplitConfig(kind="inductive", train_frac=member_frac, val_frac=val_frac,
                    test_frac=1.0 - member_frac - val_frac),
        seed=derive_seed(seed, "split"),
    )
    edges = split.partitioned_edges(population.edge_index)
    mechanism = mechanism_of(population)
    if mechanism is not None:
        served = mechanism.fit(_plain(population), split, spec, seed=derive_seed(seed, "defense"))
        return ShadowTarget(model=served.model, graph=population, members=split.train,
                            nonmembers=np.concatenate([split.test, split.aux]), edges=edges,
                            served=served)
    # graphleaks' GNN of ``spec``, or a fresh copy of a user's model (UserArchitecture)
    model = fit_model(spec, population.x, edges, population.y, split.train, num_classes,
                      seed=seed, epochs=spec.epochs, patience=spec.patience,
                      val_nodes=split.val)
    return ShadowTarget(model=model, graph=population, members=split.train,
                        nonmembers=np.concatenate([split.test, split.aux]), edges=edges)


def mechanism_key(mechanism: KnownMechanism | None) -> tuple[str, str] | None:
    """A hashable record of a known mechanism (name and config), for model-cache keys."""
    if mechanism is None:
        return None
    return mechanism.defense, repr(sorted(mechanism.config.items()))


class ShadowPool:
    """Shadow models shared by the attacks of one audit run (owned by the run, not global).

    Several attacks (confidence_mia's calibration, shadow_mia's attack classifier) train a
    shadow with :func:`train_shadow` on the same population and architecture; each used to
    draw its own seed from its own attack seed, so one audit trained that model once per
    attack. In a pool, shadow ``i`` takes its seed from the pool's stream
    (``derive_seed(pool seed, "shadow", i)``, the pool seed derived from the audit seed) and
    is trained once per key of everything that determines it: the population's content and
    name, the known mechanism, the architecture, the output width, the split fractions and
    that seed. The seed does not depend on which attacks run, so an attack's result is the
    same whether or not another attack shares its shadow.

    Args:
        seed: Seed of the pool's shadow stream.
        executor: Where :meth:`prefetch` trains shadows (:data:`~graphleaks._executor.LOCAL`
            by default; a Ray executor fans them out over a cluster with the same seeds).
    """

    def __init__(self, seed: int, executor: Executor = LOCAL) -> None:
        self.seed = int(seed)
        self.executor = executor
        self._models: dict[tuple[Any, ...], ShadowTarget] = {}

    def __len__(self) -> int:
        return len(self._models)

    def seed_of(self, index: int) -> int:
        """The seed of shadow ``index`` in this pool's stream."""
        return derive_seed(self.seed, "shadow", index)

    def get(
        self, population: Data, spec: ArchitectureSpec, num_classes: int, index: int, *,
        member_frac: float = 0.45, val_frac: float = 0.1,
    ) -> ShadowTarget:
        """Shadow ``index`` of the stream for this configuration, trained on first use.

        Args:
            population: The adversary's auxiliary graph (see :func:`train_shadow`).
            spec: Architecture and hyperparameters.
            num_classes: Output width.
            index: Position in the pool's seed stream (shadow_mia's ``i``-th shadow).
            member_frac: Fraction of the population the shadow trains on.
            val_frac: Fraction used for its early stopping.
        """
        key = self._key(population, spec, num_classes, index, member_frac, val_frac)
        if key not in self._models:
            self._models[key] = train_shadow(population, spec, num_classes,
                                             seed=self.seed_of(index),
                                             member_frac=member_frac, val_frac=val_frac)
        return self._models[key]

    def prefetch(
        self, population: Data, spec: ArchitectureSpec, num_classes: int,
        indices: range, *, member_frac: float = 0.45, val_frac: float = 0.1,
    ) -> None:
        """Train the shadows ``indices`` not trained yet, all at once on the pool's executor
        (each on its own seed of the stream, as :meth:`get` would train it)."""
        keys = {i: self._key(population, spec, num_classes, i, member_frac, val_frac)
                for i in indices}
        missing = [i for i in indices if keys[i] not in self._models]
        if len(missing) < 2:
            return  # nothing to fan out: get trains it
        trained = self.executor.map(
            _train_shadow_item, [self.seed_of(i) for i in missing],
            shared=(population, spec, num_classes, member_frac, val_frac),
            desc="shadow models")
        for i, shadow in zip(missing, trained, strict=True):
            self._models[keys[i]] = shadow

    def _key(self, population: Data, spec: ArchitectureSpec, num_classes: int, index: int,
             member_frac: float, val_frac: float) -> tuple[Any, ...]:
        from graphleaks.data.graph import fingerprint

        name = getattr(population, "name", None) if "name" in population else None
        return (fingerprint(population), population.num_nodes, name,
                mechanism_key(mechanism_of(population)),
                repr(spec), num_classes, member_frac, val_frac, self.seed_of(index))


def _train_shadow_item(shared: tuple[Data, ArchitectureSpec, int, float, float],
                       seed: int) -> ShadowTarget:
    """One shadow of :meth:`ShadowPool.prefetch` (module level: Ray pickles it by name)."""
    population, spec, num_classes, member_frac, val_frac = shared
    return train_shadow(population, spec, num_classes, seed=seed, member_frac=member_frac,
                        val_frac=val_frac)


SHARED_NOTE = ("shadow model {i} shared within the audit: trained once, on a seed of the "
               "audit's shadow stream, for every attack with the same shadow configuration")


def shadow_for(target: TargetView, population: Data, num_classes: int, index: int,
               own_seed: int) -> tuple[ShadowTarget, str | None]:
    """Shadow ``index`` for an attack: from the audit's pool when the view carries one.

    Returns:
        The shadow and, when it came from the pool, the note saying it is shared; outside
        an audit (no pool) it is trained on ``own_seed`` and the note is None.
    """
    spec = target.architecture()
    pool = target.shadows
    if pool is None:
        return train_shadow(population, spec, num_classes, seed=own_seed), None
    return pool.get(population, spec, num_classes, index), SHARED_NOTE.format(i=index)


def _plain(graph: Data) -> Data:
    """The graph without the adversary's annotations (a defense validates a plain graph)."""
    out = Data(x=graph.x, edge_index=graph.edge_index, y=graph.y, num_nodes=graph.num_nodes)
    name = getattr(graph, "name", None) if "name" in graph else None
    if isinstance(name, str):
        out.name = name
    return out


def train_on_nodes(
    x: torch.Tensor, edge_index: torch.Tensor, y: torch.Tensor, train_nodes: np.ndarray,
    spec: ArchitectureSpec, num_classes: int, *, seed: int, max_epochs: int | None = None,
    mechanism: KnownMechanism | None = None, name: str | None = None,
) -> nn.Module:
    """Train a model of ``spec`` full-batch on ``train_nodes`` without early stopping.

    Cheap reference/shadow models (LiRA, RMIA) use this: no validation pass, and the number of
    epochs is capped by ``max_epochs`` when given. With a ``mechanism`` the model is trained
    through that defense (independent noise) on the graph ``(x, edge_index, y)``, every node
    of which must then be a training node; it expects the inputs the defense serves (e.g.
    LPGNN's privatised features).

    Args:
        x: Node features.
        edge_index: The graph the model trains with.
        y: Labels (only ``y[train_nodes]`` is used).
        train_nodes: Nodes in the loss.
        spec: Architecture and hyperparameters.
        num_classes: Output width.
        seed: Seed of initialisation and dropout.
        max_epochs: Cap on ``spec.epochs`` (and on a mechanism's epoch fields).
        mechanism: The target's defense, for a defense-aware adversary.
        name: Dataset name of the graph (per-dataset defenses use it).

    Returns:
        The trained model, in eval mode.
    """
    if mechanism is not None:
        graph = Data(x=x, edge_index=edge_index, y=y, num_nodes=x.shape[0])
        if name is not None:
            graph.name = name
        nodes = np.sort(np.asarray(train_nodes, dtype=np.int64))
        empty = np.empty(0, dtype=np.int64)
        split = MembershipSplit(kind="transductive", num_nodes=int(x.shape[0]), train=nodes,
                                val=empty, test=empty, aux=empty, seed=seed)
        return mechanism.fit(graph, split, spec, seed=derive_seed(seed, "defense"),
                             max_epochs=max_epochs).model
    epochs = spec.epochs if max_epochs is None else min(spec.epochs, max_epochs)
    return fit_model(spec, x, edge_index, y, train_nodes, num_classes, seed=seed,
                     epochs=epochs, patience=0)


def posterior_features(
    posteriors: torch.Tensor, *, form: str, top_k: int = 0
) -> np.ndarray:
    """Attack-classifier features from posterior vectors.

    Args:
        posteriors: ``[n, C]`` posteriors.
        form: ``raw`` (class order, as Duddu/Olatunji), ``sorted`` (descending, as He et al.;
            class-agnostic), or ``log_sorted`` (log of the sorted posteriors).
        top_k: Keep the k largest after sorting (0: all). Ignored for ``raw``.
    """
    p = posteriors.detach().double()
    if form == "raw":
        return p.numpy()
    p = torch.sort(p, dim=1, descending=True).values
    if top_k:
        p = p[:, :top_k]
    if form == "log_sorted":
        p = torch.log(p.clamp_min(1e-12))
    return p.numpy()
