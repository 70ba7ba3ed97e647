"""World packages on the Hugging Face Hub (``hf://OWNER/NAME@VERSION``), through the Hub's own client,
``huggingface_hub``.

A package is the dataset repository ``OWNER/NAME``: its files as they are (browsable on the Hub), its manifest at
the root, one commit per version on the default branch, tagged with the version and with ``sha256-HEX``. The server
is the one ``HF_ENDPOINT`` names (huggingface.co without it); credentials are the client's own business (``HF_TOKEN``,
or the token ``hf auth login`` stored): none goes through this module.

What a repository serves is anyone's: its listing (and, to resolve a version, the manifest's size from a HEAD
request) is checked against a package's limits before anything is downloaded; each file is streamed into a new
plain file and stopped past the size announced; the copy is verified against the manifest and the reference's
digest before it is handed back. Every request runs under the operation's deadline (:mod:`occubench.hub.deadline`).
"""

from __future__ import annotations

import io
import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO

from occubench.errors import ConfigError
from occubench.hub.deadline import Deadline, current
from occubench.hub.package import MANIFEST, Manifest, check_path, verify
from occubench.hub.refs import Reference
from occubench.hub.registry import Registry, Version, taken
from occubench.util.redact import redact_url
from occubench.util.untrusted import MAX_FILE_BYTES, MAX_FILES, MAX_FOLDER_BYTES

REPO_TYPE = "dataset"
#: Files the Hub writes into every repository by itself: not the package's, neither fetched nor refused.
HUB_FILES = (".gitattributes",)
_DIGEST_TAG = "sha256-"
_DEFAULT_ENDPOINT = "https://huggingface.co"
_READ_TIMEOUT = 300  # seconds without a byte: a server that stops answering (the deadline bounds the whole)


class HubRegistry(Registry):
    """``hf://`` references: dataset repositories of the Hub ``HF_ENDPOINT`` names."""

    def push(self, package: Path, manifest: Manifest, reference: Reference, *, force: bool = False) -> str | None:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        version, digest_tag = _version_of(reference, manifest), manifest.digest.replace(":", "-")
        where = str(reference)
        api, repo = _api(), reference.location
        with _errors(where, "read the tags"):
            tags = _tags(api, repo)
        if tags is None:
            with _errors(where, "create the dataset repository"):
                api.create_repo(repo, repo_type=REPO_TYPE, exist_ok=True)
            tags = {}
        replaced = None
        if version in tags:
            try:
                held = _digest_at(api, reference, tags, tags[version])
            except ConfigError as exc:
                held = f"no package ({exc})"
            if held == manifest.digest and not force:  # pushed before: only its digest tag may be missing
                if digest_tag not in tags:
                    with _errors(where, "tag the package"):
                        api.create_tag(repo, tag=digest_tag, revision=tags[version], repo_type=REPO_TYPE)
                return None
            if held != manifest.digest:
                if not force:
                    raise taken(where, version, held)
                replaced = held
            # Forced, a version is written again whatever it holds.
        # The commit holds exactly the package: its files, its manifest in canonical form (the folder's own may be a
        # draft of metadata only), and no file a previous version had and this one has not.
        wanted = {MANIFEST, *manifest.files}
        with _errors(where, "list the files"):
            current = api.list_repo_files(repo, repo_type=REPO_TYPE)
        operations: list[Any] = [CommitOperationAdd(path_in_repo=MANIFEST,
                                                    path_or_fileobj=manifest.canonical() + b"\n")]
        operations += [CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(package.joinpath(*path.split("/"))))
                       for path in sorted(manifest.files)]
        operations += [CommitOperationDelete(path_in_repo=path) for path in sorted(current)
                       if path not in wanted and path not in HUB_FILES]
        with _errors(where, "upload the package"):
            commit = api.create_commit(repo, operations=operations, repo_type=REPO_TYPE,
                                       commit_message=f"{manifest.name} {version} ({manifest.digest})")
            if version in tags:
                api.delete_tag(repo, tag=version, repo_type=REPO_TYPE)
            api.create_tag(repo, tag=version, revision=commit.oid, repo_type=REPO_TYPE)
            if digest_tag not in tags:  # one there names a commit of the same files already
                api.create_tag(repo, tag=digest_tag, revision=commit.oid, repo_type=REPO_TYPE)
        return replaced

    def resolve(self, reference: Reference) -> str:
        api, where = _api(), str(reference)
        # An API call first: it fails at once where a download retries for long.
        with _errors(where, "read the version"):
            commit = api.repo_info(reference.location, repo_type=REPO_TYPE, revision=reference.tag).sha
            tags = _tags(api, reference.location) or {}
        return _digest_at(api, reference, tags, commit)  # by the digest tag a push writes beside it: no download

    def fetch(self, reference: Reference, dest: Path) -> None:
        from huggingface_hub.hf_api import RepoFile

        api, where, repo = _api(), str(reference), reference.location
        with _errors(where, "list the files"):
            # Pinned to the commit the tag names now: a tag moved meanwhile cannot mix two versions' files.
            commit = api.repo_info(repo, repo_type=REPO_TYPE, revision=reference.tag).sha
            # One entry past what a package may hold is enough to refuse it: an endless listing is not read on.
            entries = islice(api.list_repo_tree(repo, repo_type=REPO_TYPE, revision=commit, recursive=True),
                             MAX_FILES + len(HUB_FILES) + 1)
            listing = [entry for entry in entries if isinstance(entry, RepoFile)]
        files = _checked_listing(listing, where)
        dest.mkdir(parents=True)
        try:
            for path, size in files.items():
                target = dest.joinpath(*path.split("/"))
                try:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    out = open(target, "xb")
                except OSError as exc:  # a path listed twice, or as a file and as a folder
                    raise ConfigError(f"{where}: cannot write {path} ({exc.strerror}); the repository's listing "
                                      "is not a package's") from None
                with out, _errors(where, f"download {path}"):
                    _download(reference, path, commit, size, out)
            verify(dest, where, reference.digest)
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)
            raise

    def versions(self, reference: Reference) -> list[Version]:
        api, where = _api(), str(reference)
        with _errors(where, "read the tags"):
            tags = _tags(api, reference.location)
        if tags is None:
            raise ConfigError(f"{where}: no dataset repository {reference.location} on {_endpoint()}, or it is "
                              f"private and no token opens it; {_CHECK}")
        found = [Version(tag, _digest_at(api, reference, tags, commit)) for tag, commit in tags.items()
                 if not tag.startswith(_DIGEST_TAG)]
        return sorted(found, key=lambda v: _version_key(v.version))  # the Hub keeps no date of a tag


