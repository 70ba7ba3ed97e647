"""One Arize Phoenix server for the tracing tests of a test process: it takes seconds to start. Each test sends its
traces to a project of its own (the resource's ``openinference.project.name``) or reads its own trace ids."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.telemetry.phoenix import Phoenix, running_phoenix


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    with running_phoenix(tmp_path_factory.mktemp("phoenix")) as server:
        yield server
