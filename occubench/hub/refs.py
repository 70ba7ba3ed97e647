"""References to world packages: which registry, which package, which version or digest.

- ``oci://HOST[:PORT]/NAME[:VERSION|@sha256:HEX]``: a repository of any OCI registry (``oci://ghcr.io/acme/claims:1.2``);
- ``git+URL[@VERSION|@sha256:HEX]``: a git repository, a tag per version (``git+https://github.com/acme/claims.git@1.2``,
  ``git+ssh://git@host/acme/claims.git@1.2``, ``git+file:///srv/claims.git@1.2``);
- ``hf://OWNER/NAME[@VERSION|@sha256:HEX]``: a Hugging Face Hub dataset repository, a tag per version.

A digest is always the package's own (:attr:`occubench.hub.package.Manifest.digest`), the same on every registry:
a paper cites one digest however many mirrors hold the package. Registries find a package by digest through a
second tag, ``sha256-HEX``, which every push writes beside the version's. Credentials never go in a reference:
each registry's client finds them where its ecosystem keeps them (Docker's config, git's credential helpers, the
Hugging Face token).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from occubench.errors import ConfigError
from occubench.hub.package import DIGEST, is_version

SCHEMES = ("oci", "git", "hf")
_OCI_NAME = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*")
_HF_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")
_GIT_SCHEMES = ("https", "http", "ssh", "git", "file")


@dataclass(frozen=True)
class Reference:
    """A parsed reference: ``scheme``, ``location`` (the registry and the package's name in it), and a
    ``version`` or a ``digest`` (or neither, to list a package's versions)."""

    scheme: str
    location: str
    version: str | None = None
    digest: str | None = None

    def __str__(self) -> str:
        prefix = "git+" if self.scheme == "git" else f"{self.scheme}://"
        if self.digest:
            return f"{prefix}{self.location}@{self.digest}"
        if self.version:
            return f"{prefix}{self.location}{':' if self.scheme == 'oci' else '@'}{self.version}"
        return prefix + self.location

    @property
    def digest_tag(self) -> str | None:
        """The tag a registry holds the package of :attr:`digest` under."""
        return self.digest.replace(":", "-") if self.digest else None

    @property
    def tag(self) -> str:
        """The tag to fetch: the digest's when there is one, else the version's."""
        tag = self.digest_tag or self.version
        if tag is None:
            raise ConfigError(f"{self}: names no version or digest (add :VERSION for OCI, @VERSION otherwise, or "
                              "@sha256:...)")
        return tag

    def at(self, digest: str) -> Reference:
        """The same package, pinned to ``digest``."""
        return Reference(self.scheme, self.location, self.version, digest)


def parse(text: str, *, pinned: bool = True, flag: str = "--worlds") -> Reference:
    """The reference ``text``; ``pinned``: it must name a version or a digest. A malformed one is a
    :class:`ConfigError` naming ``flag`` and saying the forms."""
    reference = _parse(text.strip(), flag)
    if pinned and reference.version is None and reference.digest is None:
        raise ConfigError(f"{flag} {text!r}: names no version or digest (add :VERSION for OCI, @VERSION otherwise, "
                          "or @sha256:...)")
    return reference


def _parse(text: str, flag: str) -> Reference:
    forms = ("oci://HOST/NAME:VERSION, git+URL@VERSION or hf://OWNER/NAME@VERSION (a digest: @sha256:HEX in place "
             "of the version)")
    if any(ord(c) < 0x21 or c in "\\\x7f" for c in text):
        raise ConfigError(f"{flag} {text!r}: a reference holds no spaces or control characters")
    if text.startswith("git+"):
        return _git(text[4:], flag, forms)
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in ("oci", "hf"):
        raise ConfigError(f"{flag} {text!r}: not a package reference; the forms are {forms}")
    location, digest = _split_digest(rest, flag)
    version = None
    if scheme == "oci":
        host, slash, name = location.partition("/")
        if digest is None and ":" in name:
            name, _, version = name.rpartition(":")
        if not slash or not host or "@" in host or not _OCI_NAME.fullmatch(name):
            raise ConfigError(f"{flag} {text!r}: an OCI reference is oci://HOST[:PORT]/NAME[:VERSION], its name "
                              "lower-case (no credentials: they come from Docker's config)")
        location = f"{host}/{name}"
    else:
        if digest is None and "@" in location:
            location, _, version = location.rpartition("@")
        if not _HF_NAME.fullmatch(location):
            raise ConfigError(f"{flag} {text!r}: a Hugging Face reference is hf://OWNER/NAME[@VERSION]")
    _check_version(text, version, flag)
    return Reference(scheme, location, version, digest)


def _git(url: str, flag: str, forms: str) -> Reference:
    location, digest = _split_digest(url, flag)
    version = None
    path_start = location.find("/", location.find("://") + 3) if "://" in location else -1
    at = location.rfind("@")
    if digest is None and at > path_start >= 0:  # an @ in the path's last part is the version's (ssh's user@ is not)
        location, version = location[:at], location[at + 1:]
    parts = urlsplit(location)
    if parts.scheme not in _GIT_SCHEMES or (parts.scheme != "file" and not parts.hostname) or not parts.path.strip("/"):
        raise ConfigError(f"{flag} git+{url!r}: a git reference is git+URL[@VERSION] with an https, ssh, git or "
                          f"file URL; the forms are {forms}")
    if parts.password is not None or (parts.username and parts.scheme in ("https", "http")):
        raise ConfigError(f"{flag}: the git URL carries credentials; give them to git's credential helper "
                          "instead (a reference is written in every result)")
    _check_version(location, version, flag)
    return Reference("git", location, version, digest)


def _split_digest(text: str, flag: str) -> tuple[str, str | None]:
    head, at, tail = text.rpartition("@")
    if at and tail.startswith("sha256:"):
        if not DIGEST.fullmatch(tail):
            raise ConfigError(f"{flag}: @{tail}: a digest is sha256: and 64 lower-case hex digits")
        return head, tail
    return text, None


def _check_version(text: str, version: str | None, flag: str) -> None:
    if version is not None and not is_version(version):
        raise ConfigError(f"{flag} {text!r}: version {version!r}: letters, digits and . _ - (at most 128)")