_CHECK = ("for a private or gated repository set HF_TOKEN or run `hf auth login`; HF_ENDPOINT chooses the server "
          f"({_DEFAULT_ENDPOINT} without it)")


def _endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "").rstrip("/") or _DEFAULT_ENDPOINT


def _api() -> Any:
    try:
        from huggingface_hub import HfApi, set_client_factory  # noqa: F401  (1.0 or later: an httpx session)
    except ImportError:
        raise ConfigError("hf:// world packages need huggingface_hub 1.0 or later: pip install 'occubench[hub]'") \
            from None
    _session()
    # The client reads HF_ENDPOINT once, when it is imported; read here, one set after that is used too.
    return HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None)


def _session() -> Any:
    """The client every Hub call goes through (huggingface_hub's one session), under the operation's deadline: each
    request's timeouts within the time left, each connection it opens or reuses handed to the deadline."""
    from huggingface_hub import get_session

    client = get_session()
    hooks = client.event_hooks
    if _on_request not in hooks["request"]:
        client.event_hooks = {"request": [*hooks["request"], _on_request],
                              "response": [*hooks["response"], _on_response]}
    return client


def _on_request(request: Any) -> None:
    if (ends := current()) is None:
        return
    left = ends.left()  # past the deadline: no new request (nor a retry of the client's)
    request.extensions["timeout"] = {key: left if value is None else min(value, left)
                                     for key, value in request.extensions.get("timeout", {}).items()}

    def trace(event: str, info: dict[str, Any]) -> None:
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            _watch_stream(ends, info.get("return_value"))

    request.extensions["trace"] = trace


def _on_response(response: Any) -> None:
    if (ends := current()) is not None:  # a connection reused from before the operation
        _watch_stream(ends, response.extensions.get("network_stream"))


def _watch_stream(ends: Deadline, stream: Any) -> None:
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        ends.watch(sock)


def _download(reference: Reference, path: str, revision: str, size: int, out: BinaryIO) -> int:
    """Write the file ``path`` of the repository at ``revision`` to ``out``, through the client's session (the Hub's
    own download, which a Xet store would take past our bounds, is not used); a :class:`ConfigError` once the server
    sends more than the ``size`` it announced."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import build_hf_headers, hf_raise_for_status

    endpoint = os.environ.get("HF_ENDPOINT") or None
    url = hf_hub_url(reference.location, path, repo_type=REPO_TYPE, revision=revision, endpoint=endpoint)
    written = 0
    with _session().stream("GET", url, headers={**build_hf_headers(), "Accept-Encoding": "identity"},
                              follow_redirects=True, timeout=_READ_TIMEOUT) as response:
        hf_raise_for_status(response)
        for chunk in response.iter_bytes(1 << 20):
            written += len(chunk)
            if written > size:
                raise ConfigError(f"{reference}: {path}: the server sent more than the {size:,} bytes it announced; "
                                  "stopped, nothing installed")
            out.write(chunk)
    return written


def _tags(api: Any, repo: str) -> dict[str, str] | None:
    """The repository's tags and the commit each names; None when there is no such repository (or none we may see)."""
    from huggingface_hub.utils import HfHubHTTPError, RepositoryNotFoundError

    try:
        refs = api.list_repo_refs(repo, repo_type=REPO_TYPE)
    except RepositoryNotFoundError:
        return None
    except HfHubHTTPError as exc:
        if getattr(exc.response, "status_code", None) == 404:  # what a mirror (olah) answers for no repository
            return None
        raise
    return {tag.name: tag.target_commit for tag in refs.tags}


