"""A world package: worlds of any kind, a manifest naming every file by its sha256, and one digest for the whole.

A package is a folder laid out by kind, each kind a top-level folder of it:

- ``executable/``: executable world folders, as ``occubench synth executable`` writes them (``--worlds-dir``);
- ``occubench/``: an OccuBench-format data folder (``--data-dir`` of the ``occubench`` suite);
- ``awm/``: an AWM-format set (``--data-dir`` of the ``awm`` suite);
- ``workplace/``: workplace generation settings (``settings.json``: ``days``, ``seed``);

and, for people browsing it, a ``README.md`` and a ``LICENSE`` beside them.

Its manifest, ``occubench-package.json`` beside them, says what the package is (name, version, license, description,
the occubench versions it needs) and maps every file to its sha256. The package's digest is the sha256 of the
manifest in canonical form (keys sorted, no spaces, UTF-8), so it covers every byte of every file and nothing else:
the same files give the same digest on any machine, whatever their times, owners or modes, and a package keeps its
digest on every registry it is pushed to. On the wire a package is one tar file made as reproducibly (members
sorted, times, owners and modes fixed), its manifest first.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import tarfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from occubench.errors import ConfigError
from occubench.util.untrusted import MAX_FILE_BYTES, MAX_FILES, MAX_FOLDER_BYTES, folder_files, read_chunks

MANIFEST = "occubench-package.json"
#: Files a package may hold beside its kinds' folders, for the people who browse it (a Hub dataset card, the
#: license's text): part of the digest like any other file, read by no suite.
DOCUMENTS = ("README.md", "LICENSE")
#: The kinds of world a package may hold: each a top-level folder of it, and the suite it serves.
KINDS = {"executable": "executable", "occubench": "occubench", "awm": "awm", "workplace": "workplace"}
SCHEMA = 1
#: A name is ``[org/]name``, as registries name repositories; a version is a tag any registry takes.
_NAME = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)?")
_VERSION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: A package digest, its hex digits the group.
DIGEST = re.compile(r"sha256:([0-9a-f]{64})")


def is_version(text: str) -> bool:
    """Whether ``text`` is a version a package and every registry take (a tag, never a digest's)."""
    return bool(_VERSION.fullmatch(text)) and not text.startswith("sha256")
_TEXT_LIMIT = 4000  # license and description characters


@dataclass(frozen=True)
class Manifest:
    """What a package is, and its files by path (posix, relative to the package) with their sha256 hex."""

    name: str
    version: str
    kinds: tuple[str, ...]
    files: Mapping[str, str] = field(repr=False)
    license: str = ""
    description: str = ""
    #: A PEP 440 specifier of the occubench versions the package needs (">=0.1"); empty: any.
    requires_occubench: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "name": self.name, "version": self.version, "kinds": list(self.kinds),
                "license": self.license, "description": self.description,
                "requires_occubench": self.requires_occubench, "files": dict(sorted(self.files.items()))}

    def canonical(self) -> bytes:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of the canonical manifest: the package's identity."""
        return "sha256:" + hashlib.sha256(self.canonical()).hexdigest()

    @classmethod
    def from_bytes(cls, data: bytes, where: str) -> Manifest:
        """The manifest ``data`` holds; anything else is a :class:`ConfigError` naming ``where``."""
        try:
            value = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise ConfigError(f"{where}: not a package manifest ({exc})") from None
        if not isinstance(value, dict) or value.get("schema") != SCHEMA:
            raise ConfigError(f"{where}: not an occubench package manifest of schema {SCHEMA}")
        files = value.get("files")
        if not isinstance(files, dict) or not all(isinstance(v, str) and _SHA256.fullmatch(v) for v in files.values()):
            raise ConfigError(f"{where}: files: each package file's path must map to its sha256 (64 hex digits)")
        for path in files:
            check_path(path, where)
        kinds = value.get("kinds")
        if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
            raise ConfigError(f"{where}: kinds: a list of {', '.join(KINDS)}")
        texts = {key: value.get(key, "") for key in ("license", "description", "requires_occubench")}
        if not all(isinstance(text, str) and len(text) <= _TEXT_LIMIT for text in texts.values()):
            raise ConfigError(f"{where}: license, description and requires_occubench are strings of at most "
                              f"{_TEXT_LIMIT} characters")
        manifest = cls(name=value.get("name", ""), version=value.get("version", ""), kinds=tuple(kinds), files=files,
                       **texts)
        manifest.check(where)
        return manifest

    def check(self, where: str) -> None:
        """The manifest's fields are well-formed, and its kinds those its files hold."""
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ConfigError(f"{where}: name {self.name!r}: lower-case letters, digits and . _ -, optionally "
                              "org/name")
        if not isinstance(self.version, str) or not is_version(self.version):
            raise ConfigError(f"{where}: version {self.version!r}: letters, digits and . _ - (at most 128), not "
                              "starting with sha256")
        if set(self.kinds) != kinds_of(self.files) or list(self.kinds) != sorted(self.kinds):
            raise ConfigError(f"{where}: kinds {list(self.kinds)} are not the kinds its files hold "
                              f"({sorted(kinds_of(self.files))})")
        if self.requires_occubench:
            from packaging.specifiers import InvalidSpecifier, SpecifierSet

            try:
                SpecifierSet(self.requires_occubench)
            except InvalidSpecifier:
                raise ConfigError(f"{where}: requires_occubench {self.requires_occubench!r} is not a version "
                                  "specifier such as '>=0.1'") from None

    def supports(self, version: str) -> bool:
        """Whether occubench ``version`` is one the package needs."""
        from packaging.specifiers import SpecifierSet

        return not self.requires_occubench or SpecifierSet(self.requires_occubench).contains(version,
                                                                                             prereleases=True)


