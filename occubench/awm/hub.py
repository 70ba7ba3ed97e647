"""AgentWorldModel-1K from the Hugging Face Hub (``occubench data download awm``): the set's files at a pinned
revision of the dataset, fetched with the hub's own client (``huggingface_hub``, in the awm extra) into the
occubench cache, and the content digest of what arrived (:attr:`~occubench.awm.data.AwmSet.digest`, the one a
run's identity holds)."""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

from occubench.awm.data import FILES, AwmSet, load_set
from occubench.errors import ConfigError
from occubench.util.paths import user_cache_dir

#: The dataset on the Hugging Face Hub.
REPO = "Snowflake/AgentWorldModel-1K"
#: What ``occubench data download awm`` fetches (``--revision`` overrides it). It must be a full commit sha of the
#: dataset's repository, never a branch: a branch moves, and its files with it. This is the commit that public
#: projects running the complete 1,000-world set pin; it was not checked against the hub from where it was written.
AWM_REVISION = "dde80a0283fe781bdc51656bce57063dc5650213"
#: Written into the folder after the last file arrived: what was downloaded, and the digest of what arrived.
RECORD = "occubench-download.json"
#: How long the first contact with the hub may take before the download is given up as offline.
_REACH_TIMEOUT_S = 15
#: A revision names a cache folder: a sha, branch or tag name without "/" (".." and "refs/..." name none).
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def cached(revision: str = AWM_REVISION) -> Path:
    """Where ``occubench data download awm`` puts the set at ``revision`` unless given ``--dest``."""
    return user_cache_dir() / "awm-1k" / revision


def set_folder(data_dir: str | None) -> Path:
    """The folder of the set to run: ``--data-dir``, else the downloaded copy at the pinned revision; a
    :class:`ConfigError` saying how to get one when there is neither."""
    if data_dir is not None:
        return Path(data_dir)
    folder = cached()
    if not (folder / RECORD).is_file():  # written last: a folder without it is an interrupted download
        raise ConfigError(f"no AWM-format set given and no downloaded AgentWorldModel-1K in {folder}; download it with "
                          "`occubench data download awm`, or give --data-dir DIR, the folder of an AWM-format set")
    return folder


def download(dest: Path | None, revision: str = AWM_REVISION) -> AwmSet:
    """The set's files at ``revision`` in ``dest`` (by default :func:`cached`), read back as a set. A file already
    there from the same commit is not fetched again (the client's own record of it says so)."""
    if _REVISION.fullmatch(revision) is None:
        raise ConfigError(f"--revision {revision!r}: give a commit sha, or a branch or tag name "
                          "(letters, digits, '.', '_' and '-')")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise ConfigError("downloading AgentWorldModel-1K needs huggingface_hub: pip install 'occubench[awm]'") \
            from None
    folder = dest or cached(revision)
    # The client reads HF_ENDPOINT once, when it is imported; read here, a mirror set by the caller is used too.
    endpoint = os.environ.get("HF_ENDPOINT")
    _reach(endpoint or "https://huggingface.co", revision)
    for name in FILES.values():
        try:
            hf_hub_download(REPO, name, repo_type="dataset", revision=revision, local_dir=folder, endpoint=endpoint)
        except Exception as exc:  # noqa: BLE001 - whatever the client meets (HTTP, network, disk) fails the download
            # The client's "not in the local cache either" (a FileNotFoundError) says less than the answer it wraps.
            cause = exc.__cause__ if isinstance(exc, FileNotFoundError) and exc.__cause__ else exc
            raise ConfigError(f"cannot download {name} of {REPO} at revision {revision}: {type(cause).__name__}: "
                              + " ".join(str(cause).split())) from None
    awm = load_set(folder)
    record = {"repo": REPO, "revision": revision, "digest": awm.digest}
    (folder / RECORD).write_text(json.dumps(record, indent=1) + "\n")
    return awm


def _reach(endpoint: str, revision: str) -> None:
    """Nothing, when the hub answers at all (any HTTP status); otherwise a :class:`ConfigError` saying what to do.
    Offline, the hub's client would retry each file for half a minute, printing every try, and name no way out."""
    request = urllib.request.Request(endpoint, method="HEAD", headers={"User-Agent": "occubench"})
    try:
        urllib.request.urlopen(request, timeout=_REACH_TIMEOUT_S).close()
    except urllib.error.HTTPError:
        return  # an answer: the files' own requests say what is wrong, if anything is
    except (urllib.error.URLError, OSError, ValueError) as exc:  # ValueError: HF_ENDPOINT is not a URL
        reason = getattr(exc, "reason", None) or exc
        raise ConfigError(
            f"cannot reach the Hugging Face Hub at {endpoint}: {reason}; retry online (check your proxy settings), "
            f"set HF_ENDPOINT to a reachable mirror, or put the files {', '.join(FILES.values())} of {REPO} at "
            f"revision {revision} in a folder by hand and give it to --suite awm as --data-dir FOLDER") from None
