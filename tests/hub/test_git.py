"""The git backend against a real git daemon on loopback (tests/hub/git_server.py): round trips by version and by
digest, versions that stay unless forced, and hostile or tampered repositories, which leave nothing on disk."""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from occubench.errors import ConfigError
from occubench.hub.git import GitRegistry
from occubench.hub.package import MANIFEST, Manifest, describe, verify
from occubench.hub.refs import parse
from occubench.hub.registry import Version
from occubench.util.untrusted import MAX_FILE_BYTES
from tests.hub.git_server import GitServer, git, serve_git  # noqa: F401  (serve_git: the git_server fixture)
from tests.hub.packages import files_of, make_package


def everything(folder: Path) -> set[str]:
    """Every path under ``folder``, links included (not followed)."""
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*")}


def hostile_commit(work: Path, entries: list[tuple[str, str, bytes | str]], url: str, tags: list[str]) -> None:
    """Push, with plain git, a commit whose tree holds ``entries`` (mode, path, content or an object id for a
    submodule) to ``url`` as ``tags``: what anyone with write access to a repository can make. The trees are made
    with ``git mktree``, which takes any name (``..``, ``.git``) that a checkout or ``git add`` would refuse."""
    repo = work / f"hostile-{len(list(work.glob('hostile-*')))}.git"
    git("init", "--quiet", "--bare", str(repo))
    root: dict[str, Any] = {}
    for mode, path, content in entries:
        *folders, name = path.split("/")
        node = root
        for folder in folders:
            node = node.setdefault(folder, {})
        if isinstance(content, bytes):
            (work / "blob").write_bytes(content)
            content = git("hash-object", "-w", str(work / "blob"), cwd=repo).strip()
        node[name] = (mode, "commit" if mode == "160000" else "blob", content)

    def tree(node: dict[str, Any]) -> str:
        lines = [f"040000 tree {tree(item)}\t{name}" if isinstance(item, dict) else
                 f"{item[0]} {item[1]} {item[2]}\t{name}" for name, item in node.items()]
        return git("mktree", cwd=repo, stdin="".join(line + "\n" for line in lines)).strip()

    commit = git("commit-tree", tree(root), "-m", "hostile", cwd=repo).strip()
    git("push", "--quiet", "--force", url, *(f"{commit}:refs/tags/{tag}" for tag in tags), cwd=repo)


def package_entries(folder: Path, manifest: Manifest) -> list[tuple[str, str, bytes | str]]:
    return [("100644", MANIFEST, manifest.canonical()),
            *(("100644", path, (folder / path).read_bytes()) for path in manifest.files)]


def test_round_trip_by_version_and_by_digest(git_server: GitServer, tmp_path: Path) -> None:
    manifest = make_package(tmp_path / "pkg")
    reference = parse(f"git+{git_server.repository('claims.git')}@1.0")
    registry = GitRegistry()
    registry.push(tmp_path / "pkg", manifest, reference)
    registry.push(tmp_path / "pkg", manifest, reference)  # the same package again: nothing to change

    assert registry.versions(reference) == [Version("1.0", manifest.digest)]
    assert registry.resolve(reference) == manifest.digest
    by_digest = parse(f"git+{git_server.url('claims.git')}@{manifest.digest}")
    registry.fetch(reference, tmp_path / "by-version")
    registry.fetch(by_digest, tmp_path / "by-digest")
    expected = {**files_of(tmp_path / "pkg"), MANIFEST: manifest.canonical() + b"\n"}
    for dest in ("by-version", "by-digest"):
        assert files_of(tmp_path / dest) == expected
        assert verify(tmp_path / dest, dest).digest == manifest.digest

    # Browsable: the tags' tree is the package's files as they are, both tags on one commit.
    served = git_server.root / "claims.git"
    assert set(git("ls-tree", "-r", "--name-only", "1.0", cwd=served).split()) == set(expected)
    digest_tag = reference.at(manifest.digest).digest_tag
    assert git("rev-parse", "1.0", cwd=served) == git("rev-parse", f"{digest_tag}", cwd=served)
    # Reproducible: the same package makes the same commit in another repository.
    mirror = parse(f"git+{git_server.repository('mirror.git')}@1.0")
    registry.push(tmp_path / "pkg", manifest, mirror)
    assert git("rev-parse", "1.0", cwd=git_server.root / "mirror.git") == git("rev-parse", "1.0", cwd=served)


