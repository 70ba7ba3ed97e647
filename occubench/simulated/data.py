"""Locate, download and verify the OccuBench benchmark data.

The data is the `data/` folder of the upstream repository at a pinned commit. Every file is
checked against `data_manifest.json` (sha256 per file, shipped with the package), so a run
always uses exactly the data the published results were computed on.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import os
import shlex
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
from importlib import resources
from pathlib import Path, PurePosixPath

from occubench.errors import ConfigError, DataNotFoundError
from occubench.util.paths import user_cache_dir
from occubench.util.untrusted import check_file, folder_files, read_chunks, read_file

UPSTREAM_REPO = "GregxmHu/OccuBench"
UPSTREAM_COMMIT = "d47bffb"
DEFAULT_URL = f"https://github.com/{UPSTREAM_REPO}/archive/{UPSTREAM_COMMIT}.tar.gz"

EVAL_DATA_NAME = "eval_benchmark_solvable.jsonl"
SCENARIO_POOL_NAME = "task_scenario_all_pool.jsonl"
CONFIG_DIR_NAME = "world_model_configs"

#: The OccuBench-format sample shipped with the package (``occubench demo``): a task file, a scenario pool and the
#: world configs of its tasks, named apart from the benchmark's own files, which are downloaded, never shipped.
SAMPLE = Path(__file__).parent / "sample"
_MANIFEST_NAME = "data_manifest.json"
_TIMEOUT_S = 60  # per socket operation, not for the whole download
_CHUNK = 1 << 16
_MAX_LISTED = 10  # names shown in an error before "and N more"


@dataclass(frozen=True)
class DataPaths:
    """Where a run reads the benchmark from."""

    eval_data: Path
    scenario_pool: Path
    config_dir: Path


def resolve_data_paths(
    *,
    data_dir: Path | str | None = None,
    eval_data: Path | str | None = None,
    scenario_pool: Path | str | None = None,
    config_dir: Path | str | None = None,
) -> DataPaths:
    """Per-file arguments win; the rest come from `data_dir`, else `$OCCUBENCH_DATA`, else `./data`."""
    base = Path(data_dir or os.environ.get("OCCUBENCH_DATA") or "data")
    return DataPaths(
        eval_data=Path(eval_data) if eval_data else base / EVAL_DATA_NAME,
        scenario_pool=Path(scenario_pool) if scenario_pool else base / SCENARIO_POOL_NAME,
        config_dir=Path(config_dir) if config_dir else base / CONFIG_DIR_NAME,
    )


def ensure_data(paths: DataPaths, *, download: bool = False) -> DataPaths:
    """Return `paths` if they all exist; otherwise download into the user cache or say how to get the data. The two
    data files must be regular files within the size limit, not links (:func:`~occubench.util.untrusted.check_file`):
    they are read whole, line by line, before anything else of the folder."""
    missing = [p for p in dataclasses.astuple(paths) if not os.path.lexists(p)]
    cache = user_cache_dir() / f"data-{UPSTREAM_COMMIT}"
    if missing and download:
        download_data(cache)
        cached = resolve_data_paths(data_dir=cache)
        # Keep what the user supplied and found; fill only the gaps from the cache.
        paths = DataPaths(*(
            mine if os.path.lexists(mine) else theirs
            for mine, theirs in zip(dataclasses.astuple(paths), dataclasses.astuple(cached))
        ))
    elif missing:
        parents = {paths.eval_data.parent, paths.scenario_pool.parent, paths.config_dir.parent}
        base = parents.pop() if len(parents) == 1 else Path("data")
        raise DataNotFoundError(
            f"benchmark data not found: {', '.join(str(p) for p in missing)}. "
            f"Download it with `occubench data download --dest {shlex.quote(str(base))}`, "
            f"point at an existing copy with `--data-dir DIR` or `OCCUBENCH_DATA=DIR`, "
            f"or add `--download` to fetch it into {cache}"
        )
    check_file(paths.eval_data)
    check_file(paths.scenario_pool)
    return paths


def build_manifest(directory: Path, paths: Iterable[str] | None = None) -> dict[str, str]:
    """Map relative posix paths to sha256 hex: every file under `directory`, or just `paths` that exist."""
    directory = Path(directory)
    if paths is None:
        names = list(folder_files(directory))
    else:
        names = [name for name in paths if os.path.lexists(directory / name)]  # a link is refused, not missing
    return {name: _sha256(directory / name) for name in sorted(names)}


def verify_data(directory: Path) -> str:
    """Raise ConfigError unless every file in the manifest is in `directory` with the pinned checksum; returns
    which manifest that was. A folder written by ``occubench synth`` carries its own ``data_manifest.json``.

    Extra files (notes, results) are allowed.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise DataNotFoundError(
            f"{directory} is not a directory; fetch the data with "
            f"`occubench data download --dest {shlex.quote(str(directory))}`"
        )
    own = directory / _MANIFEST_NAME
    if os.path.lexists(own):
        try:
            manifest = json.loads(read_file(own))
        except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested past the parser
            raise ConfigError(f"{own}: not a JSON data manifest ({exc})") from None
        if not isinstance(manifest, dict) or not all(isinstance(v, str) and _inside(k) for k, v in manifest.items()):
            raise ConfigError(f"{own}: expected a JSON object of file → sha256, each file a path inside the folder")
        if problems := _problems(directory, manifest):
            raise ConfigError(f"{directory}: {problems} (checked against its own {_MANIFEST_NAME})")
        return f"its own {_MANIFEST_NAME}"
    if problems := _problems(directory):
        raise ConfigError(
            f"{directory}: {problems}; re-download with "
            f"`occubench data download --dest {shlex.quote(str(directory))}`"
        )
    return "the pinned checksums"


