"""The ``hf://`` backend against a real Hub-compatible server: olah (the peer of .ci/peers/olah.sh), which in offline
mode serves local git repositories as Hub dataset repositories. Each test writes a repository as the Hub stores a
pushed package (the package's files, its manifest at the root, the Hub's own .gitattributes, a commit per version
tagged VERSION and sha256-HEX) with plain git, then resolves, lists and fetches it through occubench. olah takes no
uploads, so a push is played here only as far as it writes nothing: the refusal of a taken version, and a push of
what a version holds already."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import occubench
from occubench.errors import ConfigError
from occubench.hub.hf import HubRegistry
from occubench.hub.package import MANIFEST, Manifest, describe, verify
from occubench.hub.refs import parse
from occubench.hub.registry import Version
from occubench.sandbox import Provider
from tests.conftest import peer

WORLD = Path(occubench.__file__).parent / "executable" / "worlds" / "insurance_claims"
GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"  # what the Hub writes into every repository


@dataclass
class Olah:
    url: str
    datasets: Path  # its mirrors' folder of dataset repositories: OWNER/NAME, each a git repository


@pytest.fixture(scope="module")
def olah(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Olah]:
    venv = peer("olah")
    root = tmp_path_factory.mktemp("olah")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (root / "olah.toml").write_text(f"""[basic]
