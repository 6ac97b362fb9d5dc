"""The chat cache key's hand-written canonical JSON is `canonical_json` of the key's fields,
byte for byte, whatever the request holds: a difference would silently invalidate every
user's cache (or, worse, make two different requests share an answer)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentopt.models.cache_key import _fields, canonical_json, chat_cache_key, chat_key_text
from agentopt.models.types import ChatRequest, FunctionCall, Message, ToolCall, ToolDef

text = st.text(max_size=40)  # every code point hypothesis draws: controls, U+2028, astral
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | text
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)
tool_calls = st.lists(
    st.builds(
        ToolCall,
        id=text,
        function=st.builds(FunctionCall, name=text, arguments=text),
    ),
    max_size=3,
)
messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=st.none() | text,
    tool_calls=st.none() | tool_calls,
    tool_call_id=st.none() | text,
    name=st.none() | text,
)
tools = st.lists(
    st.builds(ToolDef, function=st.dictionaries(text, json_values, max_size=4)), max_size=3
)
requests = st.builds(
    ChatRequest,
    messages=st.lists(messages, min_size=1, max_size=4),
    tools=st.none() | tools,
    tool_choice=st.none() | text | st.dictionaries(text, json_values, max_size=2),
    temperature=st.none() | st.floats(allow_nan=True, allow_infinity=True),
    top_p=st.none() | st.floats(min_value=0, max_value=1),
    seed=st.none() | st.integers(min_value=-(2**40), max_value=2**40),
    max_tokens=st.none() | st.integers(min_value=0, max_value=10**6),
    response_format=st.none() | st.dictionaries(text, json_values, max_size=3),
    stop=st.none() | st.lists(text, max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(request=requests, provider=text, base_url=text, model=text, repeat=st.integers(0, 99))
def test_the_key_text_is_canonical_json_of_the_fields(
    request: ChatRequest, provider: str, base_url: str, model: str, repeat: int
) -> None:
    expected = canonical_json(_fields(provider, base_url, model, request, repeat))
    assert chat_key_text(provider, base_url, model, request, repeat) == expected
    # Twice: the second time the free-form parts come from the memo.
    assert chat_key_text(provider, base_url, model, request, repeat) == expected


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
def test_a_field_set_to_another_type_after_validation_takes_the_general_road() -> None:
    request = ChatRequest(messages=[Message(role="user", content="hi")])
    request.messages[0].content = 5  # type: ignore[assignment]
    assert chat_key_text("openai", "u", "m", request, 0) == canonical_json(
        _fields("openai", "u", "m", request, 0)
    )


def test_nan_and_null_or_a_none_key_never_share_a_memo_entry() -> None:
    """The memo is keyed by pydantic-core's JSON, which writes a None key as "None" (json.dumps:
    "null") and, in its "null" mode, NaN as null: neither may make the memo hand one value
    the canonical text of another."""
    one = ChatRequest(messages=[Message(role="user", content="x")], response_format={"a": None})
    other = ChatRequest(
        messages=[Message(role="user", content="x")], response_format={"a": math.nan}
    )
    keys = {chat_cache_key(provider_type="p", base_url="u", model="m", request=r, repeat=0)
            for r in (one, other, one, other)}  # fmt: skip
    assert len(keys) == 2
    odd = {"a": {None: 1}}
    named = {"a": {"None": 1}}
    for value in (odd, named, odd, named):
        request = ChatRequest(messages=[Message(role="user", content="x")], tool_choice=value)
        assert chat_key_text("p", "u", "m", request, 0) == canonical_json(
            _fields("p", "u", "m", request, 0)
        )