def test_version_holding_another_package_is_refused_unless_forced(git_server: GitServer, tmp_path: Path) -> None:
    first = make_package(tmp_path / "first")
    second = make_package(tmp_path / "second", world="clinic_scheduling")
    reference = parse(f"git+{git_server.repository('claims.git')}@1.0")
    registry = GitRegistry()
    registry.push(tmp_path / "first", first, reference)

    with pytest.raises(ConfigError, match=f"holds the package {first.digest} already.*--force"):
        registry.push(tmp_path / "second", second, reference)
    assert registry.resolve(reference) == first.digest

    assert registry.push(tmp_path / "second", second, reference, force=True) == first.digest
    assert registry.resolve(reference) == second.digest
    assert registry.versions(reference) == [Version("1.0", second.digest)]
    registry.fetch(reference.at(first.digest), tmp_path / "old")  # a digest cited before stays fetchable
    assert verify(tmp_path / "old", "old").digest == first.digest


def test_git_file_url(git_server: GitServer, tmp_path: Path) -> None:
    """A repository on disk (git+file://), for a user whose git config refuses bare repositories not named
    explicitly (the fixture's HOME is a temporary folder)."""
    (Path.home() / ".gitconfig").write_text("[safe]\n\tbareRepository = explicit\n")
    git("init", "--quiet", "--bare", str(tmp_path / "local.git"))
    manifest = make_package(tmp_path / "pkg")
    reference = parse(f"git+file://{tmp_path / 'local.git'}@1.0")
    registry = GitRegistry()
    registry.push(tmp_path / "pkg", manifest, reference)
    assert registry.versions(reference) == [Version("1.0", manifest.digest)]
    registry.fetch(reference.at(manifest.digest), tmp_path / "out")
    assert verify(tmp_path / "out", "out", manifest.digest).files == manifest.files


def test_versions_of_tags_made_by_hand(git_server: GitServer, tmp_path: Path) -> None:
    """An annotated tag without a digest tag beside it (made with plain git): its digest read from its manifest."""
    manifest = make_package(tmp_path / "pkg")
    reference = parse(f"git+{git_server.repository('claims.git')}@1.0")
    GitRegistry().push(tmp_path / "pkg", manifest, reference)
    git("tag", "-a", "-m", "by hand", "v1", "1.0", cwd=git_server.root / "claims.git")
    assert GitRegistry().versions(reference) == [Version("1.0", manifest.digest), Version("v1", manifest.digest)]


@pytest.mark.parametrize("entry", [
    ("120000", "executable/insurance_claims/secrets", b"../../../outside.txt"),
    ("120000", "executable/link", b"/etc/passwd"),
    ("100644", "evil.txt", b"outside the kinds' folders"),
    ("100644", "executable/.git/hooks/post-checkout", b"#!/bin/sh\ntouch pwned\n"),
    ("100644", "executable/../../outside.txt", b"written outside"),
    ("160000", "executable/module", "1234567890abcdef1234567890abcdef12345678"),
    pytest.param(("100644", "executable/huge.bin", bytes(MAX_FILE_BYTES + 1)), marks=pytest.mark.slow),
], ids=["symlink-up", "symlink-absolute", "root-file", "dot-git", "dot-dot", "submodule", "huge"])
def test_hostile_repository_is_refused_and_leaves_nothing(git_server: GitServer, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          entry: tuple[str, str, bytes | str]) -> None:
    manifest = make_package(tmp_path / "pkg")
    url = git_server.repository("claims.git")
    hostile_commit(tmp_path, [*package_entries(tmp_path / "pkg", manifest), entry], url, ["1.0"])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where the backend's scratch repository goes
    (tmp_path / "tmp").mkdir()
    before = everything(tmp_path)

    with pytest.raises(ConfigError, match="1.0"):
        GitRegistry().fetch(parse(f"git+{url}@1.0"), tmp_path / "out" / "pkg")
    assert not (tmp_path / "out" / "pkg").exists()
    assert everything(tmp_path) - before <= {"out"}  # nothing written anywhere else (no outside.txt, no pwned)
    assert not any((tmp_path / "tmp").iterdir())  # the scratch repository is gone
    assert not Path("pwned").exists()


