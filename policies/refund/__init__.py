"""RefundDesk's policies: :mod:`.reference` (what every one of them shares, and naive,
careful, refuse-all), :mod:`.attackers`, :mod:`.team` (the team game's) and
:mod:`.recovery` (for ``recovery=True``)."""
