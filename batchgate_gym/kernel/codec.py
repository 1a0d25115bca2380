"""Text actions in, tool calls out; tool results in, text observations out.

An action is one string holding one or more tool calls, written either as calls
(``open_ticket("T-1")``, ``set_status(ticket_id="T-1", status="closed")``; one
per line or separated by ``;``) or as JSON (an
object ``{"name": ..., "arguments": {...}}`` whose arguments may also be a JSON
string, ``{"tool": ..., "args": {...}}``, an OpenAI-style
``{"type": "function", "function": {...}}``, or a list of those). Calls are parsed
with :mod:`ast` and :func:`ast.literal_eval` and never evaluated. Parsing is all or
nothing: if any call is malformed, none runs, and the error says why and shows the
accepted syntax.

A tool's parameters are typed: ``str``, ``int``, ``float`` (an int is accepted and
becomes a float; a bool is not a number; only finite values), ``bool`` (only
``True``/``False``) and ``list`` (with a typed element). A parameter with a
``default`` is optional: left out, it takes the default, and a default of ``None``
also accepts an explicit ``None`` (JSON ``null``).
"""

from __future__ import annotations

import ast
import json
import keyword
import math
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any, TypeVar

from .plain import FrozenDict

MAX_ACTION_CHARS = 65_536
OBSERVATION_CHARSET = "\t\n" + "".join(chr(code) for code in range(0x20, 0x7F))
_OUTSIDE_CHARSET = re.compile(r"[^\t\n\x20-\x7e]")
_CHARSET_BYTES = OBSERVATION_CHARSET.encode("ascii")
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?|\n?```\s*$")

_TYPE_NAMES = {str: "string", list: "array", int: "integer", float: "number", bool: "boolean"}


def _a(name: str) -> str:
    """The type name with its article, as an error message says it: "an integer", "a string"."""
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


class _Required:
    """The default of a parameter that has none: the caller must give it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "REQUIRED"

    def __reduce__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True, slots=True)
class Param:
    """One tool parameter. With a ``default`` it is optional; without, required."""

    name: str
    kind: type
    description: str
    items: type | None = None  # element type of a list parameter
    default: Any = REQUIRED

    def __post_init__(self) -> None:
        for kind in (self.kind, self.items):
            if kind is not None and kind not in _TYPE_NAMES:
                raise TypeError(f"parameter {self.name!r}: no JSON type for {kind!r}")
        if (self.items is not None) != (self.kind is list):
            raise TypeError(f"parameter {self.name!r}: a list parameter, and only one, names its items")
        if not self.required and self.default is not None and _type_error(self, self.default) is not None:
            raise TypeError(f"parameter {self.name!r}: default {self.default!r} is not {_a(self.type_name)}")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def type_name(self) -> str:
        return _TYPE_NAMES[self.kind]

    @property
    def signature(self) -> str:
        text = f"{self.name}: {self.type_name}"
        return text if self.required else f"{text} = {literal(self.default)}"

    def json_schema(self) -> dict[str, Any]:
        kind: str | list[str] = self.type_name
        if not self.required and self.default is None:
            kind = [self.type_name, "null"]  # the default itself may be given
        schema: dict[str, Any] = {"type": kind, "description": self.description}
        if self.items is not None:
            schema["items"] = {"type": _TYPE_NAMES[self.items]}
        if not self.required:
            schema["default"] = self.default
        return schema


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool's name, parameters and help, in one place for codec, prompt and schema."""

    name: str
    description: str
    params: tuple[Param, ...] = ()

    @property
    def signature(self) -> str:
        return f"{self.name}({', '.join(p.signature for p in self.params)})"

    def json_schema(self) -> dict[str, Any]:
        """OpenAI function-calling format."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {p.name: p.json_schema() for p in self.params},
                    "required": [p.name for p in self.params if p.required],
                    "additionalProperties": False,
                },
            },
        }


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        """The call in call syntax, on one line, ASCII only."""
        inner = ", ".join(f"{key}={literal(value)}" for key, value in self.args.items())
        return f"{self.name}({inner})"


def literal(value: Any) -> str:
    """A value as call syntax reads it back: JSON, but ``True``, ``False`` and ``None``."""
    if isinstance(value, str):
        text: str = encode_basestring_ascii(value)  # what json.dumps gives a string
        return text
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    return json.dumps(value)


class ActionError(ValueError):
    """The action could not be turned into tool calls; the message says why."""


_EXAMPLES = {str: '"..."', list: "[...]", int: "0", float: "0.0", bool: "True"}


def tool_lines(tools: Mapping[str, ToolSpec]) -> str:
    """One indented line per tool, its signature and its help: how a task text lists them."""
    return "\n".join(f"  {spec.signature}: {spec.description}" for spec in tools.values())


def how_to_act(tools: Mapping[str, ToolSpec]) -> str:
    """A task text's paragraph on acting: the syntax (:func:`syntax_help`), then how calls run."""
    return f"How to act: {syntax_help(tools)}. Calls run in order; each result comes back as JSON."


def syntax_help(tools: Mapping[str, ToolSpec]) -> str:
    """How to write an action, with examples built from the desk's own tools."""
    specs = list(tools.values())
    plain = min(specs, key=lambda spec: len(spec.params)) if specs else ToolSpec("tool", "")
    keyword = max(specs, key=lambda spec: len(spec.params)) if specs else plain
    example = ", ".join(f"{p.name}={_EXAMPLES[p.kind]}" for p in keyword.params)
    return (
        f"Accepted syntax: one or more tool calls, e.g. {plain.name}() or {keyword.name}({example}),"
        ' one per line or separated by ";"; or JSON {"name": "...", "arguments": {...}}'
        " (or a list of such objects). Tools: " + "; ".join(spec.signature for spec in specs)
    )


def parse_action(text: object, tools: Mapping[str, ToolSpec], max_calls: int) -> list[ToolCall]:
    """Turn an action string into bound tool calls, or raise :class:`ActionError`."""
    if not isinstance(text, str):
        raise ActionError(f"an action must be a string, not {type(text).__name__}")
    if len(text) > MAX_ACTION_CHARS:
        raise ActionError(f"action is {len(text)} characters long; the limit is {MAX_ACTION_CHARS}")
    body = text.strip()
    if "```" in body:  # the fence pattern is slow on long actions; most have no fence
        body = _FENCE.sub("", body).strip()
    if not body:
        raise ActionError("empty action: no tool call found")
    if body[0] in "[{":
        return bind_calls(_read(_json_items, body), tools, max_calls)
    return _bound(_read(_parse_calls, body), tools, max_calls)


