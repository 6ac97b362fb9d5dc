"""What a group's failing answers lacked, read from its judges' reasons (`rule_groups`
writes the rules).

A judged group's reasons are compared with the other groups' reasons. Words every group's
reasons use ("does not mention", "which the policy requires", "Left out:") are the judge's
phrasing; the words only this group's reasons use, and that the failing answers do not
contain, are what the answers lacked ("refund window"). A span the judge quoted counts whole.
A phrase is supported by every reason that names it, whatever its style, and reasons of
passed verdicts of the same criterion support it too; a reason whose answer already holds the
phrase counts against it (the judge objected to it being there), and the other words of a
reason that quotes only what its answer says ("offers 'store credit', which the policy does
not allow") are the judge's, not something missing.

A judge that words each reason its own way ("does not include the cancellation link for the
order", "omits the tracking link") leaves its verbs in the phrase: the short phrases of a
reason are candidates too ("cancellation link"), and one counts once something besides its
own reason names it, another reason or an answer that passed the same criterion in any of the
job's train runs. A phrase such an answer holds wins a tie, the longest of them.

A proposal's own failures may show a style once ("… never brings up the data export; a
customer asking about privacy has to be told about it, so the answer falls short"), with
nothing beside it to tell the judge's prose from the fact. The reasons of every train run the
job has seen, any candidate's, give the words a judge uses whatever the criterion
(`judge_words`); other criteria's reasons are read for their phrasing only. When
a single reason is all there is and several of its phrases could be the fact, no phrase is
chosen: a guess would be a rule to mention "the answer falls short". Nor when its one phrase
runs from the judge's verb into the object ("include the cancellation", where "link" was cut
off as a word other reasons use): the fact's bounds are not known. Nor when the group's other
failures gave reasons that do not name it ("Not addressed." beside two that ask for a photo).
When answers passed the criterion, a phrase none of them says is no rule, however many reasons
name it ("Off-topic.", "Fails criterion;"): the judge's verdict, not what was missing.

Phrases are compared as lower-case words; a rule writes the chosen one as the judge's reason
or the answer that passed wrote it (`surface`: "free over $35", "1-2 business days"), and a
short phrase may start with a number. A phrase an answer that passed backs runs on over the
reason's next words as long as such an answer says them too (`_grown`: "1 to 2 business
days", where "days" alone, in another reason's "45 days", had ended it).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

from agentopt.workflows.optimize.strategies.base import Example
from agentopt.workflows.optimize.strategies.failure_groups import (
    STOP,
    Group,
    Verdict,
    content,
    norm,
    stem,
    token_spans,
    tokens,
)

MAX_PHRASE_WORDS = 8
MAX_GRAM_WORDS = 4
_BREAK = re.compile(r"[,;:()\[\]{}!?\n]|\.(?:\s|$)|\s[-–—]\s")
_QUOTED = re.compile(r"(?<!\w)['‘\"“`]([^'’\"”`\n]{2,80}?)['’\"”`](?!\w)")


def has_words(haystack: str, phrase: str) -> bool:
    """`phrase` occurs in `haystack` as whole words (both normalised)."""
    return bool(phrase) and f" {phrase} " in f" {haystack} "


def answer_text(ex: Example) -> str:
    """Everything the agent answered in the example's run, as written."""
    record = ex.record
    parts = [record.response]
    parts += [t.response for t in record.turns or []]
    return " ".join(parts)


def _answer(ex: Example) -> str:
    return norm(answer_text(ex))


def _segments(reason: str) -> list[tuple[list[str], bool]]:
    """The reason cut at punctuation into word runs, plus each quoted span (flag True)."""
    out: list[tuple[list[str], bool]] = [(tokens(q), True) for q in _QUOTED.findall(reason)]
    unquoted = _QUOTED.sub(" , ", reason)
    out += [(tokens(part), False) for part in _BREAK.split(unquoted)]
    return [(t, q) for t, q in out if t]


