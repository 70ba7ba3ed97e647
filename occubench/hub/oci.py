"""World packages in any OCI registry (``oci://HOST[:PORT]/NAME:VERSION``: ghcr.io, Docker Hub, Harbor, a
``registry`` of one's own), through oras, the OCI project's client for artifacts that are not images.

A package is one OCI artifact in the repository ``NAME``: an empty config and a single layer, the package's
reproducible tar (:func:`occubench.hub.package.write_tar`); the manifest's annotations name the package's digest,
name and version. Every push tags it twice, ``VERSION`` and ``sha256-HEX`` (the package's digest).

Credentials are oras's to find where Docker's ecosystem keeps them (``~/.docker/config.json`` and its credential
helpers, written by ``docker login``); we never log in, which would write them to disk. What a registry serves is
checked here: the layer's sha256 and size against its descriptor, and the files against the package's manifest.
"""

from __future__ import annotations

import hashlib
import inspect
import ipaddress
import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urljoin, urlsplit

from occubench.errors import ConfigError
from occubench.hub.deadline import current
from occubench.hub.package import DIGEST, Manifest, unpack, write_tar
from occubench.hub.refs import Reference
from occubench.hub.registry import Registry, Version, taken
from occubench.util.untrusted import MAX_FILE_BYTES, MAX_FILES, MAX_FOLDER_BYTES

ARTIFACT_TYPE = "application/vnd.occubench.worlds.v1"
LAYER_TYPE = "application/vnd.occubench.worlds.package.v1.tar"
MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
EMPTY_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY = b"{}"
DIGEST_ANNOTATION = "org.occubench.package.digest"
#: The largest tar of a package: its files (:data:`~occubench.util.untrusted.MAX_FOLDER_BYTES` at most) and manifest,
#: and per member a header, a PAX header for a long name (a path has at most 4,096 bytes) and padding, under 8 kB,
#: then the end. A layer said to be larger is refused before a byte of it is downloaded, and a download stops at
#: the size its descriptor says.
MAX_BLOB_BYTES = MAX_FOLDER_BYTES + MAX_FILE_BYTES + (MAX_FILES + 1) * 8192 + 10240
_MAX_DOCUMENT_BYTES = 4 << 20  # a manifest (registries take 4 MB at most) or a page of tags
_MAX_TAGS = 10_000
_TIMEOUT = (30, 300)  # connect, read (seconds): a registry that stops answering is an error, not a hang


