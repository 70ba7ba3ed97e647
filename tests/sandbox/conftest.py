"""The sandbox tests need a provider (bubblewrap). Without one they are skipped, naming what is missing, unless
``OCCUBENCH_REQUIRE_SANDBOX`` is set (as ``.ci/run`` sets it), where a missing provider fails them."""

from __future__ import annotations

import os

import pytest

from occubench.sandbox import Provider, detect


@pytest.fixture
def sandbox() -> Provider:
    detection = detect()
    if detection.provider is None:
        if os.environ.get("OCCUBENCH_REQUIRE_SANDBOX"):
            pytest.fail(f"OCCUBENCH_REQUIRE_SANDBOX is set but there is no sandbox: {detection.reason}")
        pytest.skip(f"no sandbox provider here: {detection.reason}")
    return detection.provider