host = "127.0.0.1"
port = {port}
repos-path = "{root / 'repos'}"
mirror-scheme = "http"
mirror-netloc = "127.0.0.1:{port}"
mirror-lfs-netloc = "127.0.0.1:{port}"
mirrors-path = ["{root / 'mirrors'}"]
[accessibility]
offline = true
""")
    url = f"http://127.0.0.1:{port}"
    with open(root / "olah.out", "wb") as log:  # it writes its own logs/ in its working folder
        process = subprocess.Popen([str(venv / "bin" / "olah-cli"), "-c", "olah.toml"], cwd=root, stdout=log,
                                   stderr=log, env={**os.environ, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"})
    try:
        deadline = time.monotonic() + 60  # a bound on waiting for it to listen, not an assertion
        while True:
            assert process.poll() is None and time.monotonic() < deadline, (root / "olah.out").read_text()[-3000:]
            try:
                urllib.request.urlopen(url + "/", timeout=5).close()
                break
            except urllib.error.HTTPError:
                break  # it answers
            except OSError:
                time.sleep(0.1)
        yield Olah(url, root / "mirrors" / "datasets")
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def hub(olah: Olah, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Olah:
    """The user's environment pointing the Hub's client at olah, with a home and Hub folder of the test's own."""
    monkeypatch.setenv("HF_ENDPOINT", olah.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    return olah


def package(folder: Path, version: str, extra: dict[str, bytes] | None = None) -> Manifest:
    """A package folder: the built-in world insurance_claims under executable/, and ``extra`` files; its manifest."""
    shutil.copytree(WORLD, folder / "executable" / "insurance_claims",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path, data in (extra or {}).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    return describe(folder, name="acme/claims", version=version, license="MIT")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c",
                           "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args], cwd=repo, check=True,
                          capture_output=True, text=True, env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
    return done.stdout


def commit(repo: Path, source: Path, manifest: Manifest, *tags: str, change=None) -> None:
    """Make ``repo``'s files ``source``'s and its manifest's (then ``change`` them), commit, tag ``tags``."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True)
        git(repo, "init", "-q")
    git(repo, "rm", "-rq", "--ignore-unmatch", ".")
    shutil.copytree(source, repo, dirs_exist_ok=True)
    (repo / MANIFEST).write_bytes(manifest.canonical() + b"\n")
    (repo / ".gitattributes").write_bytes(GITATTRIBUTES)
    if change:
        change(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"{manifest.version}")
    for tag in tags:
        git(repo, "tag", tag)


def digest_tag(manifest: Manifest) -> str:
    return manifest.digest.replace(":", "-")


def files_of(folder: Path) -> dict[str, bytes]:
    found = {}
    for path in sorted(folder.rglob("*")):
        assert not path.is_symlink(), path
        if path.is_file():
            found[path.relative_to(folder).as_posix()] = path.read_bytes()
    return found


def test_resolve_list_and_fetch_by_version_and_by_digest(hub: Olah, tmp_path: Path) -> None:
    repo = hub.datasets / "acme" / "claims"
    first = package(tmp_path / "v1.9", "1.9")
    commit(repo, tmp_path / "v1.9", first, "1.9", digest_tag(first))
    second = package(tmp_path / "v1.10", "1.10", {"executable/insurance_claims/NOTES.md": b"second\n"})
    commit(repo, tmp_path / "v1.10", second, "1.10", digest_tag(second))
    # A version tagged without its digest tag (pushed by hand): its digest comes from its manifest.
    third = package(tmp_path / "beta", "beta")
    commit(repo, tmp_path / "beta", third, "beta")
    registry = HubRegistry()

    assert registry.resolve(parse("hf://acme/claims@1.9")) == first.digest
    assert registry.resolve(parse("hf://acme/claims@1.10")) == second.digest
    assert registry.resolve(parse(f"hf://acme/claims@{second.digest}")) == second.digest
    assert registry.versions(parse("hf://acme/claims", pinned=False)) == [
        Version("1.9", first.digest), Version("1.10", second.digest), Version("beta", third.digest)]

    by_version, by_digest = tmp_path / "got" / "by-version", tmp_path / "got" / "by-digest"
    registry.fetch(parse("hf://acme/claims@1.10"), by_version)
    registry.fetch(parse(f"hf://acme/claims@{second.digest}"), by_digest)
    expected = {**files_of(tmp_path / "v1.10"), MANIFEST: second.canonical() + b"\n"}
    assert files_of(by_version) == files_of(by_digest) == expected  # no .gitattributes, plain files
    assert verify(by_version, "fetched").digest == verify(by_digest, "fetched").digest == second.digest


def _tamper(repo: Path) -> None:
    (repo / "executable" / "insurance_claims" / "seed.sql").write_bytes(b"DELETE FROM claims;\n")


def _outside(repo: Path) -> None:
    (repo / "notes").mkdir()
    (repo / "notes" / "readme.txt").write_bytes(b"not a world\n")


def _unlisted(repo: Path) -> None:
    (repo / "executable" / "insurance_claims" / "extra.py").write_bytes(b"import os\n")


def _link(repo: Path) -> None:
    os.symlink("/etc/passwd", repo / "executable" / "insurance_claims" / "passwd")


def _huge(repo: Path) -> None:
    with open(repo / "executable" / "insurance_claims" / "huge.sql", "wb") as huge:
        huge.truncate((64 << 20) + 1)  # zeros: git stores them in a few kB, the listing says their size


#: Each way a repository may differ from the package its tags name, and what the refusal says.
CHANGES = [(_tamper, "differ from their sha256 in the manifest"), (_outside, "outside the kinds' folders"),
           (_unlisted, "not in the manifest"), (_link, "not in the manifest"),
           (_huge, "a package file has at most 64 MB")]  # refused from the listing, before any download


@pytest.mark.parametrize(("change", "refusal"), CHANGES, ids=[f.__name__.strip("_") for f, _ in CHANGES])
@pytest.mark.parametrize("by", ["version", "digest"])
def test_a_changed_package_is_refused_and_nothing_is_written(hub: Olah, tmp_path: Path, change, refusal: str,
                                                             by: str) -> None:
    name = f"{change.__name__.strip('_')}-{by}"
    manifest = package(tmp_path / "pkg", "1.0")
    commit(hub.datasets / "acme" / name, tmp_path / "pkg", manifest, "1.0", digest_tag(manifest), change=change)
    reference = parse(f"hf://acme/{name}@{'1.0' if by == 'version' else manifest.digest}")
    out = tmp_path / "out"
    out.mkdir()

    with pytest.raises(ConfigError, match=f"^hf://acme/{name}@.*{refusal}"):
        HubRegistry().fetch(reference, out / "dest")

    assert list(out.iterdir()) == []  # dest removed, nothing beside it


def test_a_digest_tag_on_another_package_is_refused(hub: Olah, tmp_path: Path) -> None:
    """The registry says sha256-X is a package of other files (consistent with their own manifest): the digest is
    checked by us, not taken from the tag."""
    cited = package(tmp_path / "cited", "1.0")
    other = package(tmp_path / "other", "1.0", {"executable/insurance_claims/NOTES.md": b"not the cited one\n"})
    commit(hub.datasets / "acme" / "impostor", tmp_path / "other", other, "1.0", digest_tag(cited))
    out = tmp_path / "out"
    out.mkdir()

    with pytest.raises(ConfigError, match=f"not {cited.digest}"):
        HubRegistry().fetch(parse(f"hf://acme/impostor@{cited.digest}"), out / "dest")

    assert list(out.iterdir()) == []


def test_a_missing_repository_version_or_server_is_a_config_error(hub: Olah, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = package(tmp_path / "pkg", "1.0")
    commit(hub.datasets / "acme" / "present", tmp_path / "pkg", manifest, "1.0", digest_tag(manifest))
    registry = HubRegistry()
    for text in ("hf://acme/absent@1.0", "hf://acme/present@2.0"):
        with pytest.raises(ConfigError, match=text):
            registry.resolve(parse(text))
        with pytest.raises(ConfigError, match=text):
            registry.fetch(parse(text), tmp_path / "dest")
        assert not (tmp_path / "dest").exists()
    with pytest.raises(ConfigError, match="hf://acme/absent"):
        registry.versions(parse("hf://acme/absent", pinned=False))

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed.getsockname()[1]}")  # nothing listens there
        for call in (lambda: registry.resolve(parse("hf://acme/present@1.0")),
                     lambda: registry.versions(parse("hf://acme/present", pinned=False)),
                     lambda: registry.fetch(parse("hf://acme/present@1.0"), tmp_path / "dest")):
            with pytest.raises(ConfigError, match="HF_ENDPOINT"):
                call()
    assert not (tmp_path / "dest").exists()


def test_push_refuses_a_taken_version_and_leaves_the_same_package_as_it_is(hub: Olah, tmp_path: Path) -> None:
    """olah takes no uploads: a push that wrote anything would fail here, so these pushes wrote nothing."""
    repo = hub.datasets / "acme" / "taken"
    held = package(tmp_path / "held", "1.0")
    commit(repo, tmp_path / "held", held, "1.0", digest_tag(held))
    other = package(tmp_path / "other", "1.0", {"executable/insurance_claims/NOTES.md": b"another\n"})
    before = git(repo, "show-ref")

    with pytest.raises(ConfigError, match=f"hf://acme/taken@1.0: version 1.0 holds the package {held.digest} already"
                                          ".*--force"):
        HubRegistry().push(tmp_path / "other", other, parse("hf://acme/taken@1.0"))
    assert HubRegistry().push(tmp_path / "held", held, parse("hf://acme/taken@1.0")) is None

    assert git(repo, "show-ref") == before
    assert HubRegistry().resolve(parse("hf://acme/taken@1.0")) == held.digest


def test_a_run_refuses_to_resume_once_its_version_moved_before_fetching_what_it_names_now(
        hub: Olah, tmp_path: Path, sandbox: Provider) -> None:
    """A run from hf://...@1.0, resumed once tag 1.0 names another commit: the tags say which package that is (its
    digest tag names the same commit), and the run stops before fetching it. The new commit's files differ from its
    manifest, so a fetch of it would have been refused for that instead; nothing new is installed."""
    repo = hub.datasets / "acme" / "moved"
    first = package(tmp_path / "v1", "1.0")
    commit(repo, tmp_path / "v1", first, "1.0", digest_tag(first))
    env = {**os.environ, "OCCUBENCH_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "500"}
    run = [sys.executable, "-m", "occubench", "run", "--suite", "executable", "--agent", "reference", "--worlds",
           "hf://acme/moved@1.0", "--output-dir", str(tmp_path / "runs")]
    ran = subprocess.run(run, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert ran.returncode == 0, ran.stderr
    store = tmp_path / "cache" / "worlds" / "sha256"
    assert [path.name for path in store.iterdir()] == [first.digest.removeprefix("sha256:")]

    second = package(tmp_path / "v2", "1.0", {"executable/insurance_claims/NOTES.md": b"moved\n"})
    git(repo, "tag", "-d", "1.0")
    commit(repo, tmp_path / "v2", second, "1.0", digest_tag(second), change=_tamper)
    again = subprocess.run(run, env=env, capture_output=True, text=True, timeout=600, check=False)

    assert again.returncode == 2
    assert f"holds results of the world package {first.digest}, and --worlds hf://acme/moved@1.0 now names " \
           f"{second.digest}" in again.stderr
    assert f"--worlds hf://acme/moved@{first.digest}" in again.stderr
    assert [path.name for path in store.iterdir()] == [first.digest.removeprefix("sha256:")]
