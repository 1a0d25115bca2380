"""AnalystDesk's environment: :mod:`.text` (``batchgate_gym/AnalystDesk-v0``)."""
