"""Language models as players: episodes as OpenAI-style chats, for any desk.

:mod:`.chat` maps an environment's text episode onto chat messages (system and
user from the reset observation, one step per assistant message, tool results as
``tool`` messages); :mod:`.scripted` plays a text policy as if it were a model,
which is how the adapter, and anything built on it, is tested without a model.
Core code: it needs neither Gymnasium nor a model client, only an environment
object with ``reset`` and ``step``.

Imported only when asked for (they need the ``api`` extra): :mod:`.server`, a
local chat-completions server whose answers are a scripted policy's (``batchgate
serve``); :mod:`.runner`, rollouts against any such API on the ``openai`` client
(``batchgate run-model``); :mod:`.results`, its result files held to their run's
manifest (:mod:`.certified`) and re-graded from their logs, and :mod:`.summary`,
their figures (``batchgate report --results``); :mod:`.verification`, a file checked
row by row against a public key (``batchgate verify``). :mod:`.trl_env` gives each desk's tools as a TRL
environment class; :mod:`.verifiers_env` each desk as a verifiers environment
(the ``verifiers`` extra).
"""

from __future__ import annotations

from .chat import DEFAULT_NUDGE, ChatEpisode, ChatSettings, ChatStep, Message
from .scripted import ScriptedModel, observation_since

__all__ = [
    "DEFAULT_NUDGE",
    "ChatEpisode",
    "ChatSettings",
    "ChatStep",
    "Message",
    "ScriptedModel",
    "observation_since",
]
