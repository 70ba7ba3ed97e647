"""LLM-simulated worlds and tasks from a scenario, calibrated for solvability (the OccuBench pipeline)."""
