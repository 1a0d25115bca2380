"""Actions as text: every accepted syntax, and every kind of bad input as an error."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURE_CASES, last_json

from batchgate_gym.desks.gate.tools import GATE_TOOLS, tool_schemas
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.kernel.codec import ActionError, Param, ToolCall, ToolSpec, parse_action, syntax_help

Q = ToolCall("quarantine_batch", {"batch_id": "B-1", "column": "amount", "defect_type": "missing_value"})


def parse(text: str, max_calls: int = 8) -> list[ToolCall]:
    return parse_action(text, GATE_TOOLS, max_calls)


@pytest.mark.parametrize(
    "text",
    [
        'quarantine_batch("B-1", "amount", "missing_value")',
        "quarantine_batch(batch_id='B-1', column='amount', defect_type='missing_value')",
        'quarantine_batch("B-1", defect_type="missing_value", column="amount");',
        '{"name": "quarantine_batch", "arguments": {"batch_id": "B-1", "column": "amount", "defect_type": "missing_value"}}',
        '{"name": "quarantine_batch", "arguments": "{\\"batch_id\\": \\"B-1\\", \\"column\\": \\"amount\\", \\"defect_type\\": \\"missing_value\\"}"}',
        '{"tool": "quarantine_batch", "args": {"batch_id": "B-1", "column": "amount", "defect_type": "missing_value"}}',
        '[{"type": "function", "function": {"name": "quarantine_batch", "arguments": "{\\"batch_id\\":\\"B-1\\",\\"column\\":\\"amount\\",\\"defect_type\\":\\"missing_value\\"}"}}]',
        '```python\nquarantine_batch("B-1", "amount", "missing_value")\n```',
    ],
)
def test_every_syntax_gives_the_same_call(text):
    assert parse(text) == [Q]


def test_several_calls_run_in_order():
    calls = parse('list_batches()\nread_contract(); load_batch("B-2")')
    assert [c.name for c in calls] == ["list_batches", "read_contract", "load_batch"]
    assert (
        parse(json.dumps([{"name": "list_batches"}, {"name": "read_contract", "arguments": {}}]))[1].name
        == "read_contract"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty action"),
        ("drop_table()", "unknown tool 'drop_table'"),
        ("load_batch()", "missing argument 'batch_id'"),
        ('load_batch("B-1", "B-2")', "takes 1 arguments, 2 given"),
        ("load_batch(batch_id=1)", "batch_id must be a string"),
        ('load_batch(__import__("os").system("true"))', "must be literals"),
        ('submit_report("B-1", [])', "loaded must be an array"),
        ('submit_report(["B-1", 2], [])', "every item of loaded must be a string"),
        ('load_batch("B-1", batch_id="B-2")', "given twice"),
        ('load_batch(x="B-1")', "unknown argument 'x'"),
        ("{not json", "invalid JSON"),
        ('{"arguments": {}}', 'missing "name"'),
        ("[]", "empty list"),
        ("x = 1", "assign statement"),
        ("os.system('true')", "not a tool name"),
        ("list_batches(**{})", "** and * arguments"),
        ("(" * 500 + ")" * 500, "could not parse"),
        # A repeated argument or key is refused, not settled by keeping the last one unseen.
        ('load_batch(batch_id="B-1", batch_id="B-2")', "load_batch's argument batch_id is given twice"),
        (
            '{"name": "load_batch", "arguments": {"batch_id": "B-1", "batch_id": "B-2"}}',
            "key 'batch_id' twice",
        ),
        (
            '[{"name": "load_batch", "name": "profile_batch", "arguments": {"batch_id": "B-1"}}]',
            "key 'name' twice",
        ),
        (
            '{"name": "load_batch", "arguments": "{\\"batch_id\\": \\"B-1\\", \\"batch_id\\": \\"B-2\\"}"}',
            "arguments string: a JSON object names the key 'batch_id' twice",
        ),
        ('{"tool": "profile_batch", "args": {"batch_id": "B-1"}, "name": "load_batch"}', "not both"),
        ('{"name": "load_batch", "arguments": {"batch_id": "B-1"}, "args": {"batch_id": "B-2"}}', "not both"),
        (
            '{"function": {"name": "profile_batch", "arguments": {"batch_id": "B-1"}}, "name": "load_batch"}',
            'inside "function" and beside it',
        ),
    ],
)
def test_bad_actions_are_explained(text, message):
    with pytest.raises(ActionError, match=None) as error:
        parse(text)
    assert message in str(error.value)


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "run_sql", "arguments": {"query": "SELECT \\":\\" AS \\"a\\":1"}}',  # '":' inside a string
        '{"name" : "load_batch", "arguments" : {"batch_id" : "B-1"}}',
        '[{"id": "c1", "type": "function", "function": {"name": "load_batch", "arguments": "{\\"batch_id\\": \\"B-1\\"}"}}]',
    ],
)
def test_keys_that_only_look_repeated_are_read(text):
    assert len(parse(text)) == 1


def test_call_cap_per_step():
    with pytest.raises(ActionError, match="at most 3"):
        parse("list_batches()\n" * 4, max_calls=3)


def test_nesting_bombs_do_not_raise_out_of_the_codec():
    for text in ["[" * 100_000, "f(" * 50_000, '{"a":' * 100_000]:
        with pytest.raises(ActionError):
            parse(text)


@pytest.fixture(scope="module")
def env():
    e = BatchGateEnv(FIXTURE_CASES)
    yield e
    e.close()


@pytest.mark.parametrize(
    "action",
    [
        "x" * 1_000_000,
        "\x00\x01\x02",
        "😀 load_batch('B-1') 😀",
        "load_batch('\udcff')",
        42,
        None,
        b"list_batches()",
        "\n\n\n",
    ],
)
def test_env_turns_any_input_into_an_error_observation_and_logs_it(env, action):
    env.reset(options={"case_index": 0})
    observation, reward, terminated, truncated, info = env.step(action)
    assert observation.startswith("turn 1 of 30\nerror: ") and "Accepted syntax" in observation
    assert env.observation_space.contains(observation)
    assert (reward, terminated, truncated, info["calls"]) == (0.0, False, False, 0)
    entry = env.world.ledger.entries[-1]
    assert entry.action == "invalid_action" and entry.executed is False and entry.note


def test_unknown_batch_in_a_valid_call_is_a_tool_refusal(env):
    env.reset(options={"case_index": 0})
    observation, *_ = env.step('load_batch("B-nope")')
    assert "unknown batch" in last_json(observation)["error"]


def test_a_bad_call_stops_the_whole_action(env):
    env.reset(options={"case_index": 0})
    observation, *_ = env.step('load_batch("B-0930-60-1")\nload_batch()')
    assert "missing argument" in observation
    assert env.world.load_counts == {}


def test_calls_after_the_report_are_refused(env):
    env.reset(options={"case_index": 0})
    observation, _, terminated, _, _ = env.step('submit_report([], [])\nload_batch("B-0930-60-1")')
    assert terminated and env.world.load_counts == {}
    assert '"status":"received"' in observation and "not run: the episode already ended" in observation
    assert [(e.action, e.executed) for e in env.world.ledger.entries[-2:]] == [
        ("load_batch", False),
        ("seal", True),
    ]


def test_tool_schemas_are_openai_functions():
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == list(GATE_TOOLS)
    quarantine = schemas[5]["function"]["parameters"]
    assert (
        quarantine["required"] == ["batch_id", "column", "defect_type"]
        and quarantine["additionalProperties"] is False
    )
    assert schemas[6]["function"]["parameters"]["properties"]["loaded"] == {
        "type": "array",
        "description": "ids of the batches you loaded",
        "items": {"type": "string"},
    }


def test_odd_escapes_in_agent_text_raise_no_host_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse('run_sql("SELECT \\K")') == [ToolCall("run_sql", {"query": "SELECT \\K"})]


# -- typed and optional parameters -------------------------------------------------
_PAY = ToolSpec(
    "pay",
    "Pay an amount.",
    (
        Param("amount", float, "how much"),
        Param("count", int, "how many times"),
        Param("urgent", bool, "whether now", default=False),
        Param("note", str, "free text", default=None),
        Param("cap", float, "an upper bound", default=None),
        Param("tags", list, "labels", str, default=[]),
    ),
)
_TYPED = {_PAY.name: _PAY}


def _pay(text: str) -> dict:
    [call] = parse_action(text, _TYPED, 4)
    return call.args


def test_optional_parameters_take_their_defaults():
    assert _pay("pay(2.5, 3)") == {
        "amount": 2.5,
        "count": 3,
        "urgent": False,
        "note": None,
        "cap": None,
        "tags": [],
    }


def test_a_list_default_is_a_fresh_list_per_call():
    first, second = _pay("pay(1.0, 1)")["tags"], _pay("pay(1.0, 1)")["tags"]
    first.append("x")
    assert second == [] and _PAY.params[5].default == []


def test_an_int_is_accepted_for_a_float_and_becomes_one():
    amount = _pay("pay(7, 1)")["amount"]
    assert amount == 7.0 and type(amount) is float
    assert type(_pay('{"name": "pay", "arguments": {"amount": 7, "count": 1, "cap": 3}}')["cap"]) is float


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pay(True, 1)", "amount must be a number, not a bool"),
        ('pay("1.5", 1)', "amount must be a number, not str"),
        ("pay(1.0, True)", "count must be an integer, not a bool"),
        ("pay(1.0, 1.0)", "count must be an integer, not float"),
        ("pay(1.0, 1, 1)", "urgent must be a boolean, not int"),
        ('pay(1.0, 1, "yes")', "urgent must be a boolean, not str"),
        ("pay(1.0, 1, urgent=None)", "urgent must be a boolean, not NoneType"),
        ("pay(None, 1)", "amount must be a number, not NoneType"),
        ("pay(1" + "0" * 400 + ", 1)", "amount must be a finite number"),
        ('{"name": "pay", "arguments": {"amount": 1e400, "count": 1}}', "amount must be a finite number"),
        ('{"name": "pay", "arguments": {"amount": NaN, "count": 1}}', "amount must be a finite number"),
        ("pay(1.0, 1, tags=[True])", "every item of tags must be a string"),
        ("pay(count=1)", "missing argument 'amount' (required)"),
        ("pay(1.0)", "missing argument 'count' (required)"),
    ],
)
def test_typed_parameters_explain_a_wrong_value(text, message):
    with pytest.raises(ActionError) as error:
        parse_action(text, _TYPED, 4)
    assert message in str(error.value)


def test_an_optional_parameter_is_never_reported_missing():
    assert _pay("pay(1.0, 2, urgent=True)")["urgent"] is True
    assert _pay('{"name": "pay", "arguments": {"amount": 1, "count": 2, "note": null}}')["note"] is None


def test_a_none_default_accepts_an_explicit_none_and_other_defaults_do_not():
    assert _pay("pay(1.0, 2, note=None, cap=None)")["cap"] is None
    with pytest.raises(ActionError, match="urgent must be a boolean"):
        _pay("pay(1.0, 2, urgent=None)")


def test_signature_shows_types_and_defaults_in_call_syntax():
    assert _PAY.signature == (
        "pay(amount: number, count: integer, urgent: boolean = False, note: string = None,"
        " cap: number = None, tags: array = [])"
    )


def test_render_of_typed_values_reads_back_as_the_same_call():
    [call] = parse_action('pay(1, 2, True, "x\\u00e9", tags=["a"])', _TYPED, 4)
    assert call.render() == 'pay(amount=1.0, count=2, urgent=True, note="x\\u00e9", cap=None, tags=["a"])'
    assert parse_action(call.render(), _TYPED, 4) == [call]


def test_schema_of_typed_and_optional_parameters_is_an_openai_function():
    schema = _PAY.json_schema()
    assert schema["type"] == "function" and schema["function"]["name"] == "pay"
    parameters = schema["function"]["parameters"]
    assert parameters["type"] == "object" and parameters["additionalProperties"] is False
    assert parameters["required"] == ["amount", "count"]
    assert parameters["properties"] == {
        "amount": {"type": "number", "description": "how much"},
        "count": {"type": "integer", "description": "how many times"},
        "urgent": {"type": "boolean", "description": "whether now", "default": False},
        "note": {"type": ["string", "null"], "description": "free text", "default": None},
        "cap": {"type": ["number", "null"], "description": "an upper bound", "default": None},
        "tags": {"type": "array", "description": "labels", "items": {"type": "string"}, "default": []},
    }
    json.dumps(schema, allow_nan=False)  # plain JSON


def test_the_syntax_help_example_fits_each_type():
    help_text = syntax_help(_TYPED)
    assert 'pay(amount=0.0, count=0, urgent=True, note="...", cap=0.0, tags=[...])' in help_text


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Param("x", float, "", default="1"), "default '1' is not a number"),
        (lambda: Param("x", bool, "", default=0), "default 0 is not a boolean"),
        (lambda: Param("x", dict, ""), "no JSON type"),
        (lambda: Param("x", list, ""), "names its items"),
        (lambda: Param("x", str, "", str), "names its items"),
    ],
)
def test_a_badly_declared_parameter_fails_when_declared(make, message):
    with pytest.raises(TypeError, match=message):
        make()


SIMPLE_OR_NEARLY = [
    "list_batches()",
    'profile_batch("B-1")',
    'profile_batch("B-1")\nload_batch("B-1")',
    'submit_report("B-1", "B-2")',
    'profile_batch("")',
    'profile_batch("a b!#[]~")',
    "True()",
    "lambda()",
    "match()",
    "list_batches( )",
    "list_batches()  ",
    "list_batches()\n  list_batches()",
    "list_batches()\n\nlist_batches()",
    "list_batches()\r\nlist_batches()",
    'profile_batch("B\\x41")',
    'profile_batch("B\u00e9")',
    'profile_batch("B\x00")',
    "profile_batch('B-1')",
    'profile_batch("B-1",)',
    'profile_batch("B-1"); list_batches()',
    "list_batches() # look",
    'unknown_tool("x")',
]


@pytest.mark.parametrize("text", SIMPLE_OR_NEARLY)
def test_the_quick_reading_of_simple_calls_is_the_ast_reading(text, monkeypatch):
    """Whatever the action, the quick path gives exactly the calls (or the error) ast does."""
    from batchgate_gym.kernel import codec

    def outcome() -> object:
        try:
            return parse_action(text, GATE_TOOLS, 32)
        except ActionError as exc:
            return str(exc)

    quick = outcome()
    monkeypatch.setattr(codec, "_simple_calls", lambda body: None)
    assert outcome() == quick


def test_the_built_once_encoders_write_what_json_writes():
    from batchgate_gym.kernel.codec import compact_json, json_encoder
    from batchgate_gym.kernel.plain import frozen
    from batchgate_gym.kernel.text_policy import action, call

    values = [
        "a\u00e9\n",
        1,
        1.5,
        -0.0,
        1e300,
        True,
        None,
        [1, "x", {"b": 2, "a": [1.25]}],
        {"z": {"q": None}},
    ]
    for value in values:
        assert compact_json(value) == json.dumps(value, separators=(",", ":"))
        assert json_encoder(sort_keys=True)(value) == json.dumps(value, sort_keys=True, separators=(",", ":"))
        assert json_encoder(allow_nan=True, separators=(", ", ": "))(value) == json.dumps(value)
    assert action(call("run_sql", query="SELECT 1"), call("list_batches")) == json.dumps(
        [call("run_sql", query="SELECT 1"), call("list_batches")]
    )
    shared = frozen({"batches": [{"batch_id": "B-1", "rows": 3}]})
    assert compact_json(shared) == compact_json(shared) == json.dumps(shared, separators=(",", ":"))
    for bad in (float("nan"), [float("inf")]):
        with pytest.raises(ValueError):
            compact_json(bad)