class OciRegistry(Registry):
    def push(self, package: Path, manifest: Manifest, reference: Reference, *, force: bool = False) -> str | None:
        if not reference.version:
            raise ConfigError(f"{reference}: names no version to publish (oci://HOST/NAME:VERSION)")
        remote = _Remote(reference)
        current = remote.manifest(reference.version)
        replaced = None
        if current is not None and (held := _annotated_digest(current)) != manifest.digest:
            replaced = held or "an artifact that is not an occubench package"
            if not force:
                raise taken(str(reference), reference.version, replaced)
        with tempfile.TemporaryDirectory(prefix="occubench-oci-") as tmp:
            tar, config = Path(tmp) / "package.tar", Path(tmp) / "config.json"
            write_tar(package, manifest, tar)
            config.write_bytes(EMPTY)
            layer, empty = _descriptor(tar, LAYER_TYPE), _descriptor(config, EMPTY_TYPE)
            remote.upload(config, empty)
            remote.upload(tar, layer)
            oci = {"schemaVersion": 2, "mediaType": MANIFEST_TYPE, "artifactType": ARTIFACT_TYPE, "config": empty,
                   "layers": [layer],
                   "annotations": {DIGEST_ANNOTATION: manifest.digest, "org.occubench.package.name": manifest.name,
                                   "org.opencontainers.image.version": manifest.version,
                                   "org.opencontainers.image.title": manifest.name}}
            # The digest's tag first: a version never names a package its digest cannot fetch.
            for tag in (reference.at(manifest.digest).digest_tag, reference.version):
                assert tag is not None
                remote.put_manifest(oci, tag)
        return replaced

    def resolve(self, reference: Reference) -> str:
        remote = _Remote(reference)
        return _package_digest(remote.require(reference.tag), str(reference))

    def fetch(self, reference: Reference, dest: Path) -> None:
        where = str(reference)
        if dest.exists():
            raise ConfigError(f"{dest}: exists already; {where} is fetched into a new folder")
        remote = _Remote(reference)
        oci = remote.require(reference.tag)
        expected = reference.digest or _package_digest(oci, where)
        layer = _layer(oci, where)
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".occubench-oci-", dir=dest.parent) as tmp:
            tar = Path(tmp) / "package.tar"
            remote.download(layer, tar)
            manifest = unpack(tar, dest, where)
        if manifest.digest != expected:
            shutil.rmtree(dest, ignore_errors=True)
            raise ConfigError(f"{where}: the registry served the package {manifest.digest}, not {expected}; it was "
                              "changed after it was published")

    def versions(self, reference: Reference) -> list[Version]:
        remote = _Remote(reference)
        found = []
        for tag in remote.tags():
            oci = None if tag.startswith("sha256-") else remote.manifest(tag)
            digest = _annotated_digest(oci) if oci is not None else None
            if digest:  # other artifacts may share the repository
                found.append(Version(tag, digest))
        return found


def _annotated_digest(oci: dict[str, Any]) -> str | None:
    """The package digest an OCI manifest's annotation names, if it names one."""
    annotations = oci.get("annotations")
    digest = annotations.get(DIGEST_ANNOTATION) if isinstance(annotations, dict) else None
    return digest if isinstance(digest, str) and DIGEST.fullmatch(digest) else None


def _package_digest(oci: dict[str, Any], where: str) -> str:
    digest = _annotated_digest(oci)
    if digest is None:
        raise ConfigError(f"{where}: not an occubench package (its OCI manifest has no {DIGEST_ANNOTATION} "
                          "annotation)")
    return digest


def _layer(oci: dict[str, Any], where: str) -> dict[str, Any]:
    """The package layer's descriptor, once it is one we can fetch."""
    layers = oci.get("layers")
    if oci.get("artifactType") != ARTIFACT_TYPE or not isinstance(layers, list) or len(layers) != 1 or \
            not isinstance(layers[0], dict) or layers[0].get("mediaType") != LAYER_TYPE:
        raise ConfigError(f"{where}: not an occubench package (an OCI artifact of type {ARTIFACT_TYPE} with one "
                          f"{LAYER_TYPE} layer)")
    layer = layers[0]
    size = layer.get("size")
    if not isinstance(layer.get("digest"), str) or not DIGEST.fullmatch(layer["digest"]) or \
            not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ConfigError(f"{where}: the package layer's descriptor has no sha256 digest or size")
    if size > MAX_BLOB_BYTES:
        raise ConfigError(f"{where}: the package is {size:,} bytes, past the {MAX_BLOB_BYTES:,} bytes a package's "
                          "tar may have; not downloaded")
    return layer


def _descriptor(path: Path, media_type: str) -> dict[str, Any]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as source:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return {"mediaType": media_type, "digest": "sha256:" + digest.hexdigest(), "size": size}


