"""The store of installed world packages: one folder per package digest, content-addressed, each there only once
every file was checked against its manifest, the manifest against the digest, and every world against its suite's
validation in the sandbox (:mod:`occubench.hub.validate`).

Layout, under :func:`store_root` (the user's cache, ``worlds/``):

- ``sha256/<hex>/``: an installed package, its kinds' folders and its manifest; its name is its digest;
- ``tmp/``: staging folders, where a package is fetched and validated before one atomic rename moves it into place,
  so that a folder under ``sha256/`` is always whole, and a failed install leaves nothing there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import occubench
from occubench.errors import ConfigError
from occubench.hub.deadline import deadline
from occubench.hub.package import DIGEST, MANIFEST, Manifest, verify
from occubench.hub.refs import Reference
from occubench.util.paths import user_cache_dir
from occubench.util.untrusted import read_file

if TYPE_CHECKING:
    from occubench.hub.registry import Version

_MAX_LISTED = 20  # problems named in one refusal


def store_root() -> Path:
    return user_cache_dir() / "worlds"


@dataclass(frozen=True)
class Installed:
    """An installed package: its digest, manifest, and folder (holding its kinds' folders)."""

    digest: str
    manifest: Manifest
    path: Path

    def kind_folder(self, kind: str) -> Path:
        return self.path / kind


def _folder(digest: str) -> Path:
    match = DIGEST.fullmatch(digest)
    if match is None:
        raise ConfigError(f"{digest!r}: a package digest is sha256: and 64 lower-case hex digits")
    return store_root() / "sha256" / match.group(1)


def installed(digest: str) -> Installed | None:
    """The installed package of ``digest``, or None. Its files were checked when it was installed; here only its
    manifest is read back and must have that digest."""
    folder = _folder(digest)
    if not (folder / MANIFEST).is_file():
        return None
    try:
        manifest = Manifest.from_bytes(read_file(folder / MANIFEST), str(folder / MANIFEST))
    except ConfigError:
        return None
    return Installed(digest, manifest, folder) if manifest.digest == digest else None


def list_installed() -> list[Installed]:
    root = store_root() / "sha256"
    names = sorted(entry.name for entry in root.iterdir()) if root.is_dir() else []
    found = (installed(f"sha256:{name}") for name in names if DIGEST.fullmatch(f"sha256:{name}"))
    return [package for package in found if package is not None]


@contextlib.contextmanager
def staging() -> Iterator[Path]:
    """A fresh path in the store's ``tmp/`` (on the store's file system, so that :func:`install` moves it in with one
    rename), not yet made: a backend's fetch or :func:`occubench.hub.package.unpack` makes it. Whatever is left
    there when the block ends is removed."""
    tmp = store_root() / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    holder = Path(tempfile.mkdtemp(dir=tmp))  # private (0700): no other user swaps files under validation
    try:
        yield holder / "package"
    finally:
        shutil.rmtree(holder, ignore_errors=True)


def install(folder: Path, where: str, digest: str | None = None) -> Installed:
    """Install the package whose files the staging folder ``folder`` holds (from :func:`staging`), once verified
    (and of ``digest``, when given), made for this occubench, and every world valid; ``where`` names it in every
    error (a reference, a file). Anything else is a :class:`ConfigError` naming ``where`` and every problem found,
    and then ``folder`` is removed and nothing is installed."""
    try:
        manifest = _supported(verify(folder, where, digest), where)
        if installed(manifest.digest) is None:  # an installed one of this digest was validated: the same files
            _validate(folder, manifest, where)
        return _move_in(folder, manifest)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _validate(folder: Path, manifest: Manifest, where: str) -> None:
    from occubench.hub.validate import validate_package

    try:
        problems = validate_package(folder, manifest)
    except ConfigError as exc:  # no sandbox for its code
        raise ConfigError(f"{where}: {exc}") from None
    if problems:
        listed = problems[:_MAX_LISTED] + ([f"and {len(problems) - _MAX_LISTED} more"]
                                           if len(problems) > _MAX_LISTED else [])
        raise ConfigError(f"{where}: not installed: {len(problems)} problem(s) with its worlds:\n"
                          + "\n".join(f"  {problem}" for problem in listed))


def _supported(manifest: Manifest, where: str) -> Manifest:
    if not manifest.supports(occubench.__version__):
        raise ConfigError(f"{where}: the package needs occubench {manifest.requires_occubench}, and this is "
                          f"occubench {occubench.__version__}; use an occubench it supports")
    return manifest


def _move_in(folder: Path, manifest: Manifest) -> Installed:
    target = _folder(manifest.digest)
    target.parent.mkdir(parents=True, exist_ok=True)
    if (done := installed(manifest.digest)) is not None:  # installed by another process while this one validated
        shutil.rmtree(folder, ignore_errors=True)
        return done
    if target.exists():  # a broken entry (a manifest of another digest, or none): replaced, never merged into
        _drop(target)
    try:
        os.rename(folder, target)
    except OSError:
        # Another install of the same package won the race: its folder holds the same files.
        if (done := installed(manifest.digest)) is None:
            raise
        shutil.rmtree(folder, ignore_errors=True)
        return done
    return Installed(manifest.digest, manifest, target)


def _drop(folder: Path) -> None:
    """Remove an installed folder: first moved out of ``sha256/`` at once, so no reader sees it half removed."""
    tmp = store_root() / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    doomed = Path(tempfile.mkdtemp(dir=tmp)) / folder.name
    try:
        os.rename(folder, doomed)
    except FileNotFoundError:
        pass  # removed meanwhile
    finally:
        shutil.rmtree(doomed.parent, ignore_errors=True)


def remove(digest: str) -> bool:
    """Uninstall the package of ``digest``; whether it was installed."""
    folder = _folder(digest)
    if not folder.exists():
        return False
    _drop(folder)
    return True


def resolve(reference: Reference) -> str:
    """The digest of the package ``reference`` names: its own, or the one its version's tag names now, asked of the
    registry without downloading the package (the registry's word: :func:`pull` checks it against the files)."""
    if reference.digest is not None:
        return reference.digest
    from occubench.hub.registry import registry_for

    with deadline(str(reference)):
        digest = registry_for(reference).resolve(reference)
    if not DIGEST.fullmatch(digest):
        raise ConfigError(f"{reference}: the registry names its package {digest[:80]!r}, not a package digest")
    return digest


def pull(reference: Reference, digest: str | None = None) -> Installed:
    """The package ``reference`` names (``digest``, when it was resolved already), installed: at once when its digest
    is in the store, else fetched from its registry, verified against that digest and validated first. The
    registry's word is never trusted: the digest it resolves a version to is checked against the files it serves."""
    from occubench.hub.registry import registry_for

    where = str(reference)
    with staging() as folder:
        with deadline(where):  # one for resolving and fetching; validating in the sandbox has its own limits
            digest = digest or resolve(reference)
            if (done := installed(digest)) is not None:
                _supported(done.manifest, where)
                return done
            registry_for(reference).fetch(reference.at(digest), folder)
        return install(folder, where, digest)


def versions(reference: Reference) -> list[Version]:
    """The versions the registry holds of ``reference``'s package, asked within the deadline of one operation."""
    from occubench.hub.registry import registry_for

    with deadline(str(reference)):
        return registry_for(reference).versions(reference)
