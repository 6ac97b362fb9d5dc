"""Redaction: one compiled matcher, rebuilt when the environment changes, masking exactly as
the sequential rules do."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentopt.core.redaction import (
    Redactor,
    current,
    masked_model_line,
    model_line,
    redact,
    redact_data,
    redact_model,
)


def test_new_secret_env_var_is_masked_after_a_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    assert redact("nothing secret here") == "nothing secret here"
    monkeypatch.setenv("SHOP_API_KEY", "value-that-must-not-leak")
    assert "value-that-must-not-leak" not in redact("key=value-that-must-not-leak!")
    monkeypatch.setenv("SHOP_API_KEY", "a-rotated-value-1234")
    assert redact("using a-rotated-value-1234") == "using ***"
    monkeypatch.delenv("SHOP_API_KEY")
    assert redact("using a-rotated-value-1234") == "using a-rotated-value-1234"


def test_headers_and_bearer_tokens_are_masked() -> None:
    data = {"headers": {"Authorization": "Bearer abc.def", "api-key": "k-123456"}, "x": ["ok"]}
    masked = redact_data(data)
    assert masked["headers"] == {"Authorization": "***", "api-key": "***"}
    assert "abc.def.ghi" not in redact("Authorization: Bearer abc.def.ghi")


def test_only_secret_values_are_masked_not_ordinary_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_TOKEN", "true")
    monkeypatch.setenv("LEGACY_API_KEY", "Incorrect")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-0123456789abcdef")
    message = "Incorrect API key provided: sk-live-0123456789abcdef (retry is true)"
    assert redact(message) == "Incorrect API key provided: *** (retry is true)"
    monkeypatch.setenv("SHORT_SECRET", "ab12cd")
    assert redact("token ab12cd, not xab12cdx") == "token ***, not xab12cdx"


def _reference(text: str, secrets: list[str]) -> str:
    """The sequential masking the compiled matcher must reproduce exactly."""
    from agentopt.core.redaction import _PATTERNS

    for value in sorted(set(secrets), key=len, reverse=True):
        if value and value in text:
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", "***", text)
    text = _PATTERNS[0].sub(lambda m: f"{m.group(1)} ***", text)
    text = _PATTERNS[1].sub(lambda m: f"{m.group(1)}***", text)
    return _PATTERNS[2].sub("***", text)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(
            [
                "hello",
                "Bearer",
                "bearer",
                "tok.en_1",
                "api-key:",
                "API_KEY=",
                "sk-abcdefgh123",
                "authorization",
                '"',
                "'",
                ",",
                " ",
                "\n",
                "s3cr3t-value",
                "s3cr3t",
                "ok}",
            ]
        ),
        max_size=20,
    ),
    secrets=st.lists(st.sampled_from(["s3cr3t-value", "s3cr3t", "tok.en_1", "abc"]), max_size=3),
)
def test_the_compiled_matcher_masks_exactly_like_the_sequential_rules(
    words: list[str], secrets: list[str]
) -> None:
    text = "".join(words)
    assert Redactor(secrets).text(text) == _reference(text, secrets)


def test_clean_data_comes_back_as_the_same_object_and_dirty_data_as_a_copy() -> None:
    matcher = Redactor(["hunter2-secret"])
    clean = {"turns": [{"response": "fine", "n": 1}], "tags": ("a",)}
    assert matcher.data({"a": [1, "x"]}) == {"a": [1, "x"]}
    same = {"turns": [{"response": "fine", "n": 1}]}
    assert matcher.data(same) is same
    dirty = {"turns": [{"response": "key hunter2-secret"}]}
    masked = matcher.data(dirty)
    assert masked == {"turns": [{"response": "key ***"}]}
    assert dirty["turns"][0]["response"] == "key hunter2-secret"  # the input is untouched
    assert matcher.data(clean)["tags"] == ["a"]


def test_extra_secrets_are_compiled_once_per_set(monkeypatch: pytest.MonkeyPatch) -> None:
    base = current()
    assert current(["x-extra-1234"]) is current(["x-extra-1234"])
    assert current([]) is base
    assert redact("a x-extra-1234 b", ["x-extra-1234"]) == "a *** b"
    monkeypatch.setenv("OTHER_TOKEN", "tok-from-env-5678")
    assert current() is not base  # the environment changed: a new matcher
    assert redact("tok-from-env-5678 x-extra-1234", ["x-extra-1234"]) == "*** ***"


_WORDS = st.sampled_from(
    [
        "hello",
        "Bearer x1",
        "\n",
        "\t",
        '"',
        "\\",
        "sk-abcdefgh123",
        "s3cr3t",
        'q"uote-99',
        "b\\sl-99",
        "API_KEY=k9",
        "ap\u0130key: zz9",  # re's case-insensitive match folds İ to i; str.lower does not
        "api\u212aey=v7",  # the Kelvin sign, which both fold to k
        "ap\u0131_key=yy8",  # dotless i: re takes it for i
        "\u017fk-abcdefgh123",  # long s: re takes it for s
        "é",
        "task-abcdefgh123",  # a word character before sk-: no boundary, nothing to mask
        "_sk-abcdefgh123",
        "ésk-abcdefgh123",
        "\u0130sk-abcdefgh123",  # lower-cased, İ ends in a combining dot
        "\u001b",  # JSON writes \u001b: an escape ending in a letter or digit
    ]
)


_JSON_DATA = st.recursive(
    st.lists(_WORDS, max_size=6).map("".join) | st.integers() | st.none(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["query", "Ocp-Apim-Subscription-Key", "x-api-key", "note"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)
"""JSON-like data built of the words above, credential header names among the keys."""
_SECRETS = st.lists(st.sampled_from(["s3cr3t", 'q"uote-99', "b\\sl-99", "abc"]), max_size=2)


@settings(max_examples=300, deadline=None)
@example(data="\nsk-abcdefgh123", secrets=[])  # an escape before the key hides \b
@example(data={"Ocp-Apim-Subscription-Key": "v"}, secrets=[])  # a header name as a key
@example(data='q"uote-99', secrets=['q"uote-99'])  # a secret JSON writes escaped
@example(data="ap\u0130key: zz9", secrets=[])  # not ASCII: re folds İ, str.lower does not
@given(
    data=_JSON_DATA,
    secrets=_SECRETS,
)
def test_a_json_line_is_masked_exactly_as_the_walked_data_is(
    data: object, secrets: list[str]
) -> None:
    # The results file and the journal are serialised first and scanned once; a secret after
    # an escape (`\nsk-…`), one JSON escapes (a quote, a backslash) or a credential header's
    # name as a key must still be masked as the walk over the data masks it.
    import json

    matcher = Redactor(secrets)
    walked = matcher.data(data)
    masked, line = matcher.json_line(data)
    assert masked == walked
    assert line == json.dumps(walked, ensure_ascii=False)
    assert (masked is data) == (walked is data)


def test_every_credential_word_in_json_text_sends_the_line_to_the_walk() -> None:
    """The scan looks for each credential word only in a text holding "api", "bearer" or
    "authorization": a word without one of them would never be found. Each word, in any case,
    inside a value or as a key, makes the line walk; the same line without it does not."""
    from agentopt.core.redaction import _JSON_WORDS

    matcher = Redactor([])
    for word in _JSON_WORDS:
        for spelled in (word, word.upper(), word.title()):
            assert not matcher.json_text_clean(json.dumps({"h": {spelled: "x"}})), spelled
            assert not matcher.json_text_clean(json.dumps({"t": f"send {spelled} here"}))
    assert matcher.json_text_clean(json.dumps({"t": "send the tracking link", "h": {"a": 1}}))


@settings(max_examples=300, deadline=None)
@example(data=["s3cr3t", "Bearer x1"], secrets=[], later=["s3cr3t"])  # a secret added since
@example(data={"x-api-key": "API_KEY=k9 sk-abcdefgh123"}, secrets=["abc"], later=[])
@given(data=_JSON_DATA, secrets=_SECRETS, later=_SECRETS)
def test_a_masked_line_is_masked_again_only_for_a_secret_value_it_holds(
    data: object, secrets: list[str], later: list[str]
) -> None:
    # A replayed journal line was masked when it was written; a rerun checks it only for the
    # secret values known now (`masked_json_clean`). That is right only if masking a masked
    # text again, with any secrets, changes nothing unless one of their values is in it.
    written = json.loads(Redactor(secrets).json_line(data)[1])
    now = Redactor(later)
    line = json.dumps(written, ensure_ascii=False)
    if now.masked_json_clean(line):
        assert now.data(written) == written
    else:
        assert not now._json_scannable or any(s in line for s in now.secrets)


def test_a_line_whose_sk_follows_a_word_character_is_not_walked() -> None:
    """Task names like `task-0001` hold `sk-` inside a word, which `\\bsk-` never matches:
    the line is clean and comes back as it was, without a walk of every string."""
    data = {"name": "task-0001", "text": "a risk-free ask-me", "n": [{"id": "desk-12345678"}]}
    matcher = Redactor([])
    masked, line = matcher.json_line(data)
    assert masked is data
    assert matcher.json_text_clean(line)
    assert not matcher.json_text_clean(json.dumps({"x": "\nsk-abcdefgh123"}))
    assert matcher.json_line({"x": "key sk-abcdefgh123"})[0] == {"x": "key ***"}


class _Holder(BaseModel):
    value: Any = None
    note: str = ""


@settings(max_examples=200, deadline=None)
@example(data="\nsk-abcdefgh123", secrets=[])
@example(data={"Ocp-Apim-Subscription-Key": "v"}, secrets=[])
@example(data='q"uote-99', secrets=['q"uote-99'])
@example(data="ap\u0130key: zz9", secrets=[])
@given(
    data=_JSON_DATA,
    secrets=_SECRETS,
)
def test_a_model_is_masked_exactly_as_its_walked_dump_is(data: object, secrets: list[str]) -> None:
    """`redact_model` scans pydantic-core's JSON of the model instead of walking its dump:
    what it masks, and when it hands the model back untouched, must be what the walk does."""
    model = _Holder(value=data, note="plain")
    walked = current(secrets).data(model.model_dump())
    masked = redact_model(model, secrets)
    assert masked.model_dump() == walked
    assert (masked is model) == _clean(model, secrets)  # untouched exactly when clean


_LINE_SECRET = "AGENTOPT_TEST_MODEL_LINE_KEY"


@settings(max_examples=200, deadline=None)
@example(data="\nsk-abcdefgh123", secret="")
@example(data={"Ocp-Apim-Subscription-Key": "v"}, secret="")
@example(data='say q"uote-99 now', secret='q"uote-99')  # a secret JSON writes escaped
@example(data=[float("nan"), 1e-07, 0.1 + 0.2], secret="")  # NaN kept; floats as written
@example(data="lone \ud800 surrogate", secret="")  # pydantic-core refuses: json.dumps writes it
@given(data=_JSON_DATA, secret=st.sampled_from(["", "s3cr3t-99", 'q"uote-99']))
def test_a_model_line_holds_what_the_masked_dump_held(data: object, secret: str) -> None:
    """Journal lines and results.json rows are pydantic-core's JSON of the record, scanned
    once (`model_line`), where they were `json.dumps` of its walked dump: the same value,
    masked alike, and the record handed back untouched exactly when nothing was masked."""
    model = _Holder(value=data, note="plain")
    before = os.environ.get(_LINE_SECRET)
    os.environ[_LINE_SECRET] = secret or "unused-value-1234"
    try:
        dump = model.model_dump(mode="json")
        walked = current().data(dump)
        line = model_line(model)
        masked, again = masked_model_line(model)
    finally:
        if before is None:
            os.environ.pop(_LINE_SECRET, None)
        else:
            os.environ[_LINE_SECRET] = before
    assert again == line and "\n" not in line
    assert json.dumps(json.loads(line)) == json.dumps(walked)  # NaN as NaN: compared as text
    assert json.dumps(masked.model_dump(mode="json")) == json.dumps(walked)
    assert (masked is model) == (walked is dump)
    if secret:
        assert secret not in line


def _clean(model: BaseModel, secrets: list[str]) -> bool:
    dump = model.model_dump()
    return current(secrets).data(dump) is dump


def test_the_json_scan_folds_every_character_re_takes_for_an_ascii_letter() -> None:
    """The scan of a serialised line lower-cases it instead of running a case-insensitive
    regular expression; the characters `re` matches to an ASCII letter that `str.lower` does
    not turn into it are folded first. Every code point is tried, so a Python whose `re`
    folds one more would fail here rather than let a credential through unmasked."""
    import re
    import string
    import sys

    from agentopt.core.redaction import ASCII_FOLDS

    letter = re.compile(r"(?i)[a-z]")
    found = {}
    for cp in range(128, sys.maxunicode + 1):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF or not letter.fullmatch(ch):
            continue
        (target,) = [a for a in string.ascii_lowercase if re.fullmatch(f"(?i){a}", ch)]
        if ch.lower() != target:
            found[ch] = target
    assert {k: v for k, v in ASCII_FOLDS.items() if k.lower() != v} == found