def _is_loopback(host: str) -> bool:
    name = urlsplit(f"//{host}").hostname or ""
    try:
        return name == "localhost" or ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _client(host: str, where: str) -> Any:
    """An oras client of ``host`` that fails at once and never hangs."""
    try:
        from oras.provider import Registry as OrasClient
        from requests.adapters import HTTPAdapter
        from urllib3.connection import HTTPConnection, HTTPSConnection
        from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
    except ImportError:
        raise ConfigError(f"{where}: OCI registries need oras: pip install 'occubench[hub]'") from None

    class Watched(HTTPConnection):
        def connect(self) -> None:
            super().connect()
            if (ends := current()) is not None:  # its reads end when the operation's time is up
                ends.watch(self.sock)

    class WatchedTls(HTTPSConnection):
        connect = Watched.connect

    class Pool(HTTPConnectionPool):
        ConnectionCls = Watched

    class TlsPool(HTTPSConnectionPool):
        ConnectionCls = WatchedTls

    undecorated = inspect.unwrap(OrasClient.do_request)

    class Client(OrasClient):
        def do_request(self, *args: Any, **kwargs: Any) -> Any:
            # oras retries every failure, a refused login too, for two minutes: one answer is enough to report.
            return undecorated(self, *args, **kwargs)

    class Adapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": Pool, "https": TlsPool}

        def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:  # through HTTPS_PROXY: watched the same
            manager = super().proxy_manager_for(proxy, **kwargs)
            manager.pool_classes_by_scheme = {"http": Pool, "https": TlsPool}
            return manager

        def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:  # requests has no session-wide timeout
            ends = current()
            left = ends.left() if ends is not None else _TIMEOUT[1]
            kwargs["timeout"] = (min(_TIMEOUT[0], left), min(_TIMEOUT[1], left))
            return super().send(request, *args, **kwargs)

    # Plain HTTP to this machine's own registry only; anywhere else the registry must speak TLS.
    client = Client(hostname=host, insecure=_is_loopback(host))
    for prefix in ("http://", "https://"):
        client.session.mount(prefix, Adapter())
    return client