def check_path(path: str, where: str) -> None:
    """A package file's path: relative, posix, no ``..``, no empty or dot part, under a kind's folder."""
    parts = PurePosixPath(path).parts
    if not path or path.startswith("/") or "\\" in path or "\x00" in path or any(p in ("", ".", "..") for p in
                                                                                path.split("/")):
        raise ConfigError(f"{where}: {path!r} is not a safe relative path; a package holds none")
    if path not in DOCUMENTS and (parts[0] not in KINDS or len(parts) < 2):
        raise ConfigError(f"{where}: {path!r} is outside the kinds' folders ({', '.join(KINDS)}) and is not one of "
                          f"{', '.join(DOCUMENTS)}")


def kinds_of(paths: Mapping[str, str] | list[str]) -> set[str]:
    return {PurePosixPath(path).parts[0] for path in paths if path not in DOCUMENTS}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    for chunk in read_chunks(path):  # no link, no file past the limit: a package may come from anyone
        digest.update(chunk)
    return digest.hexdigest()


def describe(directory: Path, **fields: str) -> Manifest:
    """The manifest of the package folder ``directory``: its files as they are, its metadata from ``fields`` over
    those of an ``occubench-package.json`` it holds (whose file list is not read). A link, a file that is not
    regular, a file outside the kinds' folders or a folder past the limits is a :class:`ConfigError`."""
    if not directory.is_dir():
        raise ConfigError(f"{directory}: not a folder")
    found = folder_files(directory)
    meta: dict[str, Any] = {}
    if MANIFEST in found:
        try:
            raw = json.loads(b"".join(read_chunks(found.pop(MANIFEST))))
        except (ValueError, RecursionError) as exc:
            raise ConfigError(f"{directory / MANIFEST}: not JSON ({exc})") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{directory / MANIFEST}: not a JSON object")
        meta = {key: raw[key] for key in ("name", "version", "license", "description", "requires_occubench")
                if key in raw}
    meta.update({key: value for key, value in fields.items() if value is not None})
    for path in found:
        check_path(path, str(directory))
    if not kinds_of(list(found)):
        raise ConfigError(f"{directory}: no files under {', '.join(k + '/' for k in KINDS)}; a package holds worlds "
                          "in those folders")
    missing = [key for key in ("name", "version") if not meta.get(key)]
    if missing:
        raise ConfigError(f"{directory}: the package's {' and '.join(missing)} are not given: pass "
                          f"{' and '.join('--' + key for key in missing)}, or write them in {MANIFEST}")
    manifest = Manifest(name=meta["name"], version=meta["version"], kinds=tuple(sorted(kinds_of(list(found)))),
                        files={path: sha256_file(file) for path, file in found.items()},
                        **{key: meta.get(key, "") for key in ("license", "description", "requires_occubench")})
    manifest.check(str(directory))
    return manifest


