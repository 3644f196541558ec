"""EdgeRR, HeteroRR's edge mechanism (Tran et al. §III-B, Alg. 2–3; ``defenses.md`` §5.3, §8.6).

A pHRG dendrogram over all n nodes carries, at each internal node r, a public count e_r and
a private count ē_r (edges whose lowest common ancestor is r) and the numbers of weighted
leaves left and right (L_r, R_r over nodes with a public edge; L̄_r, R̄_r over the private
node set V̄). The log-likelihood is 𝕃 = Σ_r N_r χ(e_r/N_r) + Σ_r N̄_r χ(ē_r/N̄_r) with
χ(τ) = τ log τ + (1−τ) log(1−τ) (Eq. 10–11, maximised: the sign in Eq. 11 is a typo).

Pipeline (:func:`edge_rr`):

1. **MCMC** over dendrograms (Clauset moves: a non-root internal node r with children A, B
   and sibling C is rearranged to ((A,C),B) or ((B,C),A)). The private likelihood enters
   through the exponential mechanism at temperature T = ε_e1/(2Δe) (code, flaw E1) with Δe
   of Eq. 19, Δe = log N_max + (N_max−1) log(N_max/(N_max−1)) (not Eq. 15, flaw E2),
   N_max = ⌈|V̄|/2⌉·⌊|V̄|/2⌋. Acceptance uses the **stored** per-node terms of the current
   state (only the two proposed terms are computed), unlike the released C++ whose cached
   private likelihood is never assigned (flaw E6). A move touches two internal nodes; the
   cross count e(A,C) is found by walking the edges of the smaller side only.
   ``chain="joint"`` (corrected) accepts with exp(Δ𝕃_pub + T·Δ𝕃_pri): its stationary law is
   the exponential mechanism with the public likelihood as a (public) base measure.
   ``chain="alternating"`` (paper, Alg. 2) runs a public sub-step at temperature 1, then a
   private sub-step at temperature T; that composed kernel has no clean stationary law.
   Either way the guarantee holds only at stationarity (flaw E5): the step count is fixed
   in advance, independent of the data, and the ledger says so.
2. **Noisy probabilities** (Alg. 3, code semantics): top-down; a subtree with
   λ_b = 1/(ε_e2 L̄R̄) ≥ τ₁ and λ_c = 1/(ε_e2 (L̄+R̄)(L̄+R̄−1)) ≥ τ₂ is treated as one
   Erdős–Rényi block with **one** Laplace draw for its whole private edge count (flaw E3);
   otherwise p̃_r = clip((ē_r + Lap(1/ε_e2))/(L̄_rR̄_r), 0, 1). Every private pair inside V̄
   lies in exactly one block, so the count vector has L1 sensitivity 1: scale 1/ε_e2.
3. **Sampling**: per internal node, Binomial(L̄_rR̄_r, p̃_r) pairs placed uniformly among
   its left×right private leaves, O(n + |Ẽ|) instead of the O(n²) loop of the C++.

The released private graph is ε_e = ε_e1 + ε_e2 edge-DP for edges among V̄ provided V̄ is
fixed publicly (``private_nodes``; the paper's data-dependent V̄ is flaw E4).

Choice of step count: default 200 000 proposals (~74 per internal node on Cora), about 8 s
on Cora in pure Python on one core (20 000 take ~1 s). Moves are O(1) to apply and
O(edges of the smaller side × climb) to score. The count is fixed in advance; the chain is
not proven mixed, and the guarantee is the stationary one (E5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from graphleaks.errors import InvalidConfigError
from graphleaks.privacy.events import ComposedEvent, LaplaceEvent, PureEpsilonEvent
from graphleaks.privacy.mechanisms import laplace_noise

TAU1 = 0.05  # dendro.h updateNoisyPr thresholds
TAU2 = 0.01


def node_term(e: float, nl: float, nr: float) -> float:
    """N χ(e/N) with N = nl·nr: the log-likelihood of one internal node (0 when N = 0)."""
    n = nl * nr
    if n <= 0 or e <= 0 or e >= n:
        return 0.0
    p = e / n
    return e * math.log(p) + (n - e) * math.log1p(-p)


def sensitivity(num_private_nodes: int) -> float:
    """Δe of Eq. 19: log N_max + (N_max−1) log(N_max/(N_max−1)), N_max = ⌈v/2⌉⌊v/2⌋."""
    v = int(num_private_nodes)
    nmax = ((v + 1) // 2) * (v // 2)
    if nmax <= 1:
        return 1.0 if nmax == 1 else 0.0
    return math.log(nmax) + (nmax - 1) * math.log(nmax / (nmax - 1))


class Dendrogram:
    """A pHRG dendrogram with per-internal-node counts and stored likelihood terms.

    Leaves are 0..n−1, internal nodes n..2n−2 (root is the one with parent −1). Arrays are
    Python lists (scalar access in the MCMC loop is faster than numpy indexing).

    Args:
        n: Number of nodes.
        pub_edges: (m, 2) int array of public edges (undirected, i ≠ j).
        pri_edges: (m', 2) int array of private edges.
        w_pub: 0/1 per node, counted in L_r, R_r (nodes with a public edge).
        w_pri: 0/1 per node, the private node set V̄ (counted in L̄_r, R̄_r).
        rng: numpy generator for the random initial tree.
    """

    def __init__(self, n: int, pub_edges: np.ndarray, pri_edges: np.ndarray,
                 w_pub: np.ndarray, w_pri: np.ndarray, rng: np.random.Generator) -> None:
        if n < 2:
            raise InvalidConfigError(f"The num_nodes parameter of EdgeRR must be >= 2. Got "
                                     f"{n!r} instead.")
        self.n = n
        size = 2 * n - 1
        self.parent = [-1] * size
        self.left = [-1] * size
        self.right = [-1] * size
        self.size = [1] * n + [0] * (n - 1)
        self.cpub = [int(w) for w in w_pub] + [0] * (n - 1)
        self.cpri = [int(w) for w in w_pri] + [0] * (n - 1)
        # adjacency with an edge-type flag: nbr[x] = list of (y, is_private)
        self.nbr: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for edges, flag in ((pub_edges, 0), (pri_edges, 1)):
            for a, b in np.asarray(edges, dtype=np.int64).reshape(-1, 2).tolist():
                self.nbr[a].append((b, flag))
                self.nbr[b].append((a, flag))
        # random initial tree: random leaf order, random balanced-ish merges
        order = rng.permutation(n).tolist()
        nxt = n
        level = order
        while len(level) > 1:
            new = []
            for i in range(0, len(level) - 1, 2):
                a, b = level[i], level[i + 1]
                self._set_children(nxt, a, b)
                new.append(nxt)
                nxt += 1
            if len(level) % 2:
                new.append(level[-1])
            level = new
        self.root = level[0]
        self.epub = [0] * size
        self.epri = [0] * size
        depth = [0] * size
        for v in self._preorder():
            if self.parent[v] >= 0:
                depth[v] = depth[self.parent[v]] + 1
        for x in range(n):
            for y, flag in self.nbr[x]:
                if y > x:
                    r = self._lca(x, y, depth)
                    if flag:
                        self.epri[r] += 1
                    else:
                        self.epub[r] += 1
        self.tpub = [0.0] * size
        self.tpri = [0.0] * size
        for r in range(n, size):
            self._refresh_terms(r)
        self.internal_nonroot = [r for r in range(n, size) if r != self.root]

    # ----------------------------------------------------------------- structure helpers
    def _set_children(self, r: int, a: int, b: int) -> None:
        self.left[r], self.right[r] = a, b
        self.parent[a] = self.parent[b] = r
        self.size[r] = self.size[a] + self.size[b]
        self.cpub[r] = self.cpub[a] + self.cpub[b]
        self.cpri[r] = self.cpri[a] + self.cpri[b]

    def _preorder(self) -> list[int]:
        out, stack = [], [self.root]
        while stack:
            v = stack.pop()
            out.append(v)
            if v >= self.n:
                stack.append(self.right[v])
                stack.append(self.left[v])
        return out

    def _lca(self, x: int, y: int, depth: list[int]) -> int:
        while depth[x] > depth[y]:
            x = self.parent[x]
        while depth[y] > depth[x]:
            y = self.parent[y]
        while x != y:
            x, y = self.parent[x], self.parent[y]
        return x

    def leaves(self, v: int) -> list[int]:
        """Leaves under ``v`` (left to right)."""
        return [u for u in self._subtree(v) if u < self.n]

    def _subtree(self, v: int) -> list[int]:
        out, stack = [], [v]
        while stack:
            u = stack.pop()
            out.append(u)
            if u >= self.n:
                stack.append(self.right[u])
                stack.append(self.left[u])
        return out

    def _refresh_terms(self, r: int) -> None:
        a, b = self.left[r], self.right[r]
        self.tpub[r] = self._term(self.epub[r], self.cpub[a], self.cpub[b])
        self.tpri[r] = self._term(self.epri[r], self.cpri[a], self.cpri[b])

    def _term(self, e: float, nl: float, nr: float) -> float:
        return node_term(e, nl, nr)

    # ----------------------------------------------------------------- likelihood
    def log_likelihood(self) -> tuple[float, float]:
        """(𝕃_pub, 𝕃_pri) recomputed from the stored counts (not used by the MCMC)."""
        lp = lq = 0.0
        for r in range(self.n, 2 * self.n - 1):
            a, b = self.left[r], self.right[r]
            lp += node_term(self.epub[r], self.cpub[a], self.cpub[b])
            lq += node_term(self.epri[r], self.cpri[a], self.cpri[b])
        return lp, lq

    def stored_log_likelihood(self) -> tuple[float, float]:
        """(𝕃_pub, 𝕃_pri) as the sum of the stored per-node terms."""
        return sum(self.tpub[self.n:]), sum(self.tpri[self.n:])

    def cross_count(self, s: int, o: int) -> tuple[int, int]:
        """(public, private) edges between the leaves of disjoint subtrees ``s`` and ``o``.

        Walks the edges of the smaller side; a neighbour y is in ``o`` iff its first
        ancestor-or-self of size ≥ size(o) is ``o`` (sizes grow strictly going up).
        """
        if self.size[s] > self.size[o]:
            s, o = o, s
        so = self.size[o]
        size, parent = self.size, self.parent
        cp = cq = 0
        for x in self.leaves(s):
            for y, flag in self.nbr[x]:
                u = y
                while size[u] < so:
                    u = parent[u]
                if u == o:
                    if flag:
                        cq += 1
                    else:
                        cp += 1
        return cp, cq

    # ----------------------------------------------------------------- MCMC
    def propose(self, rng_uniform: float, rng_choice: float) -> tuple:
        """A move at a random non-root internal node; returns the proposal record."""
        r = self.internal_nonroot[int(rng_uniform * len(self.internal_nonroot))]
        p = self.parent[r]
        a, b = self.left[r], self.right[r]
        c = self.right[p] if self.left[p] == r else self.left[p]
        ac_pub, ac_pri = self.cross_count(a, c)
        if rng_choice < 0.5:  # ((A, C), B)
            x, y, top = a, c, b
            er_pub, er_pri = ac_pub, ac_pri
        else:  # ((B, C), A)
            x, y, top = b, c, a
            er_pub, er_pri = self.epub[p] - ac_pub, self.epri[p] - ac_pri
        ep_pub = self.epub[r] + self.epub[p] - er_pub
        ep_pri = self.epri[r] + self.epri[p] - er_pri
        cpx, cpy, cpt = self.cpub[x], self.cpub[y], self.cpub[top]
        cqx, cqy, cqt = self.cpri[x], self.cpri[y], self.cpri[top]
        new_r_pub = self._term(er_pub, cpx, cpy)
        new_p_pub = self._term(ep_pub, cpx + cpy, cpt)
        d_pub = new_r_pub + new_p_pub - self.tpub[r] - self.tpub[p]
        new_r_pri = self._term(er_pri, cqx, cqy)
        new_p_pri = self._term(ep_pri, cqx + cqy, cqt)
        d_pri = new_r_pri + new_p_pri - self.tpri[r] - self.tpri[p]
        return (r, p, x, y, top, er_pub, er_pri, ep_pub, ep_pri,
                new_r_pub, new_p_pub, new_r_pri, new_p_pri, d_pub, d_pri)

    def apply(self, move: tuple) -> None:
        """Commit a proposal returned by :meth:`propose` (O(1))."""
        (r, p, x, y, top, er_pub, er_pri, ep_pub, ep_pri,
         nrp, npp, nrq, npq, _, _) = move
        self._set_children(r, x, y)
        if self.left[p] == r:
            self.right[p] = top
        else:
            self.left[p] = top
        self.parent[top] = p
        self.epub[r], self.epri[r], self.epub[p], self.epri[p] = er_pub, er_pri, ep_pub, ep_pri
        self.tpub[r], self.tpub[p], self.tpri[r], self.tpri[p] = nrp, npp, nrq, npq

    def mcmc(self, steps: int, temperature: float, chain: str,
             rng: np.random.Generator) -> dict[str, int]:
        """Run ``steps`` iterations; ``joint``: one proposal each, ``alternating``: two."""
        if len(self.internal_nonroot) == 0:
            return {"proposals": 0, "accepted": 0}
        subs = 1 if chain == "joint" else 2
        u = rng.random((steps, subs, 3)).tolist()
        accepted = 0
        for t in range(steps):
            for s in range(subs):
                u0, u1, u2 = u[t][s]
                move = self.propose(u0, u1)
                d_pub, d_pri = move[-2], move[-1]
                if chain == "joint":
                    logacc = d_pub + temperature * d_pri
                elif s == 0:
                    logacc = d_pub
                else:
                    logacc = temperature * d_pri
                if logacc >= 0 or u2 < math.exp(logacc):
                    self.apply(move)
                    accepted += 1
        return {"proposals": steps * subs, "accepted": accepted}

    # ----------------------------------------------------------------- release
    def private_leaf_ranges(self) -> tuple[np.ndarray, dict[int, int]]:
        """Private leaves in left-to-right order, and each node's start offset in that list.

        The private leaves under node v are ``order[lo[v]:lo[v] + cpri[v]]``.
        """
        pre = self._preorder()
        order = np.asarray([v for v in pre if v < self.n and self.cpri[v]], dtype=np.int64)
        lo = {self.root: 0}
        for v in pre:
            if v >= self.n:
                lo[self.left[v]] = lo[v]
                lo[self.right[v]] = lo[v] + self.cpri[self.left[v]]
        return order, lo


@dataclass(frozen=True)
class EdgeRRResult:
    """What :func:`edge_rr` released and how."""

    private_keys: np.ndarray  # sampled private pairs i·n + j (i < j), sorted
    epsilon_mcmc: float
    epsilon_prob: float
    delta_e: float
    temperature: float
    noise_scale: float
    num_private_nodes: int
    info: dict = field(default_factory=dict)

    @property
    def event(self) -> ComposedEvent:
        """Exponential mechanism (pure ε_e1) then the Laplace counts (scale 1/ε_e2)."""
        return ComposedEvent((PureEpsilonEvent(self.epsilon_mcmc),
                              LaplaceEvent(self.noise_scale, 1.0)))


def noisy_probabilities(d: Dendrogram, epsilon: float, generator: torch.Generator,
                        tau1: float = TAU1, tau2: float = TAU2,
                        ) -> tuple[dict[int, float], float, int]:
    """Alg. 3 with one Laplace draw per ER block (code semantics, flaw E3 avoided).

    Returns ({internal node: p̃}, noise scale 1/ε, number of noisy counts released).
    """
    scale = 1.0 / epsilon
    blocks: list[tuple[int, bool]] = []  # (node, is_er_root)
    stack = [d.root]
    while stack:
        r = stack.pop()
        lb, rb = d.cpri[d.left[r]], d.cpri[d.right[r]]
        nb = lb * rb
        tot = lb + rb
        lam_b = math.inf if nb == 0 else 1.0 / (epsilon * nb)
        lam_c = math.inf if tot < 2 else 1.0 / (epsilon * tot * (tot - 1))
        if lam_b >= tau1 and lam_c >= tau2:
            blocks.append((r, True))
            continue
        blocks.append((r, False))
        for c in (d.left[r], d.right[r]):
            if c >= d.n:
                stack.append(c)
    noise = laplace_noise(len(blocks), scale, generator, dtype=torch.float64).tolist()
    probs: dict[int, float] = {}
    for (r, er), z in zip(blocks, noise, strict=True):
        if er:
            sub = [u for u in d._subtree(r) if u >= d.n]
            tot = d.cpri[r]
            pairs = tot * (tot - 1) / 2
            count = sum(d.epri[u] for u in sub)
            pr = 0.0 if pairs <= 0 else min(1.0, max(0.0, (count + z) / pairs))
            for u in sub:
                probs[u] = pr
        else:
            nb = d.cpri[d.left[r]] * d.cpri[d.right[r]]
            probs[r] = 0.0 if nb <= 0 else min(1.0, max(0.0, (d.epri[r] + z) / nb))
    return probs, scale, len(blocks)


def sample_private_graph(d: Dendrogram, probs: dict[int, float],
                         rng: np.random.Generator) -> np.ndarray:
    """Pairs among V̄: Binomial(L̄R̄, p̃_r) per internal node, placed uniformly. Sorted keys."""
    n = d.n
    order, lo = d.private_leaf_ranges()
    out = []
    for r in sorted(probs):
        p = probs[r]
        if p <= 0:
            continue
        a0, b0 = d.left[r], d.right[r]
        nl, nr = d.cpri[a0], d.cpri[b0]
        nb = nl * nr
        if nb == 0:
            continue
        k = int(rng.binomial(nb, p))
        if k == 0:
            continue
        pos = rng.choice(nb, size=k, replace=False)
        a = order[lo[a0] + pos // nr]
        b = order[lo[b0] + pos % nr]
        out.append(np.minimum(a, b) * n + np.maximum(a, b))
    if not out:
        return np.empty(0, dtype=np.int64)
    return np.sort(np.concatenate(out))


def edge_rr(n: int, public_keys: np.ndarray, private_keys: np.ndarray, epsilon: float,
            *, mcmc_fraction: float = 0.5, mcmc_steps: int = 200_000, chain: str = "joint",
            private_nodes: np.ndarray | None = None, seed_rngs=None) -> EdgeRRResult:
    """Run EdgeRR and return the sampled private edge keys with the accounting facts.

    Args:
        n: Number of nodes.
        public_keys / private_keys: Sorted undirected pair keys i·n + j (i < j).
        epsilon: Edge budget ε_e = ε_e1 + ε_e2 (> 0).
        mcmc_fraction: ε_e1/ε_e, in (0, 1).
        mcmc_steps: Fixed number of MCMC iterations (data-independent, flaw E5).
        chain: ``joint`` (corrected) or ``alternating`` (paper Alg. 2).
        private_nodes: Boolean mask of V̄, fixed publicly; ``None`` = the paper's
            data-dependent V̄ (nodes with ≥ 1 private edge, flaw E4).
        seed_rngs: a :class:`graphleaks.seeding.Rngs`.

    Raises:
        InvalidConfigError: On an empty private edge set or bad parameters.
    """
    if len(private_keys) == 0:
        raise InvalidConfigError("The private_keys parameter of EdgeRR must hold at least one "
                                 "private edge; the private edge set is empty. Got 0 edges "
                                 "instead.")
    if not (0.0 < mcmc_fraction < 1.0):
        raise InvalidConfigError(f"The mcmc_fraction parameter of EdgeRR must be in (0, 1). "
                                 f"Got {mcmc_fraction!r} instead.")
    if chain not in ("joint", "alternating"):
        raise InvalidConfigError(f"The chain parameter of EdgeRR must be one of 'joint', "
                                 f"'alternating'. Got {chain!r} instead.")
    pub = np.stack([np.asarray(public_keys) // n, np.asarray(public_keys) % n], 1)
    pri = np.stack([np.asarray(private_keys) // n, np.asarray(private_keys) % n], 1)
    w_pub = np.zeros(n, dtype=np.int64)
    w_pub[pub.ravel()] = 1
    if private_nodes is None:
        w_pri = np.zeros(n, dtype=np.int64)
        w_pri[pri.ravel()] = 1
    else:
        w_pri = np.asarray(private_nodes, dtype=bool).astype(np.int64)
        if not w_pri[pri.ravel()].all():
            raise InvalidConfigError("The private_nodes parameter of EdgeRR must contain both "
                                     "endpoints of every private edge. Got a mask missing "
                                     "some instead.")
    eps1 = epsilon * mcmc_fraction
    eps2 = epsilon - eps1
    nv = int(w_pri.sum())
    delta_e = sensitivity(nv)
    temperature = eps1 / (2.0 * delta_e)
    d = Dendrogram(n, pub, pri, w_pub, w_pri, seed_rngs.child("init").numpy)
    stats = d.mcmc(int(mcmc_steps), temperature, chain, seed_rngs.child("mcmc").numpy)
    probs, scale, nblocks = noisy_probabilities(d, eps2, seed_rngs.child("laplace").torch)
    keys = sample_private_graph(d, probs, seed_rngs.child("sample").numpy)
    lpub, lpri = d.stored_log_likelihood()
    return EdgeRRResult(
        private_keys=keys, epsilon_mcmc=eps1, epsilon_prob=eps2, delta_e=delta_e,
        temperature=temperature, noise_scale=scale, num_private_nodes=nv,
        info={"mcmc_proposals": stats["proposals"], "mcmc_accepted": stats["accepted"],
              "noisy_counts": nblocks, "loglik_pub": lpub, "loglik_pri": lpri})


__all__ = ["Dendrogram", "EdgeRRResult", "edge_rr", "node_term", "noisy_probabilities",
           "sample_private_graph", "sensitivity"]
