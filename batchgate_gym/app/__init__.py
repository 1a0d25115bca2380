"""The ``batchgate`` command: one module per subcommand, over the play loop
(:mod:`batchgate_gym.evaluation`) and the desk registry.

Nothing else in the package imports it (``tests/test_layout.py``); the core modules
import neither it nor ``batchgate_gym.envs`` and ``batchgate_gym.policies``.
"""