def download_data(dest: Path, url: str | None = None) -> Path:
    """Fetch the pinned tarball, verify its `data/` folder, and only then move it into `dest`."""
    dest = Path(dest)
    url = url or os.environ.get("OCCUBENCH_DATA_URL") or DEFAULT_URL
    if dest.exists() and not dest.is_dir():
        raise ConfigError(f"{dest} exists and is not a directory; choose another --dest")
    if dest.is_dir() and not _problems(dest):
        print(f"{dest} already holds the verified OccuBench data; nothing downloaded", file=sys.stderr)
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        # Next to dest so the final moves are renames on one file system.
        work = tempfile.TemporaryDirectory(prefix=f".{dest.name}-download-", dir=dest.parent)
    except OSError as exc:
        raise ConfigError(f"cannot write next to {dest}: {exc}; choose another --dest") from exc
    with work as tmp:
        tarball = Path(tmp) / "archive.tar"
        staging = Path(tmp) / "data"
        _fetch(url, tarball)
        _extract_data_dir(tarball, staging, url)
        if problems := _problems(staging):
            raise ConfigError(
                f"the data downloaded from {url} does not match the pinned checksums "
                f"({problems}); {dest} was left untouched"
            )
        _move_into(staging, dest)
    return dest


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    for chunk in read_chunks(path):  # no link, no file past the limit (a data folder may come from anyone)
        digest.update(chunk)
    return digest.hexdigest()


def _inside(name: str) -> bool:
    """Whether a manifest's file name stays in its folder (a relative path with no ``..``)."""
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts


def _load_manifest() -> dict[str, str]:
    return json.loads(resources.files("occubench.simulated").joinpath(_MANIFEST_NAME).read_text(encoding="utf-8"))


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:_MAX_LISTED])
    return shown if len(names) <= _MAX_LISTED else f"{shown} and {len(names) - _MAX_LISTED} more"


def _problems(directory: Path, expected: dict[str, str] | None = None) -> str:
    """Describe missing and mismatched files in one line; empty when the directory matches the manifest (the
    pinned one by default)."""
    expected = expected or _load_manifest()
    actual = build_manifest(directory, expected)
    missing = [name for name in expected if name not in actual]
    changed = [name for name, digest in actual.items() if digest != expected[name]]
    parts = []
    if missing:
        parts.append(f"{len(missing)} of {len(expected)} files missing ({_listing(missing)})")
    if changed:
        parts.append(f"{len(changed)} of {len(expected)} files differ from the pinned checksums ({_listing(changed)})")
    return "; ".join(parts)


def _fetch(url: str, target: Path) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "occubench"})
    show_progress = sys.stderr.isatty()
    copied, last_report = 0, 0.0
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response, target.open("wb") as out:
            while chunk := response.read(_CHUNK):
                out.write(chunk)
                copied += len(chunk)
                if show_progress and time.monotonic() - last_report > 0.5:
                    last_report = time.monotonic()
                    print(f"\rdownloading {url}: {copied / 1e6:.1f} MB", end="", file=sys.stderr, flush=True)
    except urllib.error.HTTPError as exc:
        raise ConfigError(
            f"downloading {url} failed: HTTP {exc.code} {exc.reason}; "
            f"check the URL (`occubench data download --url`, or OCCUBENCH_DATA_URL)"
        ) from exc
    except (urllib.error.URLError, TimeoutError, ConnectionError, HTTPException) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise ConfigError(
            f"cannot download {url}: {reason}; check your network or proxy settings, "
            f"or point `occubench data download --url` or OCCUBENCH_DATA_URL at a reachable copy"
        ) from exc
    finally:
        if show_progress and copied:  # final total, and end the progress line
            print(f"\rdownloading {url}: {copied / 1e6:.1f} MB", file=sys.stderr)


def _extract_data_dir(tarball: Path, staging: Path, url: str) -> None:
    """Write the regular files under `<top>/data/` into `staging`; refuse anything that could escape it."""
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
                    f"({_listing(sorted(tops))}); is it the OccuBench repository archive?"
                )
            prefix = (tops.pop(), "data")
            written = 0
            for member in members:
                parts = PurePosixPath(member.name).parts
                if parts[:2] != prefix or len(parts) == 2 or member.isdir():
                    continue
                if not member.isreg():
                    # Links and devices could point outside staging; the upstream data has none.
                    raise ConfigError(
                        f"{url} contains {member.name!r}, which is not a regular file; refusing to extract it"
                    )
                target = staging.joinpath(*parts[2:])
                target.parent.mkdir(parents=True, exist_ok=True)
                source = archive.extractfile(member)
                assert source is not None  # regular members always have a payload
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out, _CHUNK)
                written += 1
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ConfigError(f"{url} is not a readable tar archive ({exc}); check the URL") from exc
    if not written:
        raise ConfigError(f"{url} has no files under {'/'.join(prefix)}/; is it the OccuBench repository archive?")


def _move_into(staging: Path, dest: Path) -> None:
    if not dest.exists():
        staging.rename(dest)  # one atomic step: dest is either absent or complete
        return
    # dest already has some of the data or user files: replace file by file, keep the rest.
    for source in sorted(p for p in staging.rglob("*") if p.is_file()):
        target = dest / source.relative_to(staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
