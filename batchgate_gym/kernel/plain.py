"""Plain values: read-only copies, and reading ints and reprs safely for error messages.

Cases and prepared worlds are shared: one split is read once per process and every
environment serves the same objects. What a caller gets from them is therefore
read-only (:func:`frozen`), so that no caller can change another episode's world.
A frozen value is still a ``dict`` or a ``tuple``: JSON encoders, ``pickle`` and
``==`` treat it as the plain value it was made from.

Settings and knobs are checked with :func:`as_int` (ints and integer scalars such
as ``numpy.int64``, never bools) and named in errors with :func:`short_repr`.
"""

from __future__ import annotations

import marshal
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, SupportsIndex


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


class KeptByForm:
    """``make(value)``, made once per distinct value in this process and handed out again.

    Values are told apart by their ``marshal`` form, which keeps types (``1``, ``1.0`` and
    ``True``; ``0.0`` and ``-0.0``) and key order apart, so one form makes one result; a
    value holding any other type (a dict subclass, any object) is made afresh each time.
    The last ``most`` forms are kept.
    """

    __slots__ = ("_kept", "_make", "_most")

    def __init__(self, make: Callable[[Any], Any], most: int) -> None:
        self._make = make
        self._most = most
        self._kept: dict[bytes, Any] = {}

    def __call__(self, value: Any) -> Any:
        try:
            key = marshal.dumps(value, 2)
        except ValueError:  # a type marshal does not write
            return self._make(value)
        kept = self._kept.get(key)
        if kept is None:
            if len(self._kept) >= self._most:
                self._kept.clear()
            kept = self._kept[key] = self._make(value)
        return kept


frozen_shared = KeptByForm(frozen, 256)
"""(:class:`KeptByForm`) :func:`frozen`, made once per distinct value and shared: every
case of a file carries the same contract, say, and freezing it again for each case cost
more than reading the rest of the case."""


def as_int(value: object) -> int | None:
    """An int for ints and integer scalars such as ``numpy.int64``; ``None`` for anything
    else, bools included."""
    if type(value) is int:  # the common case, without the protocol check's cost
        return value
    if isinstance(value, bool) or not isinstance(value, SupportsIndex):
        return None  # bool is excluded here; numpy's bool refuses operator.index by itself
    try:
        return operator.index(value)
    except TypeError:
        return None


def short_repr(value: object) -> str:
    """A repr of at most 60 characters for an error message (a huge int has none)."""
    try:
        text = repr(value)
    except Exception:  # an int too long to print, an object whose repr fails
        return f"a {type(value).__name__}"
    return text if len(text) <= 60 else f"{text[:57]}..."


SEED_BOUND = 2**63  # a case seed lies in [-SEED_BOUND, SEED_BOUND)


def check_int(name: str, value: object, low: int, high: int, bound: str | None = None) -> int:
    """``value`` as an int in ``low .. high``; a bool or a non-integer is refused with a
    ``ValueError`` naming ``name`` and ``bound`` (by default the range)."""
    number = as_int(value)
    if number is None or not low <= number <= high:
        bound = bound or f"an int in {low:,}..{high:,}"
        raise ValueError(f"{name} must be {bound}, not {short_repr(value)}")
    return number


def check_bool(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False``; anything else (``1``, ``"yes"``, ``None``)
    is refused with a ``ValueError`` naming ``name``."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, not {short_repr(value)}")
    return value


def check_seed(seed: object, name: str = "seed") -> int:
    """A case seed: an int (not a bool) in ``[-2**63, 2**63)``."""
    return check_int(name, seed, -SEED_BOUND, SEED_BOUND - 1, "an int in [-2**63, 2**63)")


def checked_family_knobs(
    knobs: Mapping[str, Any],
    defaults: Mapping[str, Any],
    families: Sequence[str],
    variants: Callable[[str], int],
) -> tuple[dict[str, Any], str | None, int | None]:
    """A generator's knobs merged over ``defaults`` (an unknown name is refused), and
    its ``family`` and ``variant`` checked: ``family`` ``None`` or one of ``families``;
    ``variant`` ``None`` or an int in ``0 .. variants(family) - 1``, only with a family.
    Every problem is a ``ValueError`` naming the knob and its bound."""
    unknown = [name for name in knobs if name not in defaults]
    if unknown:
        raise ValueError(f"unknown scale knob {unknown[0]!r}; the knobs are {', '.join(defaults)}")
    given = {**defaults, **knobs}
    family, variant = given["family"], given["variant"]
    if family is not None and not (isinstance(family, str) and family in families):
        raise ValueError(f"family must be None or one of {', '.join(families)}, not {short_repr(family)}")
    if variant is not None:
        if family is None:
            raise ValueError("variant needs family: a variant number only means something within a family")
        top = variants(family) - 1
        variant = check_int("variant", variant, 0, top, f"an int in 0..{top} (the variants of {family!r})")
    return given, family, variant