def _phrases(
    reason: str,
    generic: set[str],
    topic: set[str],
    contrast: bool,
    tools: frozenset[str],
    phrasing: frozenset[str] = frozenset(),
) -> set[str]:
    """Runs of words only this group's reasons use (a topic word may extend a run; function
    words may sit inside one). Without other groups to compare with (`contrast` False) only
    quoted spans count: any word would look specific. A part of the reason that names one of
    the agent's `tools` (normalised) is about the tool's use ("tracking questions need
    track_parcel"), not about what to say. `phrasing`: the judges' own words across the job
    (`judge_words`), which end an unquoted run too; a quoted span is read as today."""
    found: set[str] = set()
    for words, quoted in _segments(reason):
        if not quoted and not contrast:
            continue
        if tools and any(has_words(" ".join(words), t) for t in tools):
            continue
        if quoted:
            telling = any(stem(w) not in generic and w not in topic and content(w) for w in words)
            if telling and len(words) <= MAX_PHRASE_WORDS:
                found.add(" ".join(words))
            continue
        run: list[str] = []
        lead: list[str] = []  # topic words right before a run: "warranty" of "warranty period"
        for w in [*words, ""]:
            common = stem(w) in generic or stem(w) in phrasing
            specific = w and not common and w not in STOP and w not in topic
            inside = w and (w in STOP or (w in topic and not common))
            if specific and not run:
                run, lead = [*lead, w], []
                continue
            if specific or (run and inside):
                run.append(w)
                continue
            lead = [*lead, w] if w and w in topic and not common else []
            while run and (run[-1] in STOP):
                run.pop()
            telling = any(content(x) and x not in topic for x in run)
            if telling and len(run) <= MAX_PHRASE_WORDS:
                found.add(" ".join(run))
            run = []
    return found


def _reason_grams(
    reason: str, common: set[str] | frozenset[str], topic: set[str], tools: frozenset[str]
) -> set[str]:
    """`_grams` of every unquoted segment of the reason that names none of the `tools`."""
    out: set[str] = set()
    for words, quoted in _segments(reason):
        if not quoted and not any(has_words(" ".join(words), t) for t in tools):
            out |= _grams(words, common, topic)
    return out


def _grams(words: list[str], common: set[str] | frozenset[str], topic: set[str]) -> set[str]:
    """The short phrases of a segment that hold a word of this group's own: "does not include
    the cancellation link for the order" → "include the cancellation", "cancellation link", …
    A word other reasons use ("link", "order") may belong to the phrase a judge names; which
    of them is the missing thing, the passing answers and the other reasons tell."""
    out: set[str] = set()
    own = [w not in STOP and w not in topic and stem(w) not in common for w in words]
    for i, first in enumerate(words):
        if not content(first) and not any(c.isdigit() for c in first):  # "1-2 business days"
            continue
        for j in range(i + 1, min(i + MAX_GRAM_WORDS, len(words))):
            if content(words[j]) and any(own[i : j + 1]):
                out.add(" ".join(words[i : j + 1]))
    return out


_ARTICLES = ("the", "a", "an", "any", "this", "that", "these", "those")
_DETERMINERS = frozenset((*_ARTICLES, "its", "their", "your", "our", "his", "her"))


def _verb_and_object(phrase: str) -> bool:
    """A word right before a determiner ("include the cancellation", "gives the current"):
    the judge's verb and the start of its object, where the object's end was cut by a word
    other reasons use too ("… the cancellation link for the order"). A noun phrase holds a
    determiner only after a function word ("photo of the damage")."""
    words = phrase.split()
    return any(a not in STOP and b in _DETERMINERS for a, b in pairwise(words))


_SIGN_BEFORE = "$€£¥#"
_SIGN_AFTER = "%"


def surface(phrase: str, texts: Sequence[str]) -> str:
    """The phrase as the first of `texts` that holds it wrote it, when its words say more than
    the normalised ones ("free over $35", "1.5 kg" for "free over 35", "1 5 kg"); else the
    phrase (a capital at a sentence's start is no reason to quote it)."""
    want = phrase.split()
    for text in texts:
        found = token_spans(text)
        words = [w for *_, w in found]
        for i in range(len(words) - len(want) + 1):
            if words[i : i + len(want)] != want or not all(
                _joined(text, found[k], found[k + 1]) for k in range(i, i + len(want) - 1)
            ):
                continue
            start, end = found[i][0], found[i + len(want) - 1][1]
            if start and text[start - 1] in _SIGN_BEFORE:
                start -= 1
            if end < len(text) and text[end] in _SIGN_AFTER:
                end += 1
            written = " ".join(text[start:end].split())
            return phrase if norm(written) == phrase and written.casefold() == phrase else written
    return phrase


