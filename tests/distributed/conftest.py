"""One local Ray instance for every test of this folder: it takes seconds to start."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import extra_reason

ray = pytest.importorskip("ray", reason=extra_reason("ray"))


@pytest.fixture(scope="package", autouse=True)
def cluster() -> Iterator[str]:
    """The instance's address, for a run in another process to join."""
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
