"""``--worlds REF``: a run's worlds from a package, installed (and validated in the sandbox) before the run plans.

The reference is resolved to its digest once, the package pulled if it is not installed, and the suite pointed at
the package's folder of its kind (``--worlds-dir`` for executable worlds and twins, ``--data-dir`` for OccuBench
data and AWM sets, ``--days``/``--seed`` for workplace settings). The run keeps the reference as given
(``worlds``) and the digest it resolved to (``worlds_digest``): both are in ``args.json``, the report and the
run's identity, so a resumed run whose reference now names another package stops, naming both digests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from occubench.errors import ConfigError

if TYPE_CHECKING:
    from occubench.config import RunConfig
    from occubench.hub.install import Installed

#: The suite settings that name worlds, which a package's worlds take the place of.
_WORLD_SETTINGS = ("worlds_dir", "data_dir", "eval_data", "scenario_pool", "config_dir", "workplace_dir")


def with_worlds(config: RunConfig) -> RunConfig:
    """``config`` with its ``--worlds`` package installed and the suite's settings pointing into it (``config``
    itself without one). A package installed already is not asked of its registry again when the reference names
    a digest; a version is resolved each time (that is how a moved tag is noticed)."""
    if not config.worlds:
        return config
    from occubench.hub.install import pull
    from occubench.hub.refs import parse

    reference = parse(config.worlds)
    if reference.digest and config.worlds_digest not in (None, reference.digest):
        raise ConfigError(f"--worlds {config.worlds} names {reference.digest}, not worlds_digest "
                          f"{config.worlds_digest}")
    # Resolved already (by the run before it looked for its folder, or in a Ray worker's copy of the run's config):
    # that package, whatever the tag names by now.
    installed = pull(reference, resolved(config).worlds_digest)
    options, seed = _suite_settings(config, installed)
    clashing = sorted(key for key in _WORLD_SETTINGS
                      if config.suite_options.get(key) and config.suite_options[key] != options.get(key))
    if clashing:
        raise ConfigError(f"--worlds and {', '.join('--' + k.replace('_', '-') for k in clashing)} both name the "
                          "run's worlds: give one")
    update: dict[str, Any] = {"worlds_digest": installed.digest,
                              "suite_options": {**config.suite_options, **options}}
    if seed is not None:
        update["seed"] = seed
    return config.model_copy(update=update)


def resolved(config: RunConfig) -> RunConfig:
    """``config`` with ``worlds_digest``: the digest its ``--worlds`` reference names now, asked of the registry for a
    version (nothing downloaded). ``config`` itself without --worlds, or resolved already."""
    if not config.worlds or config.worlds_digest:
        return config
    from occubench.hub.install import resolve
    from occubench.hub.refs import parse

    return config.model_copy(update={"worlds_digest": resolve(parse(config.worlds))})


def cited(reference: str, digest: str) -> str:
    """A world package as results cite it: the reference as given, and the digest it resolved to."""
    return f"{reference} ({digest})"


def _suite_settings(config: RunConfig, installed: Installed) -> tuple[dict[str, Any], int | None]:
    """The suite settings that run ``installed``'s worlds of the kind ``config.suite`` takes, and a seed when the
    package sets one."""
    suite, kinds = config.suite, installed.manifest.kinds
    twin_awm = suite == "twin" and config.suite_options.get("twin_of") == "awm"
    kind = {"executable": "executable", "occubench": "occubench", "awm": "awm", "workplace": "workplace",
            "twin": "awm" if twin_awm else "executable"}.get(suite)
    name = f"{installed.manifest.name} {installed.manifest.version} ({installed.digest})"
    if kind is None:
        raise ConfigError(f"--worlds: the {suite} suite takes no world package (packages hold executable, "
                          "occubench, awm or workplace worlds)")
    if kind not in kinds:
        raise ConfigError(f"--worlds: {name} holds {', '.join(kinds)} worlds, none of the {kind} kind the {suite} "
                          "suite runs")
    folder = installed.kind_folder(kind)
    if kind == "executable":
        return {"worlds_dir": str(folder)}, None
    if kind in ("occubench", "awm"):
        return {"data_dir": str(folder)}, None
    from occubench.hub.validate import workplace_settings

    settings = workplace_settings(folder)  # checked when the package was installed: read as then
    if "seed" in config.model_fields_set and config.seed != settings.seed:
        raise ConfigError(f"--seed {config.seed}: {name} generates its days with seed {settings.seed}; leave --seed "
                          "out")
    return {"days": settings.days}, settings.seed