def _digest_at(api: Any, reference: Reference, tags: dict[str, str], commit: str) -> str:
    """The package digest of ``commit``: the Hub's word through its ``sha256-HEX`` tag, else its manifest's."""
    for tag, target in tags.items():
        if target == commit and tag.startswith(_DIGEST_TAG):
            return "sha256:" + tag.removeprefix(_DIGEST_TAG)
    return _manifest_at(reference, commit).digest


def _manifest_at(reference: Reference, commit: str) -> Manifest:
    """The manifest of ``commit``, downloaded once the Hub says its size (a HEAD request) is a manifest's."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    where, endpoint = f"{reference}: {MANIFEST}", os.environ.get("HF_ENDPOINT") or None
    with _errors(str(reference), f"download {MANIFEST}"):
        size = get_hf_file_metadata(hf_hub_url(reference.location, MANIFEST, repo_type=REPO_TYPE, revision=commit,
                                               endpoint=endpoint), endpoint=endpoint, timeout=_READ_TIMEOUT).size
        if size is None or size > MAX_FILE_BYTES:
            raise ConfigError(f"{where}: the Hub says it has {'no size' if size is None else f'{size:,} bytes'}; a "
                              f"manifest has at most {MAX_FILE_BYTES >> 20} MB; not downloaded")
        data = io.BytesIO()
        _download(reference, MANIFEST, commit, size, data)
    return Manifest.from_bytes(data.getvalue(), where)


def _checked_listing(listing: list[Any], where: str) -> dict[str, int]:
    """The paths to fetch of a revision's file listing, sorted, and the size the listing says each has; a
    :class:`ConfigError` for an unsafe path or a listing past the limits, before anything is downloaded."""
    paths: dict[str, int] = {}
    total = 0
    for entry in listing:
        path, size = entry.path, entry.size or 0
        if path in HUB_FILES:
            continue
        if path != MANIFEST:
            check_path(path, where)
        if size > MAX_FILE_BYTES:
            raise ConfigError(f"{where}: {path} has {size:,} bytes; a package file has at most "
                              f"{MAX_FILE_BYTES >> 20} MB")
        total += size
        paths[path] = size
    if len(paths) > MAX_FILES or total > MAX_FOLDER_BYTES:
        raise ConfigError(f"{where}: {len(paths):,} files, {total >> 20:,} MB; a package holds at most "
                          f"{MAX_FILES:,} files and {MAX_FOLDER_BYTES >> 20:,} MB")
    if MANIFEST not in paths:
        raise ConfigError(f"{where}: no {MANIFEST} in the repository; not an occubench world package")
    return dict(sorted(paths.items()))


def _version_of(reference: Reference, manifest: Manifest) -> str:
    if reference.version is None:
        raise ConfigError(f"{reference}: name the version to publish (@VERSION)")
    if reference.digest and reference.digest != manifest.digest:
        raise ConfigError(f"{reference}: the package's digest is {manifest.digest}, not the reference's")
    return reference.version


def _version_key(version: str) -> tuple[int, Any, str]:
    from packaging.version import InvalidVersion
    from packaging.version import Version as Pep440

    try:
        return 0, Pep440(version), version
    except InvalidVersion:
        return 1, None, version


@contextmanager
def _errors(where: str, action: str) -> Iterator[None]:
    """The client's failures, as a :class:`ConfigError` naming ``where``, the server and what to check."""
    from huggingface_hub.utils import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    endpoint = _endpoint()
    try:
        yield
    except ConfigError:
        raise
    except GatedRepoError:
        raise ConfigError(f"{where}: the repository on {endpoint} is gated: accept its conditions on the Hub, then "
                          f"{_CHECK}") from None
    except RevisionNotFoundError:
        raise ConfigError(f"{where}: no such version (tag) in the repository on {endpoint}; list its versions with "
                          "the reference without @VERSION") from None
    except RepositoryNotFoundError:
        raise ConfigError(f"{where}: not found on {endpoint} (no such dataset repository or version, or the "
                          f"repository is private and no token opens it); {_CHECK}") from None
    except HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", None)
        if status in (401, 403):
            raise ConfigError(f"{where}: {endpoint} refused to let us {action} ({status}); {_CHECK}") from None
        raise ConfigError(f"{where}: cannot {action} on {endpoint}: {_said(exc, endpoint)}") from None
    except Exception as exc:  # noqa: BLE001 - whatever else the client meets (network, disk) fails the operation
        # A download's "not in the local cache either" (a FileNotFoundError) says less than the error it wraps.
        cause = exc.__cause__ if isinstance(exc, FileNotFoundError) and exc.__cause__ else exc
        raise ConfigError(f"{where}: cannot {action} on {endpoint} ({type(cause).__name__}: "
                          f"{_said(cause, endpoint)}); check HF_ENDPOINT and that the server is reachable") from None


def _said(exc: BaseException, endpoint: str) -> str:
    """The first line of what the client said, the endpoint's credentials (if any) masked."""
    text = (str(exc).strip().splitlines() or [""])[0][:300]
    return text.replace(endpoint, redact_url(endpoint) or endpoint)
