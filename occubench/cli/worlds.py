"""``occubench worlds``: world packages — pack a folder of worlds, push it to a registry, pull (install), list and
remove them.

A package folder holds its worlds by kind (``executable/``, ``occubench/``, ``awm/``, ``workplace/``); ``pack``
writes it as one reproducible tar and prints its digest. References: ``oci://HOST/NAME:VERSION`` (any OCI
registry), ``git+URL@VERSION`` (a git repository, a tag per version), ``hf://OWNER/NAME@VERSION`` (a Hugging Face
Hub dataset repository); ``@sha256:...`` in place of a version names a package by its digest. ``pull`` installs a
package only once every world of it passed validation in the sandbox. Credentials come from each registry's own
tools (``docker login``, git's credential helpers, ``hf auth login``); occubench never writes one down.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from occubench.errors import ConfigError
from occubench.util.console import rich_console
from occubench.util.text import markup, terminal

if TYPE_CHECKING:
    from occubench.hub.package import Manifest

_FIELDS = ("name", "version", "license", "description", "requires_occubench")


def _pack(args: argparse.Namespace) -> int:
    from occubench.hub.package import describe, pack

    folder, fields = Path(args.dir), _given(args)
    if args.out:
        out = Path(args.out)
    else:
        named = describe(folder, **fields)
        out = Path(f"{named.name.replace('/', '-')}-{named.version}.tar")
    manifest = pack(folder, out, **fields)
    _said(args, manifest, f"packed into {out}", tar=str(out))
    return 0


def _given(args: argparse.Namespace) -> dict[str, str]:
    """The package metadata given as flags."""
    return {key: value for key in _FIELDS if (value := getattr(args, key)) is not None}


def _push(args: argparse.Namespace) -> int:
    from occubench.hub.package import pack, unpack
    from occubench.hub.refs import parse
    from occubench.hub.registry import registry_for

    source = Path(args.package)
    reference = parse(args.ref, pinned=False, flag="REF")
    if reference.digest:
        raise ConfigError(f"REF {args.ref}: push names a version (its digest is the package's own)")
    with tempfile.TemporaryDirectory(prefix="occubench-push-") as work:
        tar = Path(work) / "package.tar"
        if source.is_dir():
            pack(source, tar, **_given(args))
        elif source.is_file():
            tar = source
        else:
            raise ConfigError(f"PACKAGE {source}: neither a package folder nor a package tar")
        manifest = unpack(tar, Path(work) / "package", str(source))  # pushed as it will be pulled: verified
        if reference.version not in (None, manifest.version):
            raise ConfigError(f"REF {args.ref}: version {reference.version}, but the package is version "
                              f"{manifest.version}; push it as its own version")
        reference = replace(reference, version=manifest.version)
        replaced = registry_for(reference).push(Path(work) / "package", manifest, reference, force=args.force)
    pinned = reference.at(manifest.digest)
    _said(args, manifest, f"pushed as {reference} and {pinned}", reference=str(reference), pinned=str(pinned),
          **({"replaced": replaced} if replaced else {}))
    if replaced and not args.json:  # what was cited as this version before: its citations no longer resolve to it
        print(f"replaced: {terminal(replaced, newlines=False)} (--force moved version {manifest.version} from it; "
              "runs that cited it refuse to resume unless pinned to its digest)")
    return 0


def _pull(args: argparse.Namespace) -> int:
    from occubench.hub.install import pull
    from occubench.hub.refs import parse

    installed = pull(parse(args.ref, flag="REF"))
    _said(args, installed.manifest, f"installed in {installed.path}", path=str(installed.path))
    return 0


def _list(args: argparse.Namespace) -> int:
    console = rich_console()
    if args.ref:
        from occubench.hub.install import versions as listed
        from occubench.hub.refs import parse

        reference = parse(args.ref, pinned=False, flag="REF")
        versions = listed(reference)
        if args.json:
            return _printed([{"version": version.version, "digest": version.digest} for version in versions])
        for version in versions:
            console.print(f"{markup(version.version)}  {version.digest}")
        if not versions:
            console.print(f"no version of {markup(str(reference))}")
        return 0
    from occubench.hub.install import list_installed, store_root

    packages = list_installed()
    if args.json:
        return _printed([{**_fields(package.manifest), "path": str(package.path)} for package in packages])
    for package in packages:
        manifest = package.manifest
        console.print(f"{package.digest}  {markup(manifest.name)} {markup(manifest.version)}  "
                      f"({', '.join(manifest.kinds)}, {len(manifest.files)} files)")
    if not packages:
        console.print(f"no world package installed in {markup(str(store_root()))}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    from occubench.hub.install import remove

    if not remove(args.digest):
        raise ConfigError(f"DIGEST {args.digest}: no installed package has it (see `occubench worlds list`)")
    print(f"removed {args.digest}")
    return 0


def _fields(manifest: Manifest) -> dict[str, Any]:
    return {"name": manifest.name, "version": manifest.version, "kinds": list(manifest.kinds),
            "files": len(manifest.files), "digest": manifest.digest}


def _printed(value: object) -> int:
    print(json.dumps(value, indent=2))  # ASCII: a package's string holds no control byte when printed
    return 0


def _said(args: argparse.Namespace, manifest: Manifest, what: str, **where: str) -> None:
    """What a command did with a package: a line for people or, with --json, its fields and ``where`` for scripts."""
    if args.json:
        _printed({**_fields(manifest), **where})
        return
    rich_console().print(f"{markup(manifest.name)} {markup(manifest.version)} ({', '.join(manifest.kinds)}, "
                         f"{len(manifest.files)} files) {markup(what)}\ndigest: {manifest.digest}")


def _metadata(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", help="the package's name, [org/]name in lower case (default: the name in the "
                        "folder's occubench-package.json)")
    parser.add_argument("--version", dest="version", help="the package's version (default: the folder's "
                        "occubench-package.json's)")
    parser.add_argument("--license", help="the worlds' license (an SPDX identifier, say CC-BY-4.0)")
    parser.add_argument("--description", help="what the worlds are, in a sentence or two")
    parser.add_argument("--requires-occubench", metavar="SPEC", help="the occubench versions the package needs, "
                        "as a version specifier ('>=0.1')")


def _json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON (the digest, name, version...) instead of "
                        "a line for people")


def add_parser(sub: argparse._SubParsersAction) -> None:
    worlds = sub.add_parser("worlds", help="world packages: pack worlds with their digest, push them to an OCI "
                            "registry, a git repository or the Hugging Face Hub, pull (install) and list them",
                            description=__doc__)
    commands = worlds.add_subparsers(dest="worlds_command", required=True, metavar="COMMAND")
    pack = commands.add_parser("pack", help="write a package folder as one reproducible tar; print its digest")
    pack.add_argument("dir", metavar="DIR", help="the package folder: executable/, occubench/, awm/, workplace/")
    pack.add_argument("--out", metavar="FILE", help="the tar to write (default: NAME-VERSION.tar here)")
    _metadata(pack)
    _json(pack)
    pack.set_defaults(func=_pack)
    push = commands.add_parser("push", help="publish a package (a folder or a packed tar) as REF's version")
    push.add_argument("package", metavar="PACKAGE", help="a package folder or a tar `occubench worlds pack` wrote")
    push.add_argument("ref", metavar="REF", help="where: oci://HOST/NAME[:VERSION], git+URL[@VERSION] or "
                      "hf://OWNER/NAME[@VERSION] (the version defaults to the package's)")
    push.add_argument("--force", action="store_true", help="move a version that holds another package to this "
                      "one (runs that cited the old one will refuse to resume)")
    _metadata(push)
    _json(push)
    push.set_defaults(func=_push)
    pull = commands.add_parser("pull", help="install a package (validated in the sandbox first); print its digest")
    pull.add_argument("ref", metavar="REF", help="oci://HOST/NAME:VERSION, git+URL@VERSION, hf://OWNER/NAME@VERSION, "
                      "or any of them with @sha256:DIGEST")
    _json(pull)
    pull.set_defaults(func=_pull)
    listing = commands.add_parser("list", help="the installed packages, or the versions a registry holds of REF")
    listing.add_argument("ref", metavar="REF", nargs="?", help="a package without a version: oci://HOST/NAME, "
                         "git+URL or hf://OWNER/NAME")
    _json(listing)
    listing.set_defaults(func=_list)
    removing = commands.add_parser("remove", help="uninstall the package of DIGEST")
    removing.add_argument("digest", metavar="DIGEST", help="sha256:... as `occubench worlds list` prints it")
    removing.set_defaults(func=_remove)
