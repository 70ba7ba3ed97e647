"""The contracts every world kind and every entry point share: Task, Environment (+ wrappers), tools, Agent,
Trajectory, verifiers, Result, Suite."""
