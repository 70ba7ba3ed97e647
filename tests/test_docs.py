"""The documentation: the site builds with ``mkdocs build --strict`` and its references are generated, the shell
blocks the docs mark runnable run, the README stays short.

A fenced block whose info string is ``bash`` and which the line ``<!-- runnable -->`` precedes is a runnable block.
The runnable blocks of one file run in order, each as ``bash -euo pipefail -c BLOCK``, in one fresh working directory
per file, with a clean environment: this virtualenv's ``bin`` first on PATH (``occubench``, ``python`` and ``pytest``
are this checkout's), a fresh HOME, no ``OPENAI_*`` or ``OCCUBENCH_*`` variable but ``OCCUBENCH_DOCS_REPO`` (the
repository root), so a block reaches no endpoint a reader's shell would have configured.

``<!-- runnable peer=NAME -->`` marks a block run in the virtualenv of peer project NAME instead (its ``bin`` first on
PATH, as if the reader had activated it): the one `.ci/peers.sh` made, found through ``OCCUBENCH_PEERS``. Without it
the file's other blocks still run, and the test is then skipped (failed with ``OCCUBENCH_REQUIRE_PEERS``), as the
integration tests are.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import re
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import occubench
from occubench.cli import build_parser
from tests.conftest import peer

REPO = Path(__file__).resolve().parents[1]
MARKER = "<!-- runnable -->"
BLOCK_TIMEOUT_S = 600
README_MAX_LINES = 200


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    code: str
    peer: str | None = None  # the peer project whose virtualenv runs it


_MARKER = re.compile(r"<!-- runnable(?: peer=(?P<peer>[a-z][a-z0-9_-]*))? -->")


_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*?)[ \t]*$")
#: ``&`` as a shell control operator (a command sent to the background); not ``&&``, ``2>&1``, ``&>`` or ``a&b``.
_BACKGROUND = re.compile(r"(?<![&>|<\\])&(?=[ \t;)]|$)")


def runnable_blocks(text: str) -> list[Block]:
    """The runnable blocks of a Markdown text, in order. Fences nest as in CommonMark: a fence closes only with
    the same character, at least as long, so a ``` line inside a ~~~ block is content. Only blank lines may stand
    between the marker and its fence. A marker that precedes no ``bash`` fence, and a runnable block that starts a
    background job, are errors (ValueError): a block the reader is told to run must be one the test runs."""
    lines = text.splitlines()
    blocks: list[Block] = []
    marked_at: int | None = None  # line index of a marker waiting for its fence
    marked_peer: str | None = None
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence:
            info, body, end = _fenced(lines, index, fence)
            if marked_at is not None:
                blocks.append(_runnable(marked_at, index, info, body, marked_peer))
                marked_at = None
            index = end + 1
            continue
        stripped = lines[index].strip()
        if stripped and marked_at is not None:
            raise ValueError(f"line {marked_at + 1}: {MARKER} precedes no ```bash block")
        if marker := _MARKER.fullmatch(stripped):
            marked_at, marked_peer = index, marker["peer"]
        index += 1
    if marked_at is not None:
        raise ValueError(f"line {marked_at + 1}: {MARKER} precedes no ```bash block")
    return blocks


def _fenced(lines: list[str], index: int, fence: re.Match[str]) -> tuple[list[str], list[str], int]:
    """The info words and body of the block whose fence opens at ``index``, and the index of its closing fence."""
    char, length, indent = fence["fence"][0], len(fence["fence"]), len(fence["indent"])
    body: list[str] = []
    end = index + 1
    while end < len(lines) and not re.match(rf"^[ \t]*{re.escape(char)}{{{length},}}[ \t]*$", lines[end]):
        body.append(lines[end][indent:] if lines[end][:indent].strip() == "" else lines[end].lstrip())
        end += 1
    return fence["info"].split(), body, end


def _runnable(marked_at: int, index: int, info: list[str], body: list[str], peer: str | None) -> Block:
    if not info or info[0] != "bash":
        raise ValueError(f"line {marked_at + 1}: {MARKER} precedes a ```{' '.join(info)} block, not a ```bash one")
    for number, code_line in enumerate(body, start=index + 2):
        if _BACKGROUND.search(code_line.split(" #", 1)[0]) and not code_line.lstrip().startswith("#"):
            raise ValueError(f"line {number}: a runnable block must not start a background job (&): "
                             f"{code_line.strip()}")
    return Block(line=index + 1, code="\n".join(body), peer=peer)


def _doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def _runnable_files() -> list[Path]:
    """The doc files with at least one runnable block; a file whose markers are malformed too, so its test fails
    with the extractor's error (a file that shows the marker only inside an example block has none)."""
    found = []
    for path in _doc_files():
        try:
            if runnable_blocks(path.read_text(encoding="utf-8")):
                found.append(path)
        except ValueError:
            found.append(path)
    return found


def _clean_env(home: Path) -> dict[str, str]:
    """What a runnable block sees: this interpreter's bin directory first on PATH, a fresh HOME, no key, endpoint
    or occubench setting of the shell running the tests."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        "PATH": os.pathsep.join([bin_dir, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "COLUMNS": "120",
        "PYTHONUNBUFFERED": "1",
        "OCCUBENCH_DOCS_REPO": str(REPO),
    }


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


# --- the extractor ---------------------------------------------------------------------------------------------

SAMPLE = """\
# Title

```bash
echo not marked
```

<!-- runnable -->
```bash
occubench suites
```

<!-- runnable peer=harbor -->

```bash title="two lines"
echo one
echo two 2>&1 && echo 'a&b'
```

~~~markdown
<!-- runnable -->
```bash
echo inside a tilde fence: an example of the convention, not a block
```
~~~

