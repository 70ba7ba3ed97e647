"""What every registry backend does, each through the standard client of its kind (never a server of ours).

A backend stores a package under two tags: its version, and ``sha256-HEX`` for its digest. It never decides what
is trusted: :func:`occubench.hub.install.pull` checks every file of what a backend fetched against the manifest and
the manifest against the digest, whatever the registry said.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from occubench.errors import ConfigError
from occubench.hub.package import DIGEST, Manifest
from occubench.hub.refs import Reference


@dataclass(frozen=True)
class Version:
    """A version a registry holds: its tag, and the package digest the registry says it has."""

    version: str
    digest: str


class Registry(ABC):
    """One backend, for references of one scheme."""

    @abstractmethod
    def push(self, package: Path, manifest: Manifest, reference: Reference, *, force: bool = False) -> str | None:
        """Publish the package folder ``package`` (verified: its files are ``manifest``'s) as
        ``reference.version`` and as ``sha256-HEX``. A version that holds another package already is refused
        (:func:`taken`) unless ``force``: a citation needs versions that stay. Returns what ``force`` moved the
        version away from (a package digest, or what else it held), or None."""

    @abstractmethod
    def resolve(self, reference: Reference) -> str:
        """The package digest ``reference``'s version names now (the registry's word; checked at fetch)."""

    @abstractmethod
    def fetch(self, reference: Reference, dest: Path) -> None:
        """Write the files of the package ``reference.digest`` names into the new folder ``dest``: regular files at
        safe paths only (:func:`occubench.hub.package.check_path`), the manifest among them."""

    @abstractmethod
    def versions(self, reference: Reference) -> list[Version]:
        """The versions the package of ``reference.location`` has, oldest first where the registry knows."""


def taken(where: str, version: str, held: str) -> ConfigError:
    """The refusal to publish over ``version``, which holds ``held`` (another package's digest, or what else)."""
    what = f"the package {held}" if DIGEST.fullmatch(held) else held
    return ConfigError(f"{where}: version {version} holds {what} already; a published version stays what results "
                       f"cite: publish this package as another version, or push it with --force to move {version} "
                       "to it (runs that cited what it holds then refuse to resume)")


#: Each scheme's backend, imported on first use (each brings its own client library).
BACKENDS = {"oci": "occubench.hub.oci:OciRegistry", "git": "occubench.hub.git:GitRegistry",
            "hf": "occubench.hub.hf:HubRegistry"}


def registry_for(reference: Reference) -> Registry:
    module, _, name = BACKENDS[reference.scheme].partition(":")
    backend: type[Registry] = getattr(importlib.import_module(module), name)
    return backend()
