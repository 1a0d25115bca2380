"""RefundDesk's environments: :mod:`.text` (``batchgate_gym/RefundDesk-v0``),
:mod:`.macro` with :mod:`.macro_codec` (``batchgate_gym/RefundDeskMacro-v0``) and
:mod:`.team` (PettingZoo, also as :mod:`.team_v0`)."""
