"""World packages in git repositories, through the ``git`` program itself: the standard client, which finds
credentials where git keeps them (credential helpers, ssh keys); none is ever passed on its command line.

A package is one commit whose tree is exactly the package's files, browsable as they are (``executable/...``, the
manifest at the root). The commit has no parent, and fixed identity, date and mode (every file 100644, as the
digest ignores modes), so the same package makes the same commit in every repository. Two lightweight tags name it:
its version and ``sha256-HEX``. Lightweight rather than annotated: an annotated tag adds an object with a date and
identity of its own (and is signed where the user's ``tag.gpgSign`` says so, prompting for a key), while a
lightweight one is the commit itself, so ``git ls-remote`` pairs each version with its digest tag with no fetch.

Nothing of a repository is checked out (a checkout writes what the tree says: links, submodules). What is fetched
goes into a temporary bare repository; its tree is listed, anything but a regular file at a safe path refused, and
each file read out of git as data into a new folder, then checked against the manifest and the digest. Every git
runs in a repository of ours (never in one the user's current folder may be inside, whose config could run
programs), with the system config off, no terminal prompt and a timeout.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from occubench.errors import ConfigError
from occubench.hub.deadline import current
from occubench.hub.package import MANIFEST, Manifest, check_path, verify
from occubench.hub.refs import Reference
from occubench.hub.registry import Registry, Version, taken
from occubench.util.redact import Redactor, environment_secrets
from occubench.util.untrusted import MAX_FILE_BYTES, MAX_FILES, MAX_FOLDER_BYTES, read_chunks

#: Seconds: a local git command; one that moves a package (up to 1 GB) over the network or into git.
_QUICK, _TRANSFER = 120, 3600
#: The only git variables passed on: the user's config file and how they reach servers (ssh, proxy, CA, askpass).
#: Others (GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_INDEX_FILE...) would point git at another repository or config.
_KEEP = {"GIT_CONFIG_GLOBAL", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
         "GIT_SSL_CAINFO", "GIT_SSL_CAPATH"}
#: Objects fetched are checked (a malformed tree is refused by git); no background maintenance of a scratch repo.
_CONFIG = ("-c", "transfer.fsckObjects=true", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
           "-c", "user.name=occubench", "-c", "user.email=occubench@localhost")
_IDENTITY = b"occubench <occubench@localhost> 0 +0000"
_REGULAR = (b"100644", b"100755")
_DIGEST_TAG = re.compile(r"sha256-([0-9a-f]{64})")


class GitRegistry(Registry):
    """Packages in git repositories (``git+URL@VERSION``), one commit and two tags per package."""

    def push(self, package: Path, manifest: Manifest, reference: Reference, *, force: bool = False) -> str | None:
        where, url = str(reference), reference.location
        version = reference.version or manifest.version
        digest_tag = reference.at(manifest.digest).digest_tag
        assert digest_tag is not None
        with _scratch() as repo:
            commit = _commit(repo, package, manifest, (version, digest_tag), where)
            held = _remote_tags(repo, url, where)
            refspecs, replaced = [], None
            for tag in (version, digest_tag):
                if held.get(tag) == commit:
                    continue  # there already (perhaps under an annotated tag, which a push would not replace)
                if tag in held:
                    fetched = _fetch(repo, url, tag, where)
                    trees = _git(repo, "rev-parse", f"{fetched}^{{tree}}", f"{commit}^{{tree}}", what=where).split()
                    if trees[0] == trees[1]:
                        continue  # the same files, in a commit made otherwise
                    try:
                        existing = _manifest(repo, fetched, where).digest
                    except ConfigError as exc:
                        existing = f"no package ({exc})"
                    if tag == version and existing != manifest.digest:
                        if not force:
                            raise taken(where, version, existing)
                        replaced = existing
                # Else the tag holds this package's manifest over other files, or (the digest's) another package:
                # wrong either way, and replaced.
                refspecs.append(f"{'+' if tag in held else ''}refs/tags/{tag}:refs/tags/{tag}")
            if refspecs:
                _git(repo, "push", "--quiet", url, *refspecs, timeout=_TRANSFER,
                     what=f"{where}: git could not push to {url}",
                     hint="check that the repository exists (git servers do not make one on a push) and that you "
                          "may write to it (git's credential helper or ssh key)")
        return replaced

    def resolve(self, reference: Reference) -> str:
        where, url, tag = str(reference), reference.location, reference.tag
        with _scratch() as repo:
            tags = _remote_tags(repo, url, where)
            if tag not in tags:
                raise ConfigError(f"{where}: the repository {url} has no such tag ({tag}); check the version (a "
                                  "package's versions are its tags)")
            # Its digest tag names the same commit (a push writes both): no fetch. Else the manifest says.
            return _digests(tags).get(tags[tag]) or _manifest(repo, _fetch(repo, url, tag, where), where).digest

    def fetch(self, reference: Reference, dest: Path) -> None:
        where = str(reference)
        try:
            dest.mkdir(parents=True)
        except FileExistsError:
            raise ConfigError(f"{dest}: exists already; a package is fetched into a new folder") from None
        try:
            with _scratch() as repo:
                rev = _fetch(repo, reference.location, reference.tag, where)
                _write(repo, _files(repo, rev, where), dest, where)
            verify(dest, where, reference.digest)
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)
            raise

    def versions(self, reference: Reference) -> list[Version]:
        where, url = str(Reference("git", reference.location)), reference.location
        with _scratch() as repo:
            tags = _remote_tags(repo, url, where)
            digests = _digests(tags)
            return [Version(tag, digests.get(commit) or _manifest(repo, _fetch(repo, url, tag, where), where).digest)
                    for tag, commit in tags.items() if not tag.startswith("sha256")]


def _environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_") or key in _KEEP}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C", LANGUAGE="C")  # C: messages we read
    return env


def _command(repo: Path, *args: str) -> list[str]:
    return ["git", *_CONFIG, f"--git-dir={repo}", *args]  # explicit: a user's safe.bareRepository may ask for it


def _run(repo: Path, *args: str, what: str, hint: str, timeout: float = _QUICK,
         stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """git ``args`` run in the scratch repository ``repo``; a :class:`ConfigError` saying ``what`` failed if git is
    missing or outlives ``timeout``."""
    timeout = _within(timeout)
    try:
        process = subprocess.Popen(_command(repo, *args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, cwd=repo, env=_environment(), start_new_session=True)
    except FileNotFoundError:
        raise ConfigError(f"{what}: the git program is not installed (git+ references need it)") from None
    started = time.monotonic()
    with _watched(process, timeout):
        out, err = process.communicate(stdin)
    if process.returncode == -signal.SIGKILL and time.monotonic() - started >= timeout:
        raise ConfigError(f"{what}: git {args[0]} took more than {timeout:.0f} s; {hint}")
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _git(repo: Path, *args: str, what: str, hint: str = "check that git works here", timeout: float = _QUICK,
         stdin: bytes = b"") -> bytes:
    """The output of git ``args`` (see :func:`_run`); a failure is a :class:`ConfigError` saying ``what`` failed,
    git's own words why, and the ``hint``."""
    done = _run(repo, *args, what=what, hint=hint, timeout=timeout, stdin=stdin)
    if done.returncode:
        raise ConfigError(f"{what}: {_said(done.stderr)}; {hint}")
    return done.stdout


