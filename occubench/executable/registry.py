"""The executable worlds: the built-in ones (every folder under ``worlds/``), or those of a folder given with
``--worlds-dir`` (one subfolder per world, shaped as the built-in ones, such as ``occubench synth executable``
writes).

What a run, a listing or a validation uses are :class:`IsolatedWorld` s: every world, built-in or not, is loaded and
executed in a worker process (:mod:`occubench.executable.isolated`), a world from outside the package only in a
sandboxed one. :func:`load_world` and :func:`builtin_worlds` give the built-in worlds' definitions in this process,
for the library API; :func:`load_world_folder` is what a worker runs to load a folder (the allow-list first).
"""

from __future__ import annotations

import hashlib
import importlib
import sys
import types
from pathlib import Path

from occubench.errors import ConfigError
from occubench.executable.isolated import IsolatedWorld, builtin_isolated, load_isolated
from occubench.executable.world import World
from occubench.sandbox import provider_for
from occubench.sandbox.allowlist import check_source
from occubench.util.untrusted import folder_files, read_file

BUILTIN_SUITE = "executable"
_WORLDS = Path(__file__).parent / "worlds"


def world_names() -> list[str]:
    return sorted(p.name for p in _WORLDS.iterdir() if (p / "__init__.py").is_file())


def load_world(name: str) -> World:
    """A built-in world's definition, in this process."""
    if name not in world_names():
        raise ConfigError(f"unknown environment {name!r}; built-in ones: {', '.join(world_names())}")
    return importlib.import_module(f"occubench.executable.worlds.{name}").world


def builtin_worlds() -> list[World]:
    return [load_world(name) for name in world_names()]


def worlds_of(worlds_dir: str | Path | None, trust: bool = False) -> list[IsolatedWorld]:
    """The worlds in ``worlds_dir``, or the built-in ones without it, each loaded by a worker. Outside worlds need
    a sandbox, or ``trust``."""
    if worlds_dir is None:
        return builtin_isolated(_WORLDS, builtin_worlds(), provider_for(True, "the built-in worlds"))
    root = Path(worlds_dir)
    if not root.is_dir():
        raise ConfigError(f"--worlds-dir: {root} is not a folder")
    folders = sorted(p for p in root.iterdir() if (p / "__init__.py").is_file())
    if not folders:
        raise ConfigError(f"--worlds-dir: {root} holds no world folder (a subfolder with schema.sql, seed.sql and "
                          "__init__.py)")
    for folder in folders:
        if folder.is_symlink():
            raise ConfigError(f"{folder}: a symbolic link; a world folder is a folder of --worlds-dir itself")
        files = folder_files(folder)  # the rules of what the harness reads: no link, regular files, sizes
        for name in ("schema.sql", "seed.sql"):
            if name not in files:
                raise ConfigError(f"{folder}: no {name} (a world folder holds schema.sql, seed.sql and __init__.py)")
    return load_isolated(root, folders, provider_for(trust, f"--worlds-dir {root}"))


def world_named(name: str, worlds: list[IsolatedWorld], worlds_dir: str | Path | None) -> IsolatedWorld:
    found = next((world for world in worlds if world.name == name), None)
    if found is None:
        where = f"in {worlds_dir}" if worlds_dir is not None else "built-in ones"
        raise ConfigError(f"unknown environment {name!r}; {where}: {', '.join(sorted(w.name for w in worlds))}")
    return found


def load_world_folder(folder: Path, *, allow_list: bool = True) -> World:
    """The world a folder defines, its ``__init__.py`` checked by the allow-list and then run: exactly the text that
    was checked (compiled here, never from a cached ``.pyc``). Only the tests of the OS sandbox, which must see what
    world code does once past the allow-list, load without it (:mod:`occubench.testing.unchecked`)."""
    path = folder / "__init__.py"
    try:
        source = read_file(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read the world's code ({exc})") from None
    problems = check_source(source) if allow_list else []
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
