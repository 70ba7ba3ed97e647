"""One folder of a GitHub repository at a pinned commit, downloaded and verified file by file.

A benchmark's data (OccuBench's ``data/`` folder, Trainee-Bench's reference files) is never committed here: it is
fetched as the repository's archive at the pinned commit, one folder of it extracted, every file checked against a
sha256 manifest shipped with the package, and only then moved into place, so a run uses exactly the files the
published results were computed on, or stops with a :class:`ConfigError` saying why.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from http.client import HTTPException
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from occubench.errors import ConfigError
from occubench.util.untrusted import MAX_FILE_BYTES, MAX_FILES, MAX_FOLDER_BYTES, folder_files, read_chunks

if TYPE_CHECKING:
    from importlib.abc import Traversable  # importlib.resources.abc only from Python 3.11 on

#: The largest archive downloaded: far above any pinned repository's, far below a full disk.
MAX_ARCHIVE_BYTES = 2 << 30
_TIMEOUT_S = 60  # per socket operation, not for the whole download
_CHUNK = 1 << 16
_MAX_LISTED = 10  # names shown in an error before "and N more"


@dataclass(frozen=True)
class PinnedFolder:
    """A folder of ``repo`` at ``commit``, and the manifest its files must match."""

    name: str  #: what messages call it ("OccuBench data")
    repo: str  #: owner/name on GitHub
    commit: str
    folder: str  #: posix path inside the archive's top folder
    manifest: Traversable  #: JSON object: path relative to ``folder`` → sha256 hex
    command: str  #: the command that downloads it, named in errors
    url_variable: str  #: the environment variable that overrides the archive's URL
    skip_suffixes: tuple[str, ...] = ()  #: files of the folder left in the archive (the repository's own code)

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/archive/{self.commit}.tar.gz"

    def expected(self) -> dict[str, str]:
        manifest: dict[str, str] = json.loads(self.manifest.read_text(encoding="utf-8"))
        return manifest

    def problems(self, directory: Path) -> str:
        """What in ``directory`` differs from the pinned manifest, in one line; empty when nothing does."""
        return problems(directory, self.expected())

    def download(self, dest: Path, url: str | None = None) -> Path:
        """Fetch the archive (``url``, else ``$url_variable``, else GitHub's), verify the folder, and only then move
        it into ``dest``; nothing is downloaded when ``dest`` already holds it verified."""
        dest = Path(dest)
        url = url or os.environ.get(self.url_variable) or self.url
        if dest.exists() and not dest.is_dir():
            raise ConfigError(f"{dest} exists and is not a directory; choose another --dest")
        if dest.is_dir() and not self.problems(dest):
            print(f"{dest} already holds the verified {self.name}; nothing downloaded", file=sys.stderr)
            return dest
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            # Next to dest so the final moves are renames on one file system.
            work = tempfile.TemporaryDirectory(prefix=f".{dest.name}-download-", dir=dest.parent)
        except OSError as exc:
            raise ConfigError(f"cannot write next to {dest}: {exc}; choose another --dest") from exc
        with work as tmp:
            tarball = Path(tmp) / "archive.tar"
            staging = Path(tmp) / "folder"
            self._fetch(url, tarball)
            self._extract(tarball, staging, url)
            if found := self.problems(staging):
                raise ConfigError(
                    f"the data downloaded from {url} does not match the pinned checksums "
                    f"({found}); {dest} was left untouched"
                )
            _move_into(staging, dest)
        return dest

    def _fetch(self, url: str, target: Path) -> None:
        show_progress = sys.stderr.isatty()
        copied, last_report = 0, 0.0
        try:
            request = urllib.request.Request(url, headers={"User-Agent": "occubench"})
            with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response, target.open("wb") as out:
                if int(response.headers.get("Content-Length") or 0) > MAX_ARCHIVE_BYTES:
                    raise self._too_large(url)
                while chunk := response.read(_CHUNK):
                    copied += len(chunk)
                    if copied > MAX_ARCHIVE_BYTES:  # a server that sends more than it announced, or no length
                        raise self._too_large(url)
                    out.write(chunk)
                    if show_progress and time.monotonic() - last_report > 0.5:
                        last_report = time.monotonic()
                        print(f"\rdownloading {url}: {copied / 1e6:.1f} MB", end="", file=sys.stderr, flush=True)
        except urllib.error.HTTPError as exc:
            raise ConfigError(
                f"downloading {url} failed: HTTP {exc.code} {exc.reason}; "
                f"check the URL (`{self.command} --url`, or {self.url_variable})"
            ) from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError, HTTPException, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc  # ValueError: a malformed URL or Content-Length
            raise ConfigError(
                f"cannot download {url}: {reason}; check your network or proxy settings, "
                f"or point `{self.command} --url` or {self.url_variable} at a reachable copy"
            ) from exc
        finally:
            if show_progress and copied:  # final total, and end the progress line
                print(f"\rdownloading {url}: {copied / 1e6:.1f} MB", file=sys.stderr)

    def _too_large(self, url: str) -> ConfigError:
        return ConfigError(f"{url} is larger than {MAX_ARCHIVE_BYTES >> 20:,} MB; is it the "
                           f"{self._archive} (`{self.command} --url`, or {self.url_variable})?")

    @property
    def _archive(self) -> str:
        return f"{self.repo.rpartition('/')[2]} repository archive"

    def _extract(self, tarball: Path, staging: Path, url: str) -> None:
        """Write the regular files under ``<top>/<folder>/`` into ``staging``; refuse anything that could escape it
        or outgrow the limits of a data folder."""
        try:
            with tarfile.open(tarball, "r:*") as archive:
                members = archive.getmembers()
                for member in members:
                    name = PurePosixPath(member.name)
                    if name.is_absolute() or ".." in name.parts:
                        raise ConfigError(f"{url} contains an unsafe path {member.name!r}; refusing to extract it")
                tops = {PurePosixPath(m.name).parts[0] for m in members if PurePosixPath(m.name).parts}
                if len(tops) != 1:
                    raise ConfigError(
                        f"{url} should hold one top-level folder, found {len(tops)} "
                        f"({_listing(sorted(tops))}); is it the {self._archive}?"
                    )
                prefix = (tops.pop(), *PurePosixPath(self.folder).parts)
                written = total = 0
                for member in members:
                    parts = PurePosixPath(member.name).parts
                    if parts[:len(prefix)] != prefix or len(parts) == len(prefix) or member.isdir():
                        continue
                    if not member.isreg():
                        # Links and devices could point outside staging; the pinned folders have none.
                        raise ConfigError(
                            f"{url} contains {member.name!r}, which is not a regular file; refusing to extract it"
                        )
                    if member.name.endswith(self.skip_suffixes):
                        continue
                    written, total = written + 1, total + member.size
                    if member.size > MAX_FILE_BYTES or total > MAX_FOLDER_BYTES or written > MAX_FILES:
                        raise ConfigError(
                            f"{url}: {member.name!r} ({member.size:,} bytes) is past the limits of a data folder "
                            f"(a file at most {MAX_FILE_BYTES >> 20} MB, all at most {MAX_FOLDER_BYTES >> 20:,} MB "
                            f"in {MAX_FILES:,} files); refusing to extract it"
                        )
                    _write_member(archive, member, staging.joinpath(*parts[len(prefix):]), url)
        except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise ConfigError(f"{url} is not a readable tar archive ({exc}); check the URL") from exc
        if not written:
            raise ConfigError(f"{url} has no files under {'/'.join(prefix)}/; is it the {self._archive}?")


def build_manifest(directory: Path, paths: Iterable[str] | None = None) -> dict[str, str]:
    """Map relative posix paths to sha256 hex: every file under `directory`, or just `paths` that exist."""
    directory = Path(directory)
    if paths is None:
        names = list(folder_files(directory))
    else:
        names = [name for name in paths if os.path.lexists(directory / name)]  # a link is refused, not missing
    return {name: _sha256(directory / name) for name in sorted(names)}


def problems(directory: Path, expected: dict[str, str]) -> str:
    """Describe files of ``expected`` missing from ``directory`` or differing from it, in one line; empty when
    every one matches. Extra files (notes, results) are allowed."""
    actual = build_manifest(directory, expected)
    missing = [name for name in expected if name not in actual]
    changed = [name for name, digest in actual.items() if digest != expected[name]]
    parts = []
    if missing:
        parts.append(f"{len(missing)} of {len(expected)} files missing ({_listing(missing)})")
    if changed:
        parts.append(f"{len(changed)} of {len(expected)} files differ from the pinned checksums ({_listing(changed)})")
    return "; ".join(parts)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    for chunk in read_chunks(path):  # no link, no file past the limit (a data folder may come from anyone)
        digest.update(chunk)
    return digest.hexdigest()


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:_MAX_LISTED])
    return shown if len(names) <= _MAX_LISTED else f"{shown} and {len(names) - _MAX_LISTED} more"


def _write_member(archive: tarfile.TarFile, member: tarfile.TarInfo, target: Path, url: str) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        source = archive.extractfile(member)
        assert source is not None  # regular members always have a payload
        with source, target.open("wb") as out:
            shutil.copyfileobj(source, out, _CHUNK)
    except OSError as exc:  # a file and a folder of one name, a full disk
        raise ConfigError(f"cannot extract {member.name!r} of {url}: {exc.strerror or exc}") from exc


def _move_into(staging: Path, dest: Path) -> None:
    if not dest.exists():
        staging.rename(dest)  # one atomic step: dest is either absent or complete
        return
    # dest already has some of the data or user files: replace file by file, keep the rest.
    for source in sorted(p for p in staging.rglob("*") if p.is_file()):
        target = dest / source.relative_to(staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
