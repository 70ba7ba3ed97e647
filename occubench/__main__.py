import sys

from occubench.cli import main

sys.exit(main())