def _said(stderr: bytes) -> str:
    """git's last words, secrets masked (a server may quote a URL with a token)."""
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    text = " / ".join(lines[-3:])[:600] or "git failed and said nothing"
    return Redactor(environment_secrets()).text(text)


@contextmanager
def _scratch() -> Iterator[Path]:
    """A new bare repository in the temporary folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="occubench-git-") as tmp:
        repo = Path(tmp) / "repo.git"
        repo.mkdir()
        _git(repo, "init", "--quiet", "--bare", what="git init of a temporary repository")
        yield repo


@contextmanager
def _watched(process: subprocess.Popen[bytes], timeout: float) -> Iterator[None]:
    """Kill ``process`` (started in a session of its own) and every process it started (a remote helper, ssh) if it
    outlives ``timeout``: their pipes then close, so a read or write waiting on them ends."""
    timer = threading.Timer(_within(timeout), _kill, (process,))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        _kill(process)
        process.wait()


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:  # never a group whose leader was reaped: its number may be another's by now
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def _within(timeout: float) -> float:
    """``timeout``, or the seconds the operation's deadline leaves (:mod:`occubench.hub.deadline`) if fewer."""
    ends = current()
    return timeout if ends is None else min(timeout, ends.left())


def _remote_tags(repo: Path, url: str, where: str) -> dict[str, str]:
    """The tags of the repository at ``url`` and the commit each names (an annotated tag's, peeled)."""
    out = _git(repo, "ls-remote", "--tags", url, timeout=_TRANSFER, what=f"{where}: git could not list the tags of "
               f"{url}", hint="check the URL, that the repository exists, and that git reaches it (network, ssh key "
                              "or credential helper)")
    tags: dict[str, str] = {}
    for line in out.decode(errors="replace").splitlines():
        commit, _, ref = line.partition("\t")
        name = ref.removeprefix("refs/tags/")
        if name.endswith("^{}"):
            tags[name[:-3]] = commit  # the peeled line follows its tag's
        elif name != ref:
            tags[name] = commit
    return tags


