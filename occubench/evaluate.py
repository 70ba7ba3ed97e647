"""``python -m occubench.evaluate``: the original OccuBench harness's command, with the flags of ``occubench run``."""

from occubench.cli.run import main

if __name__ == "__main__":
    raise SystemExit(main())
