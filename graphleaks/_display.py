"""How figures are rounded for display: one rule for Markdown, HTML and the terminal.

Reports keep full precision in ``report.json``; every human-facing rendering rounds through
:func:`fmt_figure`, so a claimed ε of ``0.9999999999994884`` reads ``1`` everywhere and the
same figure never reads differently in two places.
"""

from __future__ import annotations

import math

__all__ = ["fmt_figure"]

#: Decimals of a figure below 1 in magnitude (rates, AUCs, advantages).
DECIMALS = 3
#: Significant digits of a figure of magnitude 1 or more (ε bounds, budgets).
SIGNIFICANT = 3


def fmt_figure(x: float | int | None) -> str:
    """A figure rounded for display.

    The rule: a figure that rounds to below 1 in magnitude keeps 3 decimals (``0.674``,
    ``0.050``: table columns stay aligned); any other keeps 3 significant digits, never
    fewer than its integer digits and without trailing zeros (``1``, ``2.72``, ``12.3``,
    ``1235``). ``None`` and NaN read ``–``, infinities ``∞`` and ``-∞``.

    Args:
        x: The figure.

    Returns:
        The text.

    Example:
        >>> [fmt_figure(v) for v in (0.9999999999994884, 0.6742, 0.05, 2.71828, 12.345, 1234.5)]
        ['1', '0.674', '0.050', '2.72', '12.3', '1234']
        >>> fmt_figure(float("inf")), fmt_figure(None), fmt_figure(-0.0714)
        ('∞', '–', '-0.071')
    """
    if x is None:
        return "–"
    v = float(x)
    if math.isnan(v):
        return "–"
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if abs(round(v, DECIMALS)) < 1.0:
        text = f"{v:.{DECIMALS}f}"
        return "0.000" if text == "-0.000" else text
    digits = len(str(int(abs(v))))
    decimals = max(0, SIGNIFICANT - digits)
    text = f"{v:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