def write_tar(directory: Path, manifest: Manifest, out: Path) -> None:
    """The package as one tar file, byte for byte the same for the same manifest and files."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as archive:
        _add(archive, MANIFEST, io.BytesIO(manifest.canonical() + b"\n"), len(manifest.canonical()) + 1)
        for path in sorted(manifest.files):
            file = directory / path
            with file.open("rb") as source:
                _add(archive, path, source, file.stat().st_size)


def _add(archive: tarfile.TarFile, name: str, source: Any, size: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode, info.uid, info.gid, info.uname, info.gname = size, 0, 0o644, 0, 0, "", ""
    archive.addfile(info, source)


def pack(directory: Path, out: Path, **fields: str) -> Manifest:
    """Write the package of ``directory`` to the tar file ``out``; its manifest."""
    manifest = describe(directory, **fields)
    if out.resolve().is_relative_to(directory.resolve()):
        raise ConfigError(f"--out {out}: inside the package folder {directory}; write the package elsewhere")
    write_tar(directory, manifest, out)
    return manifest


def unpack(tar: Path, dest: Path, where: str) -> Manifest:
    """Extract the package tar ``tar`` into the new folder ``dest`` and verify it (:func:`verify`). Only regular
    files at safe paths are written, within the limits of a world folder; anything else (a link, a device,
    ``../``, an absolute name) is a :class:`ConfigError` naming ``where``, and ``dest`` is removed."""
    dest.mkdir(parents=True)
    try:
        try:
            with tarfile.open(tar, "r:") as archive:
                for count, member in enumerate(_members(archive, where)):
                    if count >= MAX_FILES or member.size > MAX_FILE_BYTES:
                        raise ConfigError(f"{where}: {member.name!r} is past a package's limits ({MAX_FILES:,} "
                                          f"files, {MAX_FILE_BYTES >> 20} MB each)")
                    target = dest.joinpath(*PurePosixPath(member.name).parts)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    source = archive.extractfile(member)
                    assert source is not None  # a regular member has a payload
                    with source, open(target, "xb") as copy:
                        shutil.copyfileobj(source, copy, 1 << 20)
        except (tarfile.TarError, EOFError) as exc:
            raise ConfigError(f"{where}: not a package tar ({exc})") from None
        except FileExistsError as exc:
            raise ConfigError(f"{where}: {exc.filename} appears twice in the package") from None
        return verify(dest, where)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _members(archive: tarfile.TarFile, where: str) -> Iterator[tarfile.TarInfo]:
    total = 0
    for member in archive:
        if member.isdir():
            continue
        if not member.isreg():
            raise ConfigError(f"{where}: {member.name!r} is a link or a special file; a package holds regular "
                              "files only")
        if member.name != MANIFEST:
            check_path(member.name, where)
        total += member.size
        if total > MAX_FOLDER_BYTES:
            raise ConfigError(f"{where}: more than {MAX_FOLDER_BYTES >> 20:,} MB; a package holds no more")
        yield member


def verify(directory: Path, where: str, digest: str | None = None) -> Manifest:
    """The manifest of the package folder ``directory``, once every file it lists is there with its sha256 and
    no other file is (and, given ``digest``, the manifest's digest is it); else a :class:`ConfigError`."""
    found = folder_files(directory)
    if MANIFEST not in found:
        raise ConfigError(f"{where}: no {MANIFEST}; not an occubench world package")
    data = b"".join(read_chunks(found.pop(MANIFEST)))
    manifest = Manifest.from_bytes(data, f"{where}: {MANIFEST}")
    if digest is not None and manifest.digest != digest:
        raise ConfigError(f"{where}: the package's digest is {manifest.digest}, not {digest} as its reference "
                          "says; it was changed after it was published, or the reference is wrong")
    extra = sorted(set(found) - set(manifest.files))
    missing = sorted(set(manifest.files) - set(found))
    changed = sorted(path for path in set(found) & set(manifest.files)
                     if sha256_file(found[path]) != manifest.files[path])
    for what, paths in (("differ from their sha256 in the manifest", changed), ("are missing", missing),
                        ("are not in the manifest", extra)):
        if paths:
            listed = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
            raise ConfigError(f"{where}: {len(paths)} file(s) {what} ({listed}); the package was changed after it "
                              "was made")
    return manifest
