"""Trainee-Bench as its authors run it: their benchmark configs, their eleven task families and their scoring,
beside occubench's own workplace days (:mod:`occubench.workplace`)."""
