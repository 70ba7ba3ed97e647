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

from occubench.hub.package import Manifest
from occubench.hub.refs import Reference


@dataclass(frozen=True)
class Version:
    """A version a registry holds: its tag, and the package digest the registry says it has."""

    version: str
    digest: str


class Registry(ABC):
    """One backend, for references of one scheme."""

    @abstractmethod
    def push(self, package: Path, manifest: Manifest, reference: Reference, *, force: bool = False) -> None:
        """Publish the package folder ``package`` (verified: its files are ``manifest``'s) as
        ``reference.version`` and as ``sha256-HEX``. A version that holds another package already is refused
        (a :class:`ConfigError`) unless ``force``: a citation needs versions that stay."""

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


#: Each scheme's backend, imported on first use (each brings its own client library).
BACKENDS = {"oci": "occubench.hub.oci:OciRegistry", "git": "occubench.hub.git:GitRegistry",
            "hf": "occubench.hub.hf:HubRegistry"}


def registry_for(reference: Reference) -> Registry:
    module, _, name = BACKENDS[reference.scheme].partition(":")
    backend: type[Registry] = getattr(importlib.import_module(module), name)
    return backend()
