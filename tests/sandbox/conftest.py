"""The sandbox tests' zygote: workers forked from it, as AWM worlds' are on kernels with Landlock ABI 6."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from occubench.sandbox import Provider
from occubench.sandbox.forking import Forking
from occubench.sandbox.landlock import REQUIRED_ABI, abi
from tests.conftest import extra_reason


@pytest.fixture
def zygote(sandbox: Provider, tmp_path: Path) -> Iterator[Forking]:
    pytest.importorskip("sqlalchemy", reason=extra_reason("awm"))  # the applications here are FastAPI ones
    if abi() < REQUIRED_ABI:
        pytest.skip(f"this kernel's Landlock ABI is {abi()}: workers are not forked here")
    from occubench.awm.world import PRELOAD

    forked = Forking(sandbox, tmp_path, PRELOAD)
    yield forked
    forked.close()