def _digests(tags: dict[str, str]) -> dict[str, str]:
    """The package digest of each commit that a ``sha256-HEX`` tag names (of ``tags``, as :func:`_remote_tags`)."""
    digests: dict[str, str] = {}
    for tag, commit in sorted(tags.items()):
        if match := _DIGEST_TAG.fullmatch(tag):
            digests.setdefault(commit, f"sha256:{match[1]}")
    return digests


def _fetch(repo: Path, url: str, tag: str, where: str) -> str:
    """Fetch the tag ``tag`` (its last commit only) into ``repo``; the local name of what it holds."""
    local = f"refs/fetched/{tag}"
    what = f"{where}: git could not fetch tag {tag} of {url}"
    hint = "check the URL, that the repository exists, and that git reaches it (network, ssh key or credential helper)"
    done = _run(repo, "fetch", "--quiet", "--no-tags", "--depth", "1", url, f"+refs/tags/{tag}:{local}",
                timeout=_TRANSFER, what=what, hint=hint)
    if done.returncode and b"couldn't find remote ref" in done.stderr:
        raise ConfigError(f"{what}: the repository has no such tag; check the version (a package's versions are its "
                          "tags)")
    if done.returncode and b"fsck error" in done.stderr:
        raise ConfigError(f"{what}: git refused what it holds as malformed or hostile ({_said(done.stderr)})")
    if done.returncode:
        raise ConfigError(f"{what}: {_said(done.stderr)}; {hint}")
    return local


def _manifest(repo: Path, rev: str, where: str) -> Manifest:
    """The manifest at the root of ``rev``'s tree, read without a checkout."""
    out = _git(repo, "cat-file", "--batch-check", stdin=f"{rev}:{MANIFEST}\n".encode(), what=where).split()
    if len(out) != 3 or out[1] != b"blob":
        raise ConfigError(f"{where}: holds no {MANIFEST} at its root; not an occubench world package")
    if int(out[2]) > MAX_FILE_BYTES:
        raise ConfigError(f"{where}: {MANIFEST} has {int(out[2]):,} bytes; a manifest has at most "
                          f"{MAX_FILE_BYTES >> 20} MB")
    data = _git(repo, "cat-file", "blob", out[0].decode(), what=where)
    return Manifest.from_bytes(data, f"{where}: {MANIFEST}")


def _files(repo: Path, rev: str, where: str) -> list[tuple[str, str, int]]:
    """The files of ``rev``'s tree (path, blob, size): regular files at safe paths within the limits, or a
    :class:`ConfigError` (a link could name any file of the user's, a submodule another repository)."""
    listing = _git(repo, "ls-tree", "-r", "-z", "--long", rev, what=where)
    files: list[tuple[str, str, int]] = []
    total = 0
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw = entry.partition(b"\t")
        mode, kind, blob, size = meta.split()
        try:
            path = raw.decode()
        except UnicodeDecodeError:
            raise ConfigError(f"{where}: {raw!r} is not a UTF-8 path; a package holds none") from None
        if mode not in _REGULAR or kind != b"blob":
            what = {b"120000": "a symbolic link", b"160000": "a submodule"}.get(mode, f"of mode {mode.decode()}")
            raise ConfigError(f"{where}: {path!r} is {what}; a package holds regular files only")
        if path != MANIFEST:
            check_path(path, where)
        total += int(size)
        if len(files) >= MAX_FILES or int(size) > MAX_FILE_BYTES or total > MAX_FOLDER_BYTES:
            raise ConfigError(f"{where}: {path!r} is past a package's limits ({MAX_FILES:,} files, "
                              f"{MAX_FILE_BYTES >> 20} MB each, {MAX_FOLDER_BYTES >> 20:,} MB in all)")
        files.append((path, blob.decode(), int(size)))
    return files


