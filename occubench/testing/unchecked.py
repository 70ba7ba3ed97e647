"""A worker service for testing the OS sandbox alone: executable worlds loaded without the allow-list.

The allow-list is the second wall; what the sandbox must hold is what world code does once past it. Tests start
workers of this service (``load_isolated(..., service="occubench.testing.unchecked")``) to run hostile worlds'
code as written. The harness never starts it for a world.
"""

from __future__ import annotations

import functools

from occubench.executable.registry import load_world_folder
from occubench.executable.service import WorldService

HANDLERS = WorldService(functools.partial(load_world_folder, allow_list=False)).handlers()