def bind_calls(items: list[Any], tools: Mapping[str, ToolSpec], max_calls: int) -> list[ToolCall]:
    """The tool calls of a JSON action already decoded: ``items`` is the list its text
    holds (``{"name": ..., "arguments": {...}}`` objects and the other JSON forms).

    It is the second half of :func:`parse_action`, which reads a JSON action's text
    and hands its list here: ``bind_calls(items, ...)`` gives exactly what
    ``parse_action(json.dumps(items), ...)`` gives, the same calls or the same
    :class:`ActionError`, without writing and reading the text (for values JSON gives
    back as they were: strings, finite numbers, ``True``, ``False``, ``None``, lists
    and objects of them). One check is the text's own and is not made here: its
    length (:data:`MAX_ACTION_CHARS`), which a caller writing no text answers for."""
    return _bound(_read(_json_calls, items), tools, max_calls)


_Read = TypeVar("_Read")
_ReadOut = TypeVar("_ReadOut")


def _read(reader: Callable[[_Read], _ReadOut], source: _Read) -> _ReadOut:
    """``reader(source)``, any failure to read it an :class:`ActionError`."""
    try:
        return reader(source)
    except ActionError:
        raise
    except (RecursionError, MemoryError):
        raise ActionError("action is nested too deeply to parse") from None
    except ValueError as exc:  # e.g. Python's limit on the digits of an int read from text
        raise ActionError(f"could not parse the action: {exc}") from None


RawCall = tuple[str, list[Any], dict[str, Any]]


def _bound(raw_calls: list[RawCall], tools: Mapping[str, ToolSpec], max_calls: int) -> list[ToolCall]:
    if len(raw_calls) > max_calls:
        raise ActionError(f"{len(raw_calls)} calls in one action; at most {max_calls} are allowed")
    return [_bind(name, args, kwargs, tools) for name, args, kwargs in raw_calls]


def json_value(text: str) -> Any:
    """``json.loads(text)``: the same value, or the same error.

    A text that is one JSON value from its first character to its last (an action
    stripped of white space, a result line an observation shows) is read by the
    decoder's scanner alone, without the Python layers around it, which cost more
    than the scan of a short text; any other text (white space around it, extra data,
    invalid JSON, a byte-order mark) goes through ``json.loads`` itself.
    """
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        return json.loads(text)
    if end != len(text):
        return json.loads(text)
    return value


