"""Matplotlib figures as inline HTML: a headless backend, and PNGs embedded as base64.

Shared by :mod:`.html` and :mod:`.risk_sections`, which both draw figures.
"""

from __future__ import annotations

import base64
import html
import io
import os
from typing import Any


def png(fig: Any) -> str:
    """``fig`` as base64 PNG text (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    # one layout pass and one draw: bbox_inches="tight" on top of tight_layout() drew the
    # figure twice more, and a layout engine adds a dry draw inside savefig
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def figure(fig: Any, caption: str, alt: str) -> str:
    """``fig`` as an HTML ``<figure>`` with an inline PNG, a caption and alt text."""
    return (f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{png(fig)}">'
            f"<figcaption>{caption}</figcaption></figure>")


def subplots(*args: Any, **kwargs: Any) -> Any:
    """``pyplot().subplots``; :func:`png` lays the figure out once before saving it."""
    return pyplot().subplots(*args, **kwargs)


def pyplot() -> Any:
    """``matplotlib.pyplot``, on the headless Agg backend unless the user chose one."""
    import matplotlib

    # Agg (no display needed) unless the user chose a backend, e.g. Jupyter's inline one
    if not os.environ.get("MPLBACKEND") and "inline" not in matplotlib.get_backend():
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
