"""Locate, download and verify the OccuBench benchmark data.

The data is the `data/` folder of the upstream repository at a pinned commit. Every file is
checked against `data_manifest.json` (sha256 per file, shipped with the package), so a run
always uses exactly the data the published results were computed on.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath

from occubench.errors import ConfigError, DataNotFoundError
from occubench.util.paths import user_cache_dir
from occubench.util.pinned import PinnedFolder, problems
from occubench.util.pinned import build_manifest as build_manifest  # a data folder's manifest, for `occubench synth`
from occubench.util.untrusted import check_file, read_file

UPSTREAM_REPO = "GregxmHu/OccuBench"
UPSTREAM_COMMIT = "d47bffb"

EVAL_DATA_NAME = "eval_benchmark_solvable.jsonl"
SCENARIO_POOL_NAME = "task_scenario_all_pool.jsonl"
CONFIG_DIR_NAME = "world_model_configs"

#: The OccuBench-format sample shipped with the package (``occubench demo``): a task file, a scenario pool and the
#: world configs of its tasks, named apart from the benchmark's own files, which are downloaded, never shipped.
SAMPLE = Path(__file__).parent / "sample"
_MANIFEST_NAME = "data_manifest.json"
#: The benchmark data: the upstream repository's `data/` folder at the pinned commit.
PINNED = PinnedFolder(
    name="OccuBench data", repo=UPSTREAM_REPO, commit=UPSTREAM_COMMIT, folder="data",
    manifest=resources.files("occubench.simulated").joinpath(_MANIFEST_NAME), command="occubench data download",
    url_variable="OCCUBENCH_DATA_URL",
)


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
        if found := problems(directory, manifest):
            raise ConfigError(f"{directory}: {found} (checked against its own {_MANIFEST_NAME})")
        return f"its own {_MANIFEST_NAME}"
    if found := PINNED.problems(directory):
        raise ConfigError(
            f"{directory}: {found}; re-download with "
            f"`occubench data download --dest {shlex.quote(str(directory))}`"
        )
    return "the pinned checksums"


def download_data(dest: Path, url: str | None = None) -> Path:
    """Fetch the pinned tarball, verify its `data/` folder, and only then move it into `dest`."""
    return PINNED.download(dest, url)


def _inside(name: str) -> bool:
    """Whether a manifest's file name stays in its folder (a relative path with no ``..``)."""
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts
