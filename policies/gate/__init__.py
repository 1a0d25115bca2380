"""BadBatchGate's policies: :mod:`.reference` (careful, naive, refuse-all),
:mod:`.attackers` (a package: the cheats, the oracles and the baseline), :mod:`.team`
(the team game's), :mod:`.learned` (a macro network as a text policy) and
:mod:`.rules_from_profile` (what a profile alone shows of the contract)."""
