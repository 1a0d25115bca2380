"""Read-only views of plain JSON-like values, and fresh copies of them.

Cases and prepared worlds are shared: one split is read once per process and every
environment serves the same objects. What a caller gets from them must therefore
be either a view it cannot change (:func:`frozen`) or a copy of its own
(:func:`fresh`), so that no caller can change another episode's world.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn


class FrozenDict(dict):
    """A dict that refuses every change. Still a dict: JSON, pickle and ``==`` see one."""

    __slots__ = ()

    def _refuse(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError("this mapping is shared and read-only; copy it to change it")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[type, tuple[dict[Any, Any]]]:
        return (FrozenDict, (dict(self),))


def frozen(value: Any) -> Any:
    """A read-only copy: mappings become :class:`FrozenDict`, lists and tuples tuples."""
    if isinstance(value, Mapping):
        return FrozenDict({key: frozen(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(frozen(item) for item in value)
    return value


def fresh(value: Any) -> Any:
    """A new plain copy: mappings become dicts, lists and tuples lists (ready for JSON)."""
    if isinstance(value, Mapping):
        return {key: fresh(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [fresh(item) for item in value]
    return value