def test_tampered_repository_is_refused(git_server: GitServer, tmp_path: Path) -> None:
    manifest = make_package(tmp_path / "pkg")
    url = git_server.repository("claims.git")
    reference = parse(f"git+{url}@1.0")
    GitRegistry().push(tmp_path / "pkg", manifest, reference)
    digest_tag = reference.at(manifest.digest).digest_tag
    assert digest_tag is not None
    # The same manifest over a changed file, moved onto both tags by someone with write access.
    entries = package_entries(tmp_path / "pkg", manifest)
    entries = [(mode, path, b"DROP TABLE claims;" if path.endswith("seed.sql") else content)
               for mode, path, content in entries]
    hostile_commit(tmp_path, entries, url, ["1.0", digest_tag])
    for ref in (reference, reference.at(manifest.digest)):
        with pytest.raises(ConfigError, match="differ from their sha256"):
            GitRegistry().fetch(ref, tmp_path / "out")
        assert not (tmp_path / "out").exists()

    # A manifest changed to match the changed file is another package: its digest is not the one cited.
    changed = describe(_tampered_copy(tmp_path), name="acme/claims", version="1.0")
    hostile_commit(tmp_path, package_entries(tmp_path / "tampered", changed), url, [digest_tag])
    with pytest.raises(ConfigError, match="digest"):
        GitRegistry().fetch(reference.at(manifest.digest), tmp_path / "out")
    assert not (tmp_path / "out").exists()

    # Pushing the package again repairs both tags (no force needed: they claim to hold this very package).
    GitRegistry().push(tmp_path / "pkg", manifest, reference)
    for ref in (reference, reference.at(manifest.digest)):
        GitRegistry().fetch(ref, tmp_path / "out")
        assert verify(tmp_path / "out", "out", manifest.digest).files == manifest.files
        shutil.rmtree(tmp_path / "out")


def _tampered_copy(tmp_path: Path) -> Path:
    shutil.copytree(tmp_path / "pkg", tmp_path / "tampered")
    next((tmp_path / "tampered").rglob("seed.sql")).write_bytes(b"DROP TABLE claims;")
    return tmp_path / "tampered"


def test_fetch_into_an_existing_folder_is_refused_and_the_folder_kept(git_server: GitServer, tmp_path: Path) -> None:
    manifest = make_package(tmp_path / "pkg")
    reference = parse(f"git+{git_server.repository('claims.git')}@1.0")
    GitRegistry().push(tmp_path / "pkg", manifest, reference)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(ConfigError, match="exists"):
        GitRegistry().fetch(reference, tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_unreachable_missing_and_unknown_are_config_errors(git_server: GitServer, tmp_path: Path) -> None:
    manifest = make_package(tmp_path / "pkg")
    registry = GitRegistry()
    with socket_closed() as port:
        down = parse(f"git+git://127.0.0.1:{port}/claims.git@1.0")
        for call in (lambda: registry.resolve(down), lambda: registry.versions(down),
                     lambda: registry.push(tmp_path / "pkg", manifest, down)):
            with pytest.raises(ConfigError, match=f"127.0.0.1:{port}/claims.git"):
                call()
            missing = parse(f"git+{git_server.url('nowhere.git')}@1.0")
    with pytest.raises(ConfigError, match="nowhere.git"):
        registry.push(tmp_path / "pkg", manifest, missing)
    with pytest.raises(ConfigError, match="nowhere.git"):
        registry.fetch(missing, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    unknown = parse(f"git+{git_server.repository('claims.git')}@2.0")
    with pytest.raises(ConfigError, match="no such tag"):
        registry.resolve(unknown)
    assert registry.versions(unknown) == []


@contextmanager
def socket_closed() -> Iterator[int]:
    """A loopback port nothing listens on (bound, never listening, while the block runs)."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield int(bound.getsockname()[1])
