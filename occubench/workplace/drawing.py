"""The images of our days, drawn from their day file's data when the day is built: the same spec, the same bytes."""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Mapping
from typing import Any


def draw(spec: Mapping[str, Any]) -> bytes:
    """The PNG of ``spec``: ``{"kind": "form", "title": ..., "fields": [[label, value], ...]}``, a filled-in paper
    form as a scan shows it, each value handwritten on its line. A ``ValueError`` for any other kind."""
    if spec.get("kind") != "form":
        raise ValueError(f"images: unknown kind {spec.get('kind')!r} (known: form)")
    return _form(json.dumps(dict(spec), sort_keys=True))


@functools.lru_cache(maxsize=64)  # a day is built twice when it is validated, and once per episode
def _form(key: str) -> bytes:
    from matplotlib.figure import Figure  # only for a day with an image: matplotlib takes a second to import
    from matplotlib.lines import Line2D

    spec = json.loads(key)
    fields = spec["fields"]
    height = 1.3 + 0.55 * len(fields)
    figure = Figure(figsize=(6.4, height), facecolor="#f3efe2")
    figure.text(0.5, 1 - 0.5 / height, spec["title"], ha="center", va="center", fontsize=17, fontweight="bold")
    for row, (label, value) in enumerate(fields):
        y = 1 - (1.25 + 0.55 * row) / height
        figure.text(0.05, y, f"{label}:", va="center", fontsize=12)
        figure.text(0.52, y, str(value), va="center", fontsize=15, style="italic", color="#1f3d8c")
        figure.add_artist(Line2D([0.5, 0.95], [y - 0.18 / height] * 2, color="#8a8a8a", linewidth=0.8))
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80, facecolor=figure.get_facecolor(), metadata={"Software": None})
    return buffer.getvalue()