_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # json.loads's own settings


def _json_items(body: str) -> list[Any]:
    try:
        value = _unique_json(body)
    except json.JSONDecodeError as exc:
        raise ActionError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    return value if isinstance(value, list) else [value]


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object of an action, refused if it names a key twice: ``json`` would keep the
    last value and drop the others unseen, so ``{"id": "A", "id": "B"}`` would run on B
    while the text also says A."""
    found = dict(pairs)
    if len(found) != len(pairs):
        repeated = _first_repeated(key for key, _value in pairs) or ""
        raise ActionError(f"a JSON object names the key {escape(repeated[:80])!r} twice")
    return found


def _first_repeated(names: Iterable[str]) -> str | None:
    """The first name given a second time, in one pass: an action can hold thousands of
    names, and counting each in the list (what finding it took) cost over a second."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


_UNIQUE_SCAN = json.JSONDecoder(object_pairs_hook=_unique_object).scan_once  # type: ignore[attr-defined]


def _unique_json(text: str) -> Any:
    """:func:`json_value` of an action's text (the same fast path), every object checked by
    :func:`_unique_object`."""
    try:
        value, end = _UNIQUE_SCAN(text, 0)
    except StopIteration:
        return json.loads(text, object_pairs_hook=_unique_object)
    if end != len(text):
        return json.loads(text, object_pairs_hook=_unique_object)
    return value


def _json_calls(items: list[Any]) -> list[RawCall]:
    if not items:
        raise ActionError("empty list: no tool call found")
    return [_json_call(item, position) for position, item in enumerate(items)]


_CALL_KEYS = frozenset({"name", "tool", "arguments", "args"})  # what names a call and its arguments


