"""The executable worlds: the built-in ones (every folder under ``worlds/``), or those of a folder given with
``--worlds-dir`` (one subfolder per world, shaped as the built-in ones, such as ``occubench synth executable``
writes). A world from outside the package is checked by the sandbox's allow-list before any of its code runs."""

from __future__ import annotations

import hashlib
import importlib
import sys
import types
from pathlib import Path

from occubench.errors import ConfigError
from occubench.executable.world import World

BUILTIN_SUITE = "executable"
_WORLDS = Path(__file__).parent / "worlds"


def world_names() -> list[str]:
    return sorted(p.name for p in _WORLDS.iterdir() if (p / "__init__.py").is_file())


def load_world(name: str, worlds_dir: str | Path | None = None) -> World:
    if worlds_dir is not None:
        worlds = {world.name: world for world in load_worlds_dir(worlds_dir)}
        if name not in worlds:
            raise ConfigError(f"unknown environment {name!r}; in {worlds_dir}: {', '.join(sorted(worlds))}")
        return worlds[name]
    if name not in world_names():
        raise ConfigError(f"unknown environment {name!r}; built-in ones: {', '.join(world_names())}")
    return importlib.import_module(f"occubench.executable.worlds.{name}").world


def builtin_worlds() -> list[World]:
    return [load_world(name) for name in world_names()]


def worlds_of(worlds_dir: str | Path | None) -> list[World]:
    """The worlds in ``worlds_dir``, or the built-in ones without it."""
    return builtin_worlds() if worlds_dir is None else load_worlds_dir(worlds_dir)


def load_worlds_dir(worlds_dir: str | Path) -> list[World]:
    """Every world folder in ``worlds_dir`` (subfolders holding an ``__init__.py``)."""
    root = Path(worlds_dir)
    if not root.is_dir():
        raise ConfigError(f"--worlds-dir: {root} is not a folder")
    folders = sorted(p for p in root.iterdir() if (p / "__init__.py").is_file())
    if not folders:
        raise ConfigError(f"--worlds-dir: {root} holds no world folder (a subfolder with schema.sql, seed.sql and "
                          "__init__.py)")
    return [load_world_folder(folder) for folder in folders]


def load_world_folder(folder: Path) -> World:
    """The world a folder defines, its ``__init__.py`` checked by the allow-list and then run: exactly the text that
    was checked (compiled here, never from a cached ``.pyc``)."""
    from occubench.synth.sandbox import check_source  # only worlds from outside the package load it

    path = folder / "__init__.py"
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the world's code ({exc})") from None
    problems = check_source(source)
    if problems:
        raise ConfigError(f"{path} is refused by the sandbox's allow-list: "
                          + "; ".join(f"{path}:{problem.line}: {problem.message}" for problem in problems[:10]))
    for name in ("schema.sql", "seed.sql"):
        if not (folder / name).is_file():
            raise ConfigError(f"{folder}: no {name} (a world folder holds schema.sql, seed.sql and __init__.py)")
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:12]
    module = types.ModuleType(f"occubench_world_{digest}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # typing and dataclasses look a function's module up there
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
        world = module.__dict__.get("world")
        if not isinstance(world, World):
            raise ConfigError(f"{path} defines no `world = World(...)`")
        world.tables()  # builds the database now, so that broken SQL is reported here, naming its file
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - the world's own code failed: say where
        raise ConfigError(f"{path}: the world does not load: {type(exc).__name__}: {exc}") from None
    if world.name != folder.name:
        raise ConfigError(f"{path}: the world is named {world.name!r} but its folder {folder.name!r}; they must match")
    return world
