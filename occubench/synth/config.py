"""What both synthesis tracks are configured with: the output folder and the model that writes each stage.

Each track's settings extend :class:`SynthConfig` with their own fields and roles; like :class:`RunConfig` they come
from flags, a TOML file or Python, are checked on construction and keep keys as secrets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from occubench.config import Settings, with_roles

if TYPE_CHECKING:
    _SynthRoles = Settings
else:
    _SynthRoles = with_roles(Settings, ("synth",))


class SynthConfig(_SynthRoles):
    roles: ClassVar[tuple[str, ...]] = ("synth",)

    #: The folder the made worlds are written to; the synthesis keeps its work in ``<out>/synthesis/``.
    out: str
    synth_model: str | None = None