def _json_call(item: Any, position: int) -> RawCall:
    if not isinstance(item, dict):
        raise ActionError(f"call {position + 1}: expected a JSON object, got {type(item).__name__}")
    if isinstance(item.get("function"), dict):  # OpenAI tool_call wrapper
        if not _CALL_KEYS.isdisjoint(item):
            raise ActionError(f'call {position + 1}: a call inside "function" and beside it too')
        item = item["function"]
    if ("name" in item and "tool" in item) or ("arguments" in item and "args" in item):
        raise ActionError(f'call {position + 1}: give "name" and "arguments" or "tool" and "args", not both')
    # Each fallback is read only when its key is missing (the usual call has both keys).
    name = item["name"] if "name" in item else item.get("tool")
    args = item["arguments"] if "arguments" in item else item.get("args", {})
    if not isinstance(name, str):
        raise ActionError(f'call {position + 1}: missing "name" (or "tool") string')
    if isinstance(args, str):
        try:
            args = _unique_json(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise ActionError(
                f"call {position + 1}: arguments string is not valid JSON ({exc.msg})"
            ) from None
        except ActionError as exc:
            raise ActionError(f"call {position + 1}: arguments string: {exc}") from None
    if not isinstance(args, dict):
        raise ActionError(f'call {position + 1}: "arguments" must be an object')
    return name, [], args


def _parse_calls(body: str) -> list[RawCall]:
    simple = _simple_calls(body)
    if simple is not None:
        return simple
    try:
        with warnings.catch_warnings():
            # An agent's odd escapes ("\\K") are its business, not the host's warnings.
            warnings.simplefilter("ignore")
            tree = ast.parse(body, mode="exec")
    except SyntaxError as exc:
        raise ActionError(
            f"could not parse the action as tool calls: {exc.msg} (line {exc.lineno})"
        ) from None
    except ValueError as exc:
        raise ActionError(f"could not parse the action: {exc}") from None
    if not tree.body:
        raise ActionError("no tool call found")
    return [_ast_call(statement, position) for position, statement in enumerate(tree.body)]


# A call whose arguments are plain string literals (printable ASCII, no quote or
# backslash inside), alone on its line: what most actions are. Read without ast, it
# gives exactly what ast would; anything else (other literals, keywords, spacing
# ast reads differently) goes the whole way.
_SIMPLE_CALL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\((?:"([ !#-\[\]-~]*)"(?:, "[ !#-\[\]-~]*")*)?\)')
_SIMPLE_ARG = re.compile(r'"([ !#-\[\]-~]*)"')


def _simple_calls(body: str) -> list[RawCall] | None:
    """The calls of an action made only of simple calls, one per line; else ``None``."""
    calls: list[RawCall] = []
    for line in body.split("\n"):
        match = _SIMPLE_CALL.fullmatch(line)
        if match is None or keyword.iskeyword(match.group(1)):
            return None
        inner = line[len(match.group(1)) + 1 : -1]
        calls.append((match.group(1), _SIMPLE_ARG.findall(inner), {}))
    return calls


def _ast_call(statement: ast.stmt, position: int) -> RawCall:
    where = f"call {position + 1}"
    node = statement.value if isinstance(statement, ast.Expr) else None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ActionError(
            f"{where}: expected a tool call such as name(arg, key=value), got {_describe_node(statement)}"
        )
    name = node.func.id
    repeated = _first_repeated(kw.arg for kw in node.keywords if kw.arg is not None)
    if repeated is not None:  # Python itself refuses this; ast does not
        raise ActionError(f"{where}: {name}'s argument {repeated} is given twice")
    try:
        args = [ast.literal_eval(arg) for arg in node.args]
        kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg is not None}
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ActionError(
            f"{where}: arguments of {name} must be literals (strings, numbers, True, False, None, lists)"
        ) from None
    if any(kw.arg is None for kw in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
        raise ActionError(f"{where}: ** and * arguments are not accepted")
    return name, args, kwargs


def _describe_node(statement: ast.stmt) -> str:
    if isinstance(statement, ast.Expr):
        if isinstance(statement.value, ast.Call):
            return "a call of something that is not a tool name"
        return f"a bare {type(statement.value).__name__.lower()} expression"
    return f"a {type(statement).__name__.lower()} statement"


def _bind(name: str, args: list[Any], kwargs: dict[str, Any], tools: Mapping[str, ToolSpec]) -> ToolCall:
    spec = tools.get(name)
    if spec is None:
        raise ActionError(f"unknown tool {escape(name[:80])!r}; tools are: {', '.join(tools)}")
    if not args and _plainly_given(spec, kwargs):
        return ToolCall(name, {p.name: kwargs[p.name] for p in spec.params})
    if len(args) > len(spec.params):
        raise ActionError(f"{spec.signature} takes {len(spec.params)} arguments, {len(args)} given")
    bound = dict(zip((p.name for p in spec.params), args, strict=False))
    for key, value in kwargs.items():
        if key in bound:
            raise ActionError(f"{spec.signature}: {key} given twice")
        bound[key] = value
    names = [p.name for p in spec.params]
    unknown = [key for key in bound if key not in names]
    if unknown:
        raise ActionError(f"{spec.signature}: unknown argument {escape(str(unknown[0])[:80])!r}")
    for param in spec.params:
        if param.name not in bound:
            if param.required:
                raise ActionError(f"{spec.signature}: missing argument {param.name!r} (required)")
            default = param.default
            bound[param.name] = list(default) if isinstance(default, list) else default  # never shared
        elif not (param.default is None and bound[param.name] is None):
            bound[param.name] = _checked(spec, param, bound[param.name])
    return ToolCall(name, {p.name: bound[p.name] for p in spec.params})


def _plainly_given(spec: ToolSpec, kwargs: dict[str, Any]) -> bool:
    """Every parameter given by name, each a string where a string is wanted, an int (not a
    bool) where an int is, or a list of strings where one is: the binding below would
    keep each value as it is."""
    if len(kwargs) != len(spec.params):
        return False
    for param in spec.params:
        value = kwargs.get(param.name, _ABSENT)
        if param.kind is str:
            plain = type(value) is str
        elif param.kind is int:
            plain = type(value) is int
        else:
            listed = param.kind is list and param.items is str and type(value) is list
            plain = listed and all(type(item) is str for item in value)
        if not plain:
            return False
    return True


_ABSENT = object()


def _fits(kind: type, value: Any) -> bool:
    """Whether ``value`` is a ``kind``: a bool is only a bool, an int is also a float."""
    if isinstance(value, bool):
        return kind is bool
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def _type_error(param: Param, value: Any) -> str | None:
    """Why ``value`` does not fit ``param``'s type, or ``None`` if it does."""
    if not _fits(param.kind, value):
        found = "a bool" if isinstance(value, bool) else type(value).__name__
        return f"{param.name} must be {_a(param.type_name)}, not {found}"
    if param.items is not None and not all(_fits(param.items, item) for item in value):
        return f"every item of {param.name} must be {_a(_TYPE_NAMES[param.items])}"
    return None


def _number(spec: ToolSpec, param: Param, value: int | float) -> float:
    try:
        number = float(value)
    except OverflowError:  # an int past the float range
        number = math.inf
    if not math.isfinite(number):
        raise ActionError(f"{spec.signature}: {param.name} must be a finite number")
    return number


def _checked(spec: ToolSpec, param: Param, value: Any) -> Any:
    """``value`` if it fits ``param`` (ints for floats become floats), else :class:`ActionError`."""
    problem = _type_error(param, value)
    if problem is not None:
        raise ActionError(f"{spec.signature}: {problem}")
    if param.kind is float:
        return _number(spec, param, value)
    if param.items is float:
        return [_number(spec, param, item) for item in value]
    return value


def escape(text: str) -> str:
    """Replace every character outside the observation charset by an escape.

    A text already inside it (nearly every one) comes back as it is: ASCII whose bytes,
    with the charset's deleted, leave nothing (a byte table, ten times the speed of
    the pattern's search over a long query).
    """
    if within(text, _CHARSET_BYTES):
        return text
    return _OUTSIDE_CHARSET.sub(_escape_char, text)


def within(text: str, charset: bytes) -> bool:
    """Whether every character of ``text`` is one of the ASCII characters ``charset`` holds:
    its bytes, with the charset's deleted, leave nothing (no Python step per character)."""
    return text.isascii() and not text.encode("ascii").translate(None, charset)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


_CUT_MARKER = "\n...[observation cut: {} more characters]"


def cut(text: str, limit: int) -> str:
    """Keep ``text`` within ``limit`` characters, saying how many were cut.

    The result is never longer than ``limit``. A cut text is its head followed by a
    marker giving the exact number of characters dropped (the marker's own length
    counts towards the limit). Below about 45 characters the marker cannot fit, and
    the head alone is kept.
    """
    if len(text) <= limit:
        return text
    removed = len(text) - limit
    while True:  # the count's digits lengthen the marker, which drops more; at most a few rounds
        marker = _CUT_MARKER.format(removed)
        kept = limit - len(marker)
        if kept < 0:
            return text[: max(limit, 0)]
        if len(text) - kept == removed:
            return text[:kept] + marker
        removed = len(text) - kept


COMPACT = (",", ":")


def json_encoder(
    *, sort_keys: bool = False, allow_nan: bool = False, separators: tuple[str, str] = COMPACT
) -> Callable[[Any], str]:
    """An ASCII JSON encoder, built once: ``json.dumps`` and ``JSONEncoder.encode`` build a
    new one on every call, which costs more than encoding a small value.

    Its text is exactly :class:`json.JSONEncoder`'s with the same options (by default
    compact, separators ``","`` and ``":"``; ``json.dumps``'s own are ``(", ", ": ")``);
    only a value that contains itself is not looked for (JSON read from text never
    does, nor a call written by a program), and fails with ``RecursionError``.
    """
    item, key = separators
    python = json.JSONEncoder(
        sort_keys=sort_keys, separators=separators, ensure_ascii=True, allow_nan=allow_nan
    )
    if c_make_encoder is None:  # an interpreter without the C accelerator
        return python.encode
    native = c_make_encoder(
        None, python.default, encode_basestring_ascii, None, key, item, sort_keys, False, allow_nan
    )

    def encode(value: Any) -> str:
        if isinstance(value, str):
            text: str = encode_basestring_ascii(value)
            return text
        return "".join(native(value, 0))

    return encode


class SharedTexts:
    """An encoder that keeps the text of each read-only value it encodes.

    A :class:`~.plain.FrozenDict` made by :func:`~.plain.frozen` cannot change, and the
    same one is shared by every world of a case (its listing, contract, profiles), so its
    text is made once and handed out again: id -> (the value, held so that its id stays
    its own, its text); the last ``most`` are kept. Any other value is encoded every time.
    """

    def __init__(self, encode: Callable[[Any], str], most: int) -> None:
        self._encode = encode
        self._most = most
        self._kept: dict[int, tuple[Any, str]] = {}

    def __call__(self, value: Any) -> str:
        if type(value) is not FrozenDict:
            return self._encode(value)
        known = self._kept.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        text = self._encode(value)
        if len(self._kept) >= self._most:
            self._kept.clear()
        self._kept[id(value)] = (value, text)
        return text


_compact = SharedTexts(json_encoder(), 4096)


def compact_json(value: Any) -> str:
    """A result as the observation shows it: compact ASCII JSON, no NaN or infinity (a
    read-only value's text made once: :class:`SharedTexts`)."""
    return _compact(value)