def _joined(text: str, left: tuple[int, int, str], right: tuple[int, int, str]) -> bool:
    """Two words that belong to one phrase as written: apart by spaces and signs ("over $35"),
    or a number's own mark ("1.5", "1,000", "9:30"); not across a comma or a full stop."""
    gap = text[left[1] : right[0]]
    if not gap.strip(" \t" + _SIGN_BEFORE + _SIGN_AFTER):
        return True
    return gap in {".", ",", ":", "/"} and left[2][-1:].isdigit() and right[2][:1].isdigit()


def passed_answers(group: Group) -> tuple[str, ...]:
    """The answers that passed the group's criterion, as written, each once."""
    return tuple(dict.fromkeys(answer_text(v.example) for v in group.passed))


def reason_words(groups: Sequence[Group]) -> dict[str, frozenset[str]]:
    """Per criterion, the stems of its reasons, passed and failed (`judge_words` reads them)."""
    by_key: dict[str, set[str]] = {}
    for g in groups:
        if g.key.startswith("criterion:"):
            words = by_key.setdefault(g.key, set())
            words.update(stem(w) for v in g.failed + g.passed for w in tokens(v.reason))
    return {key: frozenset(words) for key, words in by_key.items() if words}


def judge_words(key: str, words: dict[str, frozenset[str]]) -> frozenset[str]:
    """The stems a judge uses for the criteria other than `key`, in the reasons of at least
    two of them and a quarter of them: its phrasing ("talks about … in general terms but never
    brings up …, so the answer falls short"), whatever the criterion. `words` come from the
    job's groups, the reasons of every candidate's train runs: a proposal's own few failures
    may hold one paragraph-style reason where the job has seen that style for every topic."""
    sets = [w for k, w in words.items() if k != key]
    need = max(2, math.ceil(0.25 * len(sets)))
    counts = Counter(w for stems in sets for w in stems)
    return frozenset(w for w, n in counts.items() if n >= need)


def _spoken(reason: str, tools: frozenset[str]) -> str:
    """The reason's words as phrases are looked for in it: segment by segment (a phrase never
    spans a break), less the parts that name one of the agent's `tools`."""
    parts = [" ".join(words) for words, _ in _segments(reason)]
    return " | ".join(p for p in parts if not any(has_words(p, t) for t in tools))


