"""A run's episodes in other projects' formats: :mod:`occubench.export.atif` (Harbor's Agent Trajectory Interchange
Format), written by ``occubench export --format atif`` and read back by ``occubench view``. The training rows of
``--format rows`` are :mod:`occubench.engine.rollouts`."""
