"""``python -m occubench.cli``, as when the command line was one module."""

import sys

from occubench.cli import main

sys.exit(main())