- A list item:

    <!-- runnable -->
    ```bash
    echo indented
    ```

````text
```bash
echo in a four-backtick fence
```
````
"""


def test_the_extractor_finds_marked_bash_blocks_only() -> None:
    blocks = runnable_blocks(SAMPLE)
    assert [block.code for block in blocks] == ["occubench suites", "echo one\necho two 2>&1 && echo 'a&b'",
                                                "echo indented"]
    assert [block.peer for block in blocks] == [None, "harbor", None]
    assert [block.line for block in blocks] == [8, 14, 29]
    assert SAMPLE.splitlines()[blocks[0].line - 1] == "```bash"


@pytest.mark.parametrize(("text", "error"), [
    (f"{MARKER}\n```python\nprint(1)\n```\n", "precedes a ```python block"),
    (f"{MARKER}\nSome text.\n\n```bash\necho\n```\n", "precedes no ```bash block"),
    (f"{MARKER}\n{MARKER}\n```bash\necho\n```\n", "precedes no ```bash block"),
    (f"text\n{MARKER}\n", "line 2: <!-- runnable --> precedes no ```bash block"),
    (f"{MARKER}\n```bash\noccubench serve --env x &\n```\n", "line 3: a runnable block must not start a background"),
    (f"{MARKER}\n```bash\nsleep 1 & wait\n```\n", "background job"),
])
def test_the_extractor_refuses_a_marker_it_cannot_honour(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=re.escape(error)):
        runnable_blocks(text)


def test_the_block_environment_carries_no_key_or_endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-shell")
    monkeypatch.setenv("OCCUBENCH_DATA", "/somewhere")
    env = _clean_env(tmp_path)
    assert not [name for name in env if name.startswith("OPENAI_")]
    assert [name for name in env if name.startswith("OCCUBENCH_")] == ["OCCUBENCH_DOCS_REPO"]
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", "command -v occubench python pytest; env"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True)
    resolved = done.stdout.splitlines()[:3]
    assert all(Path(path).parent == Path(sys.executable).parent for path in resolved), resolved
    assert "sk-from-the-shell" not in done.stdout


# --- the runnable blocks of the docs ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("path", _runnable_files(), ids=lambda path: str(path.relative_to(REPO)))
def test_runnable_blocks(path: Path, tmp_path: Path) -> None:
    where = path.relative_to(REPO)
    try:
        blocks = runnable_blocks(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        pytest.fail(f"{where}: {exc}")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    env = _clean_env(home)
    peers = os.environ.get("OCCUBENCH_PEERS")
    left_out: list[str] = []  # peers whose blocks could not run here
    for block in blocks:
        block_env = env
        if block.peer is not None:
            folder = Path(peers) / block.peer if peers else None
            if folder is None or not (folder / "bin" / "python").exists():
                left_out.append(block.peer)
                continue
            block_env = {**env, "PATH": os.pathsep.join([str(folder / "bin"), env["PATH"]]),
                         "VIRTUAL_ENV": str(folder)}
        status, stdout, stderr = _run_block(block.code, work, block_env)
        if status != 0:
            what = f"ran over {BLOCK_TIMEOUT_S} s" if status is None else f"exited with status {status}"
            command = textwrap.indent(block.code, "    ")
            pytest.fail(f"{where}:{block.line}: the block {what}\n{command}\n--- stdout (tail) ---\n"
                        f"{_tail(stdout, 15)}\n--- stderr (tail) ---\n{_tail(stderr)}", pytrace=False)
    for name in left_out:
        peer(name)  # skips, or fails where the peers are required


def _run_block(code: str, cwd: Path, env: dict[str, str]) -> tuple[int | None, str, str]:
    """``bash -euo pipefail -c code`` in a session of its own: its exit status (None when it ran over the timeout)
    and output. Whatever the block started is ended with it."""
    process = subprocess.Popen(["bash", "-euo", "pipefail", "-c", code], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    status: int | None
    try:
        stdout, stderr = process.communicate(timeout=BLOCK_TIMEOUT_S)
        status = process.returncode
    except subprocess.TimeoutExpired:
        status = None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    if status is None:
        stdout, stderr = process.communicate()
    return status, stdout, stderr


def test_the_readme_is_at_most_200_lines() -> None:
    lines = len((REPO / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: the details belong in docs/"


# --- the site ----------------------------------------------------------------------------------------------------

def _commands(parser: argparse.ArgumentParser, prefix: str) -> dict[str, argparse.ArgumentParser]:
    """Every command's full name (``occubench synth simulated``) and its parser, walked independently of the hook."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[f"{prefix} {name}"] = sub
                found.update(_commands(sub, f"{prefix} {name}"))
    return found


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path: Path) -> None:
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        if importlib.util.find_spec(module.split(".")[0]) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{_tail(done.stderr, 60)}"

    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    commands = _commands(build_parser(), "occubench")
    assert {"occubench run", "occubench workplace generate", "occubench synth executable",
            "occubench data download"} <= set(commands)
    for name, parser in commands.items():
        anchor = re.sub(r"[^a-z0-9]+", "-", name.lower())
        assert f'id="{anchor}"' in cli and name in cli, f"{name} is missing from the CLI reference"
        for action in parser._actions:
            for flag in action.option_strings:
                assert flag in ("-h", "--help") or flag in cli, f"{name} {flag} is missing from the CLI reference"
    assert "--max-workers" in cli and "<!-- cli-reference -->" not in cli

    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    missing = [name for name in occubench.__all__ if f'id="occubench.{name}"' not in api]
    assert not missing, f"occubench.__all__ names missing from docs/reference/api.md: {missing}"
    assert ":class:" not in api and "<autoref" not in api  # rST roles became links or code
