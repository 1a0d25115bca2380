"""Wiring: runs policies against the environments (``evaluate``, the CLI).

This is the one layer that imports ``batchgate_gym.envs`` and
``batchgate_gym.policies``; the core modules never do.
"""
