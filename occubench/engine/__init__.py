"""The episode engine: an :class:`~occubench.engine.factory.EpisodeFactory` builds each episode's chain (suite,
world, wrappers, agent, verifier) from a config, and an executor runs episodes into a run directory."""
