"""The OCI backend against a real registry on loopback (tests/hub/oci_server.py): a package goes up and comes back
byte for byte under its version and its digest; a version is not silently replaced; what the registry serves is
checked (a tampered blob, a hostile layer), and nothing is written outside the destination."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.hub.oci import ARTIFACT_TYPE, DIGEST_ANNOTATION, EMPTY_TYPE, LAYER_TYPE, OciRegistry
from occubench.hub.package import MANIFEST, Manifest, pack, verify
from occubench.hub.refs import Reference, parse
from occubench.hub.registry import Version
from tests.hub.oci_server import OciServer, oci_server, running
from tests.hub.packages import files_of, make_package

__all__ = ["oci_server"]  # the fixture, used by name



def reference(server: OciServer, version: str = "1.0") -> Reference:
    return parse(f"oci://{server.host}/acme/claims:{version}")


def test_round_trip_by_version_and_by_digest(oci_server: OciServer, tmp_path: Path) -> None:
    manifest = make_package(tmp_path / "pkg")
    ref = reference(oci_server)
    registry = OciRegistry()
    registry.push(tmp_path / "pkg", manifest, ref)

    assert registry.versions(Reference("oci", ref.location)) == [Version("1.0", manifest.digest)]
    assert registry.resolve(ref) == manifest.digest
    by_digest = Reference("oci", ref.location, digest=manifest.digest)
    assert registry.resolve(by_digest) == manifest.digest

    for name, pinned in (("by-version", ref), ("by-digest", by_digest)):
        dest = tmp_path / "fetched" / name
        registry.fetch(pinned, dest)
        assert verify(dest, name, manifest.digest) == manifest
        fetched = files_of(dest)
        assert json.loads(fetched.pop(MANIFEST)) == manifest.to_dict()
        assert fetched == files_of(tmp_path / "pkg")
    assert sorted(p.name for p in (tmp_path / "fetched").iterdir()) == ["by-digest", "by-version"]  # no temp left


def test_pack_is_reproducible_and_a_same_push_is_no_change(oci_server: OciServer, tmp_path: Path) -> None:
    first = make_package(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b", copy_function=shutil.copy)  # other mtimes, not copied
    for path in (tmp_path / "b").rglob("*"):
        os.utime(path, (1_000_000, 1_000_000))
        path.chmod(0o755 if path.is_dir() else 0o600)
    one = pack(tmp_path / "a", tmp_path / "one.tar", name="acme/claims", version="1.0")
    two = pack(tmp_path / "b", tmp_path / "two.tar", name="acme/claims", version="1.0")
    assert one.digest == two.digest == first.digest
    assert (tmp_path / "one.tar").read_bytes() == (tmp_path / "two.tar").read_bytes()

    ref = reference(oci_server)
    OciRegistry().push(tmp_path / "a", one, ref)
    OciRegistry().push(tmp_path / "b", two, ref)  # the same package again: nothing to refuse
    assert OciRegistry().versions(ref) == [Version("1.0", one.digest)]
    layer = "sha256:" + hashlib.sha256((tmp_path / "one.tar").read_bytes()).hexdigest()
    assert oci_server.blob_file(layer).read_bytes() == (tmp_path / "one.tar").read_bytes()  # the layer is that tar


def test_a_version_is_not_replaced_unless_forced(oci_server: OciServer, tmp_path: Path) -> None:
    old = make_package(tmp_path / "old")
    new = make_package(tmp_path / "new", world="loan_underwriting")
    ref = reference(oci_server)
    registry = OciRegistry()
    registry.push(tmp_path / "old", old, ref)

    with pytest.raises(ConfigError, match=f"1\\.0 holds the package {old.digest} already.*--force") as refused:
        registry.push(tmp_path / "new", new, ref)
    assert str(ref) in str(refused.value)
    assert registry.resolve(ref) == old.digest

    assert registry.push(tmp_path / "new", new, ref, force=True) == old.digest
    assert registry.resolve(ref) == new.digest  # the tag moved
    registry.fetch(ref.at(old.digest), tmp_path / "old-again")  # the old package stays fetchable by its digest
    assert verify(tmp_path / "old-again", "old", old.digest) == old


def test_a_tampered_blob_is_refused_and_nothing_is_written(oci_server: OciServer, tmp_path: Path) -> None:
    manifest = pack_and_push(oci_server, tmp_path)
    layer = "sha256:" + hashlib.sha256((tmp_path / "package.tar").read_bytes()).hexdigest()
    stored = oci_server.blob_file(layer)
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0x01
    stored.write_bytes(bytes(data))

    target = tmp_path / "install"
    target.mkdir()
    for pinned in (reference(oci_server), reference(oci_server).at(manifest.digest)):
        with pytest.raises(ConfigError, match="sha256 is not its digest: tampered or corrupted") as refused:
            OciRegistry().fetch(pinned, target / "dest")
        assert str(pinned) in str(refused.value)
        assert list(target.iterdir()) == []


def pack_and_push(server: OciServer, tmp_path: Path) -> Manifest:
    manifest = make_package(tmp_path / "pkg")
    pack(tmp_path / "pkg", tmp_path / "package.tar", name="acme/claims", version="1.0")
    OciRegistry().push(tmp_path / "pkg", manifest, reference(server))
    return manifest


def push_artifact(server: OciServer, tmp_path: Path, tar: bytes, *, annotations: dict[str, str] | None = None,
                  size: int | None = None, tag: str = "1.0") -> None:
    """What a hostile publisher can push with oras itself: any layer, any descriptor, any annotations."""
    import oras.provider

    client = oras.provider.Registry(hostname=server.host, insecure=True)
    work = tmp_path / "artifact"
    work.mkdir(exist_ok=True)
    container = client.get_container(f"{server.host}/acme/claims:{tag}")
    blobs = []
    for name, body, media_type in (("config", b"{}", EMPTY_TYPE), ("layer", tar, LAYER_TYPE)):
        (work / name).write_bytes(body)
        blob = {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(body).hexdigest(), "size": len(body)}
        assert client.upload_blob(str(work / name), container, blob).status_code in (200, 201, 202)
        blobs.append(blob)
    config, layer = blobs
    if size is not None:
        layer = {**layer, "size": size}
    oci = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
           "artifactType": ARTIFACT_TYPE, "config": config, "layers": [layer],
           "annotations": {DIGEST_ANNOTATION: "sha256:" + "0" * 64} if annotations is None else annotations}
    assert client.upload_manifest(oci, container).status_code == 201


def hostile_tar(outside: Path, kind: str) -> bytes:
    members: list[tuple[tarfile.TarInfo, bytes]] = []

    def regular(name: str, body: bytes = b"pwned\n") -> None:
        info = tarfile.TarInfo(name)
        info.size = len(body)
        members.append((info, body))

    regular(MANIFEST, b"{}\n")
    if kind == "symlink":  # a link to the folder outside, then a file written through it
        link = tarfile.TarInfo("executable/w/escape")
        link.type, link.linkname = tarfile.SYMTYPE, str(outside)
        members.append((link, b""))
        regular("executable/w/escape/pwned.txt")
    elif kind == "dotdot":
        regular("executable/../../pwned.txt")
        regular("../pwned.txt")
    else:
        regular(str(outside / "pwned.txt"))
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for info, body in members:
            archive.addfile(info, io.BytesIO(body) if info.isreg() else None)
    return out.getvalue()


@pytest.mark.parametrize("kind", ["symlink", "dotdot", "absolute"])
def test_a_hostile_layer_is_refused_and_nothing_is_written_outside(oci_server: OciServer, tmp_path: Path,
                                                                    kind: str) -> None:
    target = tmp_path / "install"
    target.mkdir()
    dest = target / "dest"
    push_artifact(oci_server, tmp_path, hostile_tar(target, kind))
    before = sorted(p.name for p in tmp_path.iterdir())

    with pytest.raises(ConfigError, match=str(reference(oci_server)).replace(".", r"\.")):
        OciRegistry().fetch(reference(oci_server), dest)
    assert list(target.iterdir()) == []  # neither dest nor a file beside it, nor the temporary tar
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not (tmp_path / "pwned.txt").exists()


def test_what_is_not_an_occubench_package_is_refused(oci_server: OciServer, tmp_path: Path) -> None:
    push_artifact(oci_server, tmp_path, b"not a tar", annotations={})
    with pytest.raises(ConfigError, match="not an occubench package"):
        OciRegistry().resolve(reference(oci_server))
    assert OciRegistry().versions(reference(oci_server)) == []
    with pytest.raises(ConfigError, match="holds an artifact that is not an occubench package"):
        OciRegistry().push(tmp_path / "pkg", make_package(tmp_path / "pkg"), reference(oci_server))


def test_a_layer_past_the_size_limit_is_not_downloaded(oci_server: OciServer, tmp_path: Path) -> None:
    push_artifact(oci_server, tmp_path, b"small", size=3 << 30)
    with pytest.raises(ConfigError, match="bytes a package.s tar may have; not downloaded"):
        OciRegistry().fetch(reference(oci_server), tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_missing_versions_repositories_and_registries(oci_server: OciServer, tmp_path: Path) -> None:
    pack_and_push(oci_server, tmp_path)
    with pytest.raises(ConfigError, match=r"has no acme/claims:2\.0 \(HTTP 404\)"):
        OciRegistry().resolve(reference(oci_server, "2.0"))
    with pytest.raises(ConfigError, match=r"has no acme/claims:2\.0"):
        OciRegistry().fetch(reference(oci_server, "2.0"), tmp_path / "dest")
    assert not (tmp_path / "dest").exists()
    with pytest.raises(ConfigError, match="has no repository acme/other"):
        OciRegistry().versions(parse(f"oci://{oci_server.host}/acme/other", pinned=False))

    import socket

    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{unused.getsockname()[1]}"
        with pytest.raises(ConfigError, match=f"cannot reach the OCI registry {closed}"):
            OciRegistry().resolve(parse(f"oci://{closed}/acme/claims:1.0"))


def test_a_registry_that_wants_credentials_says_where_they_come_from(oci_server: OciServer, tmp_path: Path) -> None:
    manifest = make_package(tmp_path / "pkg")
    with running(tmp_path / "locked", wants_credentials=True) as locked:  # oci_server's HOME: no Docker config
        ref = parse(f"oci://{locked.host}/acme/claims:1.0")
        for attempt in (lambda: OciRegistry().push(tmp_path / "pkg", manifest, ref), lambda: OciRegistry().resolve(ref),
                        lambda: OciRegistry().versions(ref)):
            with pytest.raises(ConfigError, match=f"{locked.host} refused .*docker login {locked.host}"):
                attempt()
    assert list((tmp_path / "home").iterdir()) == []  # no login happened: nothing was written to HOME
