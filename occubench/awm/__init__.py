"""Worlds in the Agent World Model's published format (AgentWorldModel-1K): a world per scenario, a task per task
text, the scenario's FastAPI application as its tools and per-task code that verifies the final database.

What the harness does with such a set is read it as data (:mod:`occubench.awm.data`): which scenarios have which
parts, and what is missing or unreadable. The application and verifier code are another author's programs and run
only in the sandbox worker.
"""