class _Remote:
    """One repository of one registry, through an oras client; every failure a :class:`ConfigError` saying which
    registry and what to check."""

    def __init__(self, reference: Reference) -> None:
        self.where = str(reference)
        self.host, _, self.name = reference.location.partition("/")
        self.client = _client(self.host, self.where)
        self.container = self.client.get_container(f"{self.host}/{self.name}")
        self.client.auth.load_configs(self.container)  # Docker's config: where `docker login` keeps credentials
        self.base = f"{self.client.prefix}://{self.host}/v2/{self.name}"

    @contextmanager
    def _answers(self, what: str) -> Iterator[None]:
        import requests
        import urllib3

        try:
            yield
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:  # urllib3's: from a raw read
            raise ConfigError(f"{self.where}: cannot reach the OCI registry {self.host} to {what} "
                              f"({type(exc).__name__}); check the host, the port and that it is up") from None
        except ValueError as exc:  # oras's word for a 401 it could not answer (or an upload the registry did not open)
            raise ConfigError(f"{self.where}: the OCI registry {self.host} refused to {what} ({exc}); "
                              f"{self._credentials}") from None

    @property
    def _credentials(self) -> str:
        return (f"credentials come from Docker's config: `docker login {self.host}` (or `oras login`) stores them "
                "in ~/.docker/config.json or its credential helper")

    def _request(self, method: str, url: str, what: str, **kwargs: Any) -> Any:
        with self._answers(what):
            response = self.client.do_request(url, method, **kwargs)
        if response.status_code in (401, 403):
            response.close()
            raise ConfigError(f"{self.where}: the OCI registry {self.host} refused to {what} (HTTP "
                              f"{response.status_code}); {self._credentials}")
        if response.status_code >= 300 and response.status_code != 404:
            response.close()
            raise ConfigError(f"{self.where}: the OCI registry {self.host} answered HTTP {response.status_code} to "
                              f"{what}")
        return response

    def _json(self, response: Any, what: str) -> Any:
        """The JSON document of ``response`` (a manifest, a page of tags), read up to a bound."""
        with response, self._answers(what):
            body = response.raw.read(_MAX_DOCUMENT_BYTES + 1, decode_content=True)
        try:
            return json.loads(body) if len(body) <= _MAX_DOCUMENT_BYTES else None
        except (ValueError, RecursionError):
            return None

    def manifest(self, tag: str) -> dict[str, Any] | None:
        """The OCI manifest ``tag`` names, or None when there is no such tag."""
        what = f"get the manifest of {self.name}:{tag}"
        response = self._request("GET", f"{self.base}/manifests/{tag}", what, headers={"Accept": MANIFEST_TYPE},
                                 stream=True)
        if response.status_code == 404:
            response.close()
            return None
        value = self._json(response, what)
        if not isinstance(value, dict) or value.get("schemaVersion") != 2:
            raise ConfigError(f"{self.where}: {self.name}:{tag} is not an OCI manifest (of at most "
                              f"{_MAX_DOCUMENT_BYTES >> 20} MB); not an occubench package")
        return value

    def require(self, tag: str) -> dict[str, Any]:
        oci = self.manifest(tag)
        if oci is None:
            raise ConfigError(f"{self.where}: the OCI registry {self.host} has no {self.name}:{tag} (HTTP 404); check "
                              "the name and the version")
        return oci

    def tags(self) -> list[str]:
        what = f"list the tags of {self.name}"
        url: str | None = f"{self.base}/tags/list"
        tags: list[str] = []
        while url and len(tags) < _MAX_TAGS:
            response = self._request("GET", url, what, stream=True)
            if response.status_code == 404:
                response.close()
                raise ConfigError(f"{self.where}: the OCI registry {self.host} has no repository {self.name} (HTTP "
                                  "404)")
            following = response.links.get("next", {}).get("url")
            answer = self._json(response, what)
            page = (answer.get("tags") or []) if isinstance(answer, dict) else None  # null: all tags deleted
            if not isinstance(page, list) or not all(isinstance(tag, str) for tag in page):
                raise ConfigError(f"{self.where}: the OCI registry {self.host} did not answer a list of tags")
            tags += page
            url = urljoin(url, following) if page and following else None
        return tags

    def upload(self, path: Path, descriptor: dict[str, Any]) -> None:
        what = f"take a blob of {self.name}"
        with self._answers(what):
            response = self.client.upload_blob(str(path), self.container, descriptor)
        if response.status_code not in (200, 201, 202):
            self._refused(response.status_code, what)

    def put_manifest(self, oci: dict[str, Any], tag: str) -> None:
        what = f"tag {self.name}:{tag}"
        with self._answers(what):
            response = self.client.upload_manifest(oci, self.client.get_container(f"{self.host}/{self.name}:{tag}"))
        if response.status_code not in (200, 201, 202):
            self._refused(response.status_code, what)

    def _refused(self, status: int, what: str) -> NoReturn:
        hint = self._credentials if status in (401, 403) else "check that the repository takes pushes"
        raise ConfigError(f"{self.where}: the OCI registry {self.host} refused to {what} (HTTP {status}); {hint}")

    def download(self, layer: dict[str, Any], out: Path) -> None:
        """The blob ``layer`` describes, into the new file ``out``, once its bytes are those its digest names."""
        what = f"send the blob {layer['digest']}"
        response = self._request("GET", f"{self.base}/blobs/{layer['digest']}", what, stream=True)
        digest, size = hashlib.sha256(), 0
        with response, out.open("xb") as copy:
            if response.status_code == 404:
                raise ConfigError(f"{self.where}: the OCI registry {self.host} has lost the blob {layer['digest']} "
                                  "(HTTP 404)")
            with self._answers(what):
                for chunk in response.iter_content(1 << 20):
                    size += len(chunk)
                    if size > layer["size"]:
                        break
                    digest.update(chunk)
                    copy.write(chunk)
        if size != layer["size"] or "sha256:" + digest.hexdigest() != layer["digest"]:
            raise ConfigError(f"{self.where}: the registry served a blob whose sha256 is not its digest: tampered or "
                              f"corrupted (blob {layer['digest']}); nothing was installed")
