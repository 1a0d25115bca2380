"""BadBatchGate's environments: :mod:`.text` (``batchgate_gym/BadBatchGate-v0``),
:mod:`.macro` with :mod:`.macro_codec` (``batchgate_gym/BadBatchGateMacro-v0``) and
:mod:`.team` (PettingZoo, also as :mod:`.team_v0`)."""
