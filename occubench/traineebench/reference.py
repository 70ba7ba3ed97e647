"""The reference's own files: the manuals, templates, résumés, knowledge-base articles, CSV tables and benchmark
configs under ``environments/traineebench/`` of GitHub ``Edaizi/EvoEnv`` at a pinned commit, its Python left out.

They are downloaded at run time (``occubench data download traineebench``) into the user cache and checked file by
file against ``reference_manifest.json`` (sha256 per file, shipped with the package), never committed here.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from occubench.errors import DataNotFoundError
from occubench.util.paths import user_cache_dir
from occubench.util.pinned import PinnedFolder

REPO = "Edaizi/EvoEnv"
COMMIT = "a70e7ac9cc77b318fa9702c27a6f90f0557cef85"
COMMAND = "occubench data download traineebench"
REFERENCE = PinnedFolder(
    name="Trainee-Bench reference files", repo=REPO, commit=COMMIT, folder="environments/traineebench",
    manifest=resources.files("occubench.traineebench").joinpath("reference_manifest.json"), command=COMMAND,
    url_variable="OCCUBENCH_TRAINEEBENCH_URL",
    skip_suffixes=(".py", ".ipynb"),  # the reference's code, and the notebook it wrote the résumés with
)


def default_folder() -> Path:
    """Where the files are downloaded and looked for: the user cache, one folder per pinned commit."""
    return user_cache_dir() / f"traineebench-{COMMIT[:7]}"


def reference_folder(download: bool = False) -> Path:
    """The folder of the verified reference files; with ``download``, fetched first when missing or changed,
    otherwise a :class:`DataNotFoundError` saying how to get them."""
    folder = default_folder()
    found = REFERENCE.problems(folder) if folder.is_dir() else "not downloaded"
    if not found:
        return folder
    if download:
        return REFERENCE.download(folder)
    raise DataNotFoundError(f"the Trainee-Bench reference files ({REPO} at {COMMIT[:7]}) in {folder}: {found}; "
                            f"fetch them with `{COMMAND}`")
