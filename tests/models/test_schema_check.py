"""`schema_check.surely_valid`, the quick path of a judge reply's check: it may answer "not
sure" as often as it likes, but never "valid" for a value jsonschema refuses. Checked on
generated schemas and values, and on the judges' own schemas, where it must take the quick
path for a good reply and leave a bad one to jsonschema's words."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from agentopt.evaluators.judges.judge_call import pin_entries
from agentopt.evaluators.judges.task_adherence import _schema_for
from agentopt.models.schema_check import surely_valid
from agentopt.models.schema_dialect import keyed, reply_problems

_SCALARS = st.sampled_from(["", "a", "bb", 0, 1, 2, -1, 1.0, 2.5, True, False, None])
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3)
    ),
    max_leaves=6,
)
_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "object", "array"])


def _schemas() -> st.SearchStrategy[Any]:
    def node(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        keywords = st.fixed_dictionaries(
            {},
            optional={
                "type": _TYPES | st.lists(_TYPES, min_size=1, max_size=2),
                "const": _SCALARS,
                "enum": st.lists(_SCALARS, min_size=1, max_size=3),
                "minLength": st.integers(0, 2),
                "maxLength": st.integers(0, 2),
                "minimum": st.sampled_from([0, 1, 1.5]),
                "maximum": st.sampled_from([1, 2, 2.5]),
                "minItems": st.integers(0, 2),
                "maxItems": st.integers(0, 2),
                "properties": st.dictionaries(st.sampled_from(["x", "y"]), inner, max_size=2),
                "required": st.lists(st.sampled_from(["x", "y", "z"]), max_size=2, unique=True),
                "additionalProperties": st.booleans() | inner,
                "items": inner,
                "anyOf": st.lists(inner, min_size=1, max_size=2),
                "description": st.just("shown to the model"),
                "pattern": st.just("^a"),  # a keyword the quick path does not know
            },
        )
        return keywords

    return st.recursive(st.just(True) | st.fixed_dictionaries({}), node, max_leaves=5)


@settings(max_examples=1500, deadline=None)
@given(schema=_schemas(), value=_VALUES)
def test_a_value_the_quick_check_passes_is_one_jsonschema_passes(schema: Any, value: Any) -> None:
    if surely_valid(value, schema):
        assert jsonschema.Draft202012Validator(schema).is_valid(value), (schema, value)


def test_a_good_verdict_takes_the_quick_path_and_a_bad_one_gets_jsonschemas_words() -> None:
    names = ["mentions the refund window", "uses the order tool"]
    schema = _schema_for(names)
    pinned = _schema_for(names)
    pin_entries(pinned["properties"]["verdicts"], "name", names)  # one entry a name, in order
    good = {
        "verdicts": [
            {"name": "uses the order tool", "passed": False, "reason": "No tool call."},
            {"name": "mentions the refund window", "passed": True, "reason": "It says 30 days."},
        ]
    }
    for rich in (schema, pinned):
        assert surely_valid(good, keyed(rich))
        assert reply_problems(good, rich) == []
    invented = {"verdicts": [{**good["verdicts"][0], "name": "is polite"}]}
    extra = {"verdicts": [{**good["verdicts"][0], "score": 3}]}
    for bad in (invented, extra, {"verdicts": "none"}):
        assert not surely_valid(bad, keyed(pinned))
        assert reply_problems(bad, pinned), bad
