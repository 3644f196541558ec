"""Exact outputs of a served GCN after one node's features change, from the rows it reaches.

LinkTeller asks the inference API for the logits after scaling one node's features by
``1 + Δ``, once per sampled node. A full forward pass per query costs ``O(L·(m·d + n·F·d))``;
but in a GCN, changing row ``v`` of ``X`` changes row ``v`` of ``X·W₁`` only, then the rows of
``Â·X·W₁`` that ``v`` reaches in one hop, then those reached in two hops, and so on. This
module keeps every layer's pre-activation for the unperturbed input and propagates only the
change: ``ΔZ_l = Â[:, S] · (ΔH_{l-1}[S] · W_l)`` over the rows ``S`` the change has reached,
``ΔH_l = relu(Z_l + ΔZ_l) − relu(Z_l)``. The result equals a full forward pass up to float
rounding (float64 here; ``tests/models/test_local_update.py`` checks it against the model).

It applies to :class:`graphleaks.models.gnn.GNN` stacks of ``GCNConv`` layers (any depth) in
eval mode; :func:`supports` says whether a model qualifies, and the caller falls back to full
forward passes otherwise.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
import torch
from torch import nn

FloatArray = npt.NDArray[np.float64]

#: Rows of ``x`` widened to float64 at a time for the first layer's product: the features stay
#: as sent (float32 for graphleaks' targets), so no float64 copy of all of ``X`` is ever held
#: (at 1M nodes and 128 features, 0.5 GB of features would need another 1 GB). A graph of up
#: to this many nodes gets the former single product bit for bit; a larger one, products
#: equal to float64 rounding (BLAS may sum a block in another order).
ROWS_PER_BLOCK = 65_536


def supports(model: nn.Module) -> bool:
    """Whether ``model`` is a stack of GCN convolutions this module can update locally."""
    from torch_geometric.nn import GCNConv

    from graphleaks.models.gnn import GNN

    # Exact only for graphleaks' own GCN stack: another class with GCN layers may do more
    # in its forward (normalization, skip connections) than this module replays.
    layers = getattr(model, "layers", None)
    if not isinstance(model, GNN) or layers is None or len(layers) == 0:
        return False
    return all(isinstance(layer, GCNConv) and getattr(layer, "lin", None) is not None
               and getattr(layer.lin, "bias", None) is None for layer in layers)


class LocalFeatureUpdate:
    """The served GCN's outputs for ``x`` and for ``x`` with one row scaled.

    Args:
        model: A model for which :func:`supports` is true.
        x: The features sent to the API, ``[n, F]``.
        edge_index: The graph the API serves (``[2, m]``).
    """

    def __init__(self, model: nn.Module, x: torch.Tensor, edge_index: torch.Tensor) -> None:
        from torch_geometric.nn.conv.gcn_conv import gcn_norm

        n = int(x.shape[0])
        ei, w = gcn_norm(edge_index.cpu(), None, n, add_self_loops=True, dtype=torch.float64)
        src, dst = ei[0].numpy(), ei[1].numpy()
        # Messages flow source -> target: Â[t, s] = w. Row s of Âᵀ lists the rows s reaches.
        self._reach = sp.csr_matrix((w.numpy(), (src, dst)), shape=(n, n))
        a_hat = self._reach.T.tocsr()
        self._weights: list[FloatArray] = []
        self._bias: list[FloatArray] = []
        for layer in model.layers:  # type: ignore[union-attr]
            self._weights.append(layer.lin.weight.detach().cpu().double().numpy().T.copy())
            b = layer.bias
            self._bias.append(np.zeros(0) if b is None else b.detach().cpu().double().numpy())
        # The features as sent, shared, not copied (float32 or float64 are read as they are;
        # widening float32 to float64 is exact, so a row widened where it is used is the row
        # a float64 copy of X held)
        xt = x.detach().cpu()
        if xt.dtype not in (torch.float32, torch.float64):
            xt = xt.double()
        self._x: npt.NDArray[np.floating] = xt.numpy()
        # Every layer's pre-activation for the unperturbed input, kept for the local updates.
        self._pre: list[FloatArray] = []
        h: npt.NDArray[np.floating] = self._x
        for i, weight in enumerate(self._weights):
            z = a_hat @ (_widened_product(h, weight) if i == 0 else h @ weight)
            if self._bias[i].size:
                z = z + self._bias[i]
            self._pre.append(z)
            h = np.maximum(z, 0.0)

    @property
    def logits(self) -> FloatArray:
        """Logits of every node for the unperturbed input, ``[n, C]`` float64."""
        return self._pre[-1]

    def scaled_row_logits(self, v: int, scale: float, rows: npt.NDArray[np.int64]) -> FloatArray:
        """Logits at ``rows`` when row ``v`` of ``x`` is multiplied by ``scale``.

        Args:
            v: The node whose features are scaled.
            scale: The factor, e.g. ``1 + Δ``.
            rows: Nodes whose logits are returned.

        Returns:
            ``[len(rows), C]`` float64; rows the change does not reach are the unperturbed
            logits.
        """
        return self._row_change_logits(v, (scale - 1.0) * self._row(v), rows)

    def replaced_row_logits(self, v: int, row: FloatArray,
                            rows: npt.NDArray[np.int64]) -> FloatArray:
        """Logits at ``rows`` when row ``v`` of ``x`` is replaced by ``row`` (float64).

        What an inference API that is sent features (not a scale) computes: the reference
        server's answer to a feature query (:mod:`graphleaks.models.remote_server`).
        """
        dh = np.asarray(row, dtype=np.float64).reshape(1, -1) - self._row(v)
        return self._row_change_logits(v, dh, rows)

    def _row(self, v: int) -> FloatArray:
        """Row ``v`` of ``x`` as a ``[1, F]`` float64 array."""
        return self._x[v:v + 1].astype(np.float64)

    def _row_change_logits(self, v: int, dh: FloatArray,
                           rows: npt.NDArray[np.int64]) -> FloatArray:
        """Logits at ``rows`` when row ``v`` of ``x`` changes by ``dh`` (``[1, F]``)."""
        out = self._pre[-1][rows].copy()
        reached = np.array([v], dtype=np.int64)
        last = len(self._weights) - 1
        for i, weight in enumerate(self._weights):
            dp = dh @ weight  # the bias cancels in a difference
            sub = self._reach[reached]
            cols = np.unique(sub.indices)
            if cols.size == 0:
                return out
            dz = np.asarray(sub[:, cols].T @ dp)
            if i == last:
                pos = np.searchsorted(cols, rows)
                pos = np.minimum(pos, cols.size - 1)
                hit = cols[pos] == rows
                out[hit] += dz[pos[hit]]
                return out
            z = self._pre[i][cols]
            dh = np.maximum(z + dz, 0.0) - np.maximum(z, 0.0)
            reached = cols
        return out


def _widened_product(x: npt.NDArray[np.floating], weight: FloatArray) -> FloatArray:
    """``x.astype(float64) @ weight``, widening ``ROWS_PER_BLOCK`` rows of ``x`` at a time."""
    if x.dtype == np.float64:
        return np.asarray(x @ weight)
    out = np.empty((x.shape[0], weight.shape[1]), dtype=np.float64)
    for start in range(0, x.shape[0], ROWS_PER_BLOCK):
        stop = start + ROWS_PER_BLOCK
        out[start:stop] = x[start:stop].astype(np.float64) @ weight
    return out