def missing_phrases(
    group: Group,
    others: list[Group],
    limit: int = 2,
    tools: frozenset[str] = frozenset(),
    phrasing: frozenset[str] = frozenset(),
    shown: Sequence[str] = (),
) -> list[tuple[str, bool]]:
    """What this group's failing answers lacked, best supported first: (phrase, quoted);
    `tools`: the agent's tool names; `phrasing`: the judges' words across the job
    (`judge_words`); `shown`: answers that passed this criterion in the job's other runs, each
    of which supports the phrases it holds."""
    other_words = [{w for v in g.failed + g.passed for w in tokens(v.reason)} for g in others]
    other_words = [words for words in other_words if words]
    contrast = bool(other_words or phrasing)
    if not contrast and not any(_QUOTED.search(v.reason) for v in group.failed):
        return []
    need = max(1, math.ceil(0.25 * len(other_words)))
    df = Counter(x for words in other_words for x in {stem(w) for w in words})
    generic = {w for w, n in df.items() if n >= need}
    topic = {w for v in group.failed for w in tokens(v.instruction)}
    topic |= {w for ex in group.tasks for w in tokens(ex.task.query)}
    score: Counter[str] = Counter()
    quoted: set[str] = set()
    named = frozenset(norm(t) for t in tools)
    read: list[tuple[Verdict, str, set[str], bool, str]] = []
    found: dict[str, None] = {}
    grams: set[str] = set()
    for v in [*group.failed, *group.passed]:
        answer = _answer(v.example)
        spans = {" ".join(t) for t, q in _segments(v.reason) if q}
        # A reason that quotes only what the answer says ("offers 'store credit', which the
        # policy does not allow") is about that quote; its other words are the judge's.
        echoed = bool(spans) and all(has_words(answer, x) for x in spans)
        mine = _phrases(v.reason, generic, topic, contrast, named, phrasing)
        quoted |= mine & spans
        found.update(dict.fromkeys(sorted(mine)))
        if contrast:
            grams |= _reason_grams(v.reason, generic | phrasing, topic, named) - mine
        read.append((v, answer, spans, echoed, _spoken(v.reason, named)))
    found.update(dict.fromkeys(sorted(grams)))
    # A phrase is supported by every reason that names it, whatever its style: "Left out:
    # order number (…)" and "… never brings up the order number; …" both name the order
    # number, while each style's own prose is in that style's reasons only.
    for v, answer, spans, echoed, spoken in read:
        for phrase in found:
            if not has_words(spoken, phrase) or (echoed and phrase not in spans):
                continue
            there = has_words(answer, phrase)
            if v.passed:
                score[phrase] += 1 if there else 0
            else:
                score[phrase] += -1 if there else 1
    passing = {a for v, a, *_ in read if v.passed} | {norm(a) for a in shown}
    backed: set[str] = set()
    for phrase in found:
        if score[phrase] > 0:  # named as missing: an answer that passed with it backs that
            held = sum(has_words(a, phrase) for a in passing)
            score[phrase] += held
            backed |= {phrase} if held else set()
    common = generic | phrasing
    # A short phrase cut from a reason ("cancellation link" of "does not include the
    # cancellation link for the order") counts once something besides its own reason names
    # it: another reason, or an answer that passed.
    live = [p for p in score if score[p] > (1 if p in grams else 0)]
    # A judge that quotes is quoting what it missed: its quoted spans first, the rest only
    # when it quoted nothing usable.
    if any(p in quoted for p in live):
        live = [p for p in live if p in quoted]
    if not live:
        return []
    # Equal support: a phrase a passing answer holds, the longest (it said "order number",
    # not just "number"); else the one with the fewest words every judge uses ("freight
    # account" before "brings up the freight").
    ranked = sorted(
        live,
        key=lambda p: (
            -score[p],
            p not in backed,
            0 if p in backed else sum(stem(w) in common for w in p.split()),
            -len(p),
            p,
        ),
    )
    # One reason, and nothing else names any of its phrases: which of them is the fact and
    # which the judge's prose ("data export" or "answer falls short"), nothing tells. No
    # rule rather than a guess; more runs (and `phrasing`, `shown`) decide later.
    top = ranked[0]
    if passing and not backed & set(live) and not quoted & set(live):
        return []  # answers passed the criterion and none says any phrase named ("off-topic")
    if score[top] == 1 and not quoted & set(live):
        inside = [g for g in grams if score[g] == 1 and g != top and has_words(top, g)]
        # Other failures of the group gave reasons that do not name it ("Not addressed." beside
        # two that ask for a photo): what one of several reasons says is that reason's word.
        several = sum(1 for v in group.failed if v.reason.strip()) > 1
        if several or sum(score[p] == 1 for p in ranked) > 1 or inside or _verb_and_object(top):
            return []  # ("fails to state the 30-day refund window": the refund window, or all?)
    chosen: list[tuple[str, bool]] = []
    for phrase in ranked:
        if len(chosen) >= limit:
            break
        if chosen and score[phrase] < max(2, score[chosen[0][0]] / 2):
            break
        if any((set(phrase.split()) & set(c.split())) - STOP for c, _ in chosen):
            continue  # a second phrase shares no word with the first ("brings up the invoice")
        if chosen and passing and phrase not in backed and phrase not in quoted:
            continue  # answers passed and none says it ("fails criterion" after "tracking link")
        chosen.append((phrase, phrase in quoted))
    reasons = [v.reason for v in group.failed]
    return [(p, q) if q or p not in backed else (_grown(p, reasons, passing), q) for p, q in chosen]


def _grown(phrase: str, reasons: Sequence[str], passing: set[str]) -> str:
    """The phrase with the words that follow it in a reason, as long as an answer that passed
    says them too: a word other reasons use ends a phrase ("1 to 2 business" of "… (1 to 2
    business days)", where "days" is also in "45 days"), though it is part of the fact."""
    want = phrase.split()
    best = want
    for reason in reasons:
        for words, quoted in _segments(reason):
            if quoted:
                continue
            for i in range(len(words) - len(want) + 1):
                if words[i : i + len(want)] != want:
                    continue
                for j in range(i + len(want) + 1, min(len(words), i + MAX_PHRASE_WORDS) + 1):
                    grown = words[i:j]
                    if not any(has_words(a, " ".join(grown)) for a in passing):
                        break
                    if grown[-1] not in STOP and len(grown) > len(best):
                        best = grown
    return " ".join(best)