def _write(repo: Path, files: list[tuple[str, str, int]], dest: Path, where: str) -> None:
    """Write each of ``files`` into ``dest`` from one ``git cat-file --batch`` (a process per file would cost
    seconds for thousands): new regular files only, never through a link."""
    process = subprocess.Popen(_command(repo, "cat-file", "--batch"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, cwd=repo, env=_environment(),
                               start_new_session=True)
    assert process.stdin is not None and process.stdout is not None
    with _watched(process, _TRANSFER), process.stdin, process.stdout:
        for path, blob, size in files:
            target = dest.joinpath(*path.split("/"))
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            except OSError as exc:
                raise ConfigError(f"{where}: cannot write {path!r} ({exc.strerror}); is it in the package twice?") \
                    from None
            with open(fd, "wb") as out:
                process.stdin.write(blob.encode() + b"\n")
                process.stdin.flush()
                if process.stdout.readline().split() != [blob.encode(), b"blob", str(size).encode()]:
                    raise ConfigError(f"{where}: git could not read {path!r} from the fetched repository")
                _copy(process.stdout, out, size, f"{where}: {path!r}")
                process.stdout.read(1)  # the newline after each object


def _copy(source: IO[bytes], out: IO[bytes], size: int, where: str) -> None:
    while size:
        chunk = source.read(min(size, 1 << 20))
        if not chunk:
            raise ConfigError(f"{where}: git stopped before the end of the file (timed out?)")
        out.write(chunk)
        size -= len(chunk)


def _commit(repo: Path, package: Path, manifest: Manifest, tags: tuple[str, str], where: str) -> str:
    """Make the package's commit in ``repo`` with ``git fast-import`` (all files through one process), tagged
    ``tags``; its id. Each file is read as untrusted and checked against the manifest as it is read."""
    log = repo / "fast-import.log"
    with log.open("wb") as errors:
        process = subprocess.Popen(_command(repo, "fast-import", "--quiet", "--date-format=raw"),
                                   stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors, cwd=repo,
                                   env=_environment(), start_new_session=True)
    assert process.stdin is not None
    with _watched(process, _TRANSFER):
        try:
            with process.stdin as stream:
                lines = []
                for mark, (path, data) in enumerate(_contents(package, manifest, where), 1):
                    stream.write(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
                    lines.append(b"M 100644 :%d %s\n" % (mark, _quoted(path)))
                message = f"{manifest.name} {manifest.version}\n\nAn occubench world package, {manifest.digest}.\n"
                stream.write(b"commit refs/tags/%s\nmark :%d\nauthor %s\ncommitter %s\ndata %d\n%s\n%s\n"
                             % (tags[0].encode(), len(lines) + 1, _IDENTITY, _IDENTITY, len(message.encode()),
                                message.encode(), b"".join(lines)))
                stream.write(b"reset refs/tags/%s\nfrom :%d\n\n" % (tags[1].encode(), len(lines) + 1))
        except BrokenPipeError:
            pass  # git stopped; its error is in the log
        process.wait()
    if process.returncode:
        raise ConfigError(f"{where}: git fast-import could not make the package's commit: "
                          f"{_said(log.read_bytes())}")
    return _git(repo, "rev-parse", "--verify", f"refs/tags/{tags[0]}^{{commit}}", what=where).decode().strip()


def _contents(package: Path, manifest: Manifest, where: str) -> Iterator[tuple[str, bytes]]:
    yield MANIFEST, manifest.canonical() + b"\n"
    for path, sha256 in sorted(manifest.files.items()):
        data = b"".join(read_chunks(package / path))
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ConfigError(f"{where}: {package / path} changed since the package was described; describe it "
                              "again")
        yield path, data


def _quoted(path: str) -> bytes:
    """``path`` as fast-import reads it: C-style quoted, each byte not printable ASCII as an octal escape."""
    out = bytearray(b'"')
    for byte in path.encode():
        if byte in b'"\\':
            out += b"\\%c" % byte
        elif 0x20 <= byte < 0x7F:
            out.append(byte)
        else:
            out += b"\\%03o" % byte
    return bytes(out + b'"')
