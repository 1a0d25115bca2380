"""A Text space for ASCII observations that also works in shared memory.

Gymnasium's ``AsyncVectorEnv`` (shared memory on, its default) decodes a ``Text``
observation from shared memory once, when the vector env is built, and then keeps
returning those stale strings. :class:`AsciiText` reads shared memory through a
live view instead, so every step sees the strings the workers just wrote; it also
encodes, decodes, samples and checks membership with numpy and bytes rather than one
Python call per character.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.spaces.utils import flatten
from gymnasium.vector.utils import read_from_shared_memory

from batchgate_gym.kernel.codec import within


class AsciiText(spaces.Text):
    """``spaces.Text`` whose charset is ASCII (checked at construction)."""

    def __init__(self, max_length: int, *, min_length: int = 0, charset: str, seed: Any = None) -> None:
        if not charset.isascii():
            raise ValueError("AsciiText needs an ASCII charset")
        super().__init__(max_length, min_length=min_length, charset=charset, seed=seed)
        self._codes = np.frombuffer("".join(self.character_list).encode("ascii"), dtype=np.uint8)
        self._index = np.full(128, len(self.character_set), dtype=np.int32)
        self._index[self._codes] = np.arange(len(self._codes), dtype=np.int32)
        self._charset_bytes = self._codes.tobytes()

    def contains(self, x: Any) -> bool:
        """``Text.contains`` over bytes: a string of an allowed length whose characters all
        lie in the charset (deleting the charset's bytes leaves nothing), without one
        Python step per character; checkers and property tests call it on every step."""
        if not isinstance(x, str) or not self.min_length <= len(x) <= self.max_length:
            return False
        return within(x, self._charset_bytes)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """``Text.sample``'s draw, the same string for the same seed, written from byte codes:
        Gymnasium joins one numpy string per character, which for a 65,536-character action
        space made random actions most of what PettingZoo's checkers spend."""
        if mask is not None or probability is not None:
            return str(super().sample(mask, probability))
        length = self.np_random.integers(self.min_length, self.max_length + 1)
        uniform = np.ones(len(self.character_set)) / len(self.character_set)
        # the draw Gymnasium makes, as indices: choice over the list indexes it with these
        picked = self.np_random.choice(len(self.character_list), size=length, p=uniform)
        raw: bytes = self._codes[picked].tobytes()
        return raw.decode("ascii")

    def encode(self, text: str) -> np.ndarray:
        out = np.full(self.max_length, len(self.character_set), dtype=np.int32)
        raw = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        out[: len(raw)] = self._index[raw]
        return out

    def decode(self, values: np.ndarray) -> str:
        kept = values[values < len(self.character_set)]
        raw: bytes = self._codes[kept].tobytes()
        return raw.decode("ascii")


# Gymnasium types flatten's fallback as ``(space: Space[T], x: T)``; mypy's singledispatch
# check cannot solve that T for a registered subclass, though Text is a Space[str].
@flatten.register(AsciiText)
def _flatten_ascii(space: AsciiText, x: str) -> np.ndarray:  # type: ignore[misc]
    return space.encode(x)


class LiveTexts(Sequence[str]):
    """The strings currently in a shared-memory buffer, decoded on each access."""

    def __init__(self, space: AsciiText, buffer: Any, n: int) -> None:
        self._space = space
        self._data = np.frombuffer(buffer.get_obj(), dtype=np.int32).reshape((n, space.max_length))

    def __len__(self) -> int:
        return self._data.shape[0]

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        return self._space.decode(self._data[index])

    def __iter__(self) -> Iterator[str]:
        return (self._space.decode(row) for row in self._data)

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __copy__(self) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return f"LiveTexts({tuple(self)!r})"


@read_from_shared_memory.register(AsciiText)
def _read_ascii(space: AsciiText, shared_memory: Any, n: int = 1) -> LiveTexts:
    return LiveTexts(space, shared_memory, n)


__all__ = ["AsciiText", "LiveTexts"]
