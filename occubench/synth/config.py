"""What both synthesis tracks are configured with: the output folder and the model that writes each stage.

Each track's settings extend :class:`SynthConfig` with their own fields and roles; like :class:`RunConfig` they come
from flags, a TOML file or Python, are checked on construction and keep keys as secrets.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, SecretStr

from occubench.config import Settings


class SynthConfig(Settings):
    roles: ClassVar[tuple[str, ...]] = ("synth",)

    #: The folder the made worlds are written to; the synthesis keeps its work in ``<out>/synthesis/``.
    out: str
    synth_model: str | None = None
    synth_api_key: SecretStr | None = None
    synth_base_url: str | None = None
    synth_params: dict[str, Any] = Field(default_factory=dict)
