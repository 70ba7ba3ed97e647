"""``occubench data download`` and ``occubench data verify``: the OccuBench benchmark data;
``occubench data download awm``: the AgentWorldModel-1K set; ``occubench data download traineebench``: the
Trainee-Bench reference files."""

from __future__ import annotations

import argparse
from pathlib import Path

from occubench.errors import ConfigError

DATASETS = ("occubench", "awm", "traineebench")


def _download(args: argparse.Namespace) -> int:
    if args.dataset == "awm":
        return _download_awm(args)
    if args.revision is not None:
        raise ConfigError("--revision is for `occubench data download awm`; the OccuBench data and the "
                          "Trainee-Bench reference files are pinned")
    if args.dataset == "traineebench":
        return _download_traineebench(args)
    from occubench.simulated import data

    dest = data.download_data(Path(args.dest or "data"), url=args.url)
    print(f"OccuBench data ready in {dest}")
    return 0


def _download_traineebench(args: argparse.Namespace) -> int:
    from occubench.traineebench import reference

    dest = reference.REFERENCE.download(Path(args.dest) if args.dest else reference.default_folder(), url=args.url)
    print(f"Trainee-Bench reference files ({reference.REPO} at {reference.COMMIT[:7]}) ready in {dest}")
    return 0


def _download_awm(args: argparse.Namespace) -> int:
    if args.url is not None:
        raise ConfigError("--url is for the OccuBench data and the Trainee-Bench reference files; "
                          "AgentWorldModel-1K comes from the Hugging Face Hub (HF_ENDPOINT for a mirror)")
    from occubench.awm import hub

    awm = hub.download(Path(args.dest) if args.dest else None, args.revision or hub.AWM_REVISION)
    runnable = sum(scenario.runnable for scenario in awm.scenarios.values())
    print(f"AgentWorldModel-1K ready in {awm.root}: {len(awm.scenarios)} scenarios, {runnable} runnable"
          + (f", {len(awm.problems)} unreadable lines (`occubench validate --suite awm` lists them)"
             if awm.problems else ""))
    print(f"content digest (sha256): {awm.digest}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from occubench.simulated import data

    manifest = data.verify_data(Path(args.dir))
    print(f"{args.dir}: every file matches {manifest}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    data = sub.add_parser("data", help="fetch or check the OccuBench benchmark data, the AgentWorldModel-1K set or "
                                       "the Trainee-Bench reference files")
    actions = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    download = actions.add_parser(
        "download", help="download a pinned data set: the OccuBench data or the Trainee-Bench reference files "
                         "(checksums verified), or AgentWorldModel-1K",
        description="occubench (the default): the OccuBench benchmark data, from the pinned upstream commit, into "
                    "--dest (./data). awm: the AgentWorldModel-1K set (Snowflake/AgentWorldModel-1K on the Hugging "
                    "Face Hub, needs the awm extra) at a pinned revision, into the occubench cache, where "
                    "`--suite awm` finds it without --data-dir; its content digest is printed. traineebench: the "
                    "Trainee-Bench reference files (the non-Python files of environments/traineebench/ of "
                    "Edaizi/EvoEnv at a pinned commit, checksums verified), into the occubench cache.")
    download.add_argument("dataset", nargs="?", choices=DATASETS, default="occubench",
                          help="which data set (default: occubench)")
    download.add_argument("--dest", default=None,
                          help="directory to write the data into (default: ./data; for awm and traineebench, the "
                               "occubench cache)")
    download.add_argument("--url", default=None,
                          help="tarball URL to fetch instead of the pinned GitHub archive (or set OCCUBENCH_DATA_URL; "
                               "for traineebench, OCCUBENCH_TRAINEEBENCH_URL)")
    download.add_argument("--revision", default=None,
                          help="awm: the dataset's commit sha (or branch or tag) to fetch instead of the pinned one")
    download.set_defaults(func=_download)
    verify = actions.add_parser("verify", help="check a data directory against the pinned checksums")
    verify.add_argument("--dir", default="data", help="data directory to check (default: ./data)")
    verify.set_defaults(func=_verify)
