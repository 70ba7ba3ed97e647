"""OccuBench: evaluate AI agents on professional work."""
