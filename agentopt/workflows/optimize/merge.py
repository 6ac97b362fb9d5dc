"""A system-aware merge of two lineages: the child takes, component by component, what each
parent changed since their common ancestor (GEPA's merge, made finer).

Components are the instructions, each tool (by name: its description, or its removal), each
skill's body, the model and the temperature. When only one parent changed a component, the
merge takes that version; when both changed the instructions, their edits are combined line
by line (rules one lineage added next to rules the other added, a line one removed gone);
when both changed anything else, or their edits of the same lines differ, the better parent's
version wins. Two lineages that each fixed a different group of tasks, or one the tool
descriptions and the other the instructions, so become one candidate without a model call.

A pair is worth merging when neither descends from the other and their validation results
complement each other: the tasks one passes and the other fails add up to more than either.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from agentopt.contracts.optimize_job import BASELINE_ID, CandidateRecord, JobRecord
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.workflows.optimize.candidates import config_hash
from agentopt.workflows.optimize.ranking import SCORE_EPS as _EPS
from agentopt.workflows.optimize.strategies.base import Proposal

MAX_MERGES = 5
"""Merge attempts per job (GEPA's default)."""


@dataclass
class MergePlan:
    """Two evaluated candidates and their nearest common ancestor."""

    first: str
    """The parent with the better validation score (its version wins a conflict)."""
    second: str
    ancestor: str
    gain: float
    """Validation tasks the pair's best-of-both passes beyond the better parent alone."""
    tasks: list[str] = field(default_factory=list)
    """The validation tasks on which the two parents' scores differ: where a merge must beat
    the better parent (its screening; those units count towards its full validation)."""


@dataclass
class Merged:
    definition: AgentDefinition
    taken: dict[str, str] = field(default_factory=dict)
    """Component → the parent whose version the child has ("both" for combined text)."""


def lineage(job: JobRecord, cid: str) -> list[str]:
    """`cid`, its parent, …, the baseline."""
    out: list[str] = []
    current: str | None = cid
    while current is not None and current not in out:
        out.append(current)
        record = job.candidate(current)
        current = record.parent if record else None
    return out


def _per_task(record: CandidateRecord) -> dict[str, float]:
    v = record.validation
    return {k: x for k, x in (v.per_task if v else {}).items() if x is not None}


def pick_pair(job: JobRecord, tried: set[frozenset[str]]) -> MergePlan | None:
    """The untried pair whose best-of-both beats its better member on the most validation
    tasks (ties: the higher pair score, then the ids)."""
    pool = [c for c in job.evaluated if c.id != BASELINE_ID and c.validation is not None]
    best: MergePlan | None = None
    best_key: tuple[float, float, str, str] | None = None
    for i, a in enumerate(pool):
        for b in pool[i + 1 :]:
            if frozenset((a.id, b.id)) in tried:
                continue
            line_a, line_b = lineage(job, a.id), lineage(job, b.id)
            if a.id in line_b or b.id in line_a:
                continue
            ancestor = next((c for c in line_a if c in line_b), None)
            if ancestor is None:
                continue
            pa, pb = _per_task(a), _per_task(b)
            both = sum(max(pa.get(t, 0.0), pb.get(t, 0.0)) for t in set(pa) | set(pb))
            gain = both - max(sum(pa.values()), sum(pb.values()))
            if gain < 1 - _EPS:
                continue
            score_a = a.validation.score or 0.0 if a.validation else 0.0
            score_b = b.validation.score or 0.0 if b.validation else 0.0
            first, second = (a, b) if score_a >= score_b else (b, a)
            key = (gain, score_a + score_b, first.id, second.id)
            if best_key is None or key > best_key:
                best_key = key
                differ = sorted(
                    t for t in set(pa) | set(pb) if abs(pa.get(t, 0.0) - pb.get(t, 0.0)) > _EPS
                )
                best = MergePlan(first.id, second.id, ancestor, gain, differ)
    return best


# -- text ----------------------------------------------------------------------------------------


def _kept(base: list[str], other: list[str]) -> dict[int, int]:
    """Base line index → its index in `other`, for the lines `other` left unchanged."""
    kept: dict[int, int] = {}
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            kept.update({i1 + k: j1 + k for k in range(i2 - i1)})
    return kept


def merge_text(base: str, a: str, b: str) -> str | None:
    """A three-way line merge of two edits of `base`; None when both changed the same lines.

    `b`'s edits are replayed onto `a`: lines `b` removed go (when `a` kept them), lines `b`
    added are inserted after the nearest line both share, skipping lines `a` already has
    there (so two lineages that each opened the same rules section share one heading)."""
    if b in (base, a):
        return a
    if a == base:
        return b
    base_l, a_l, b_l = base.splitlines(), a.splitlines(), b.splitlines()
    in_a = _kept(base_l, a_l)
    origin = {j: i for i, j in in_a.items()}
    out: list[tuple[str, int | None]] = [(line, origin.get(j)) for j, line in enumerate(a_l)]
    matcher = SequenceMatcher(None, base_l, b_l, autojunk=False)
    for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
        if tag == "equal":
            continue
        if any(i not in in_a for i in range(i1, i2)):
            return None  # both edited these lines
        at = _position(out, i1)
        out = [entry for entry in out if entry[1] is None or not i1 <= entry[1] < i2]
        at = min(at, len(out))
        for line in b_l[j1:j2]:
            again = next(
                (k for k in range(at, len(out)) if out[k][1] is None and out[k][0] == line), None
            )
            if again is not None:
                at = again + 1
                continue
            out.insert(at, (line, None))
            at += 1
    return "\n".join(line for line, _ in out)


def _position(out: list[tuple[str, int | None]], base_index: int) -> int:
    """Where base line `base_index` sits in `out` (after the nearest earlier base line)."""
    for k, (_, origin) in enumerate(out):
        if origin is not None and origin >= base_index:
            return k
    last = max((k for k, (_, o) in enumerate(out) if o is not None), default=-1)
    return last + 1 if last >= 0 else len(out)


# -- definitions ---------------------------------------------------------------------------------


def _three_way(base: Any, a: Any, b: Any) -> tuple[Any, str]:
    """(value, who) for a component that cannot be combined: the changed side, else `a`."""
    if a == base:
        return b, ("second" if b != base else "")
    return a, "first"  # the first changed it (if both did, differently: the better one wins)


def _by_name(items: list[dict[str, Any]], key: Any) -> dict[str, Any]:
    return {key(item): item for item in items}


def _tool_name(tool: dict[str, Any]) -> str:
    fn = tool.get("function")
    named = fn.get("name") if isinstance(fn, dict) else None
    return str(named or tool.get("name") or tool.get("type") or "")


def merge_definitions(
    base: AgentDefinition, first: AgentDefinition, second: AgentDefinition
) -> Merged | None:
    """The merged child, or None when it would equal one of the parents."""
    taken: dict[str, str] = {}
    update: dict[str, Any] = {}
    text = merge_text(base.instructions or "", first.instructions or "", second.instructions or "")
    if text is None:
        text, taken["instructions"] = first.instructions or "", "first"
    elif text not in (first.instructions or "", second.instructions or ""):
        taken["instructions"] = "both"
    elif text != (base.instructions or ""):
        taken["instructions"] = "first" if text == (first.instructions or "") else "second"
    update["instructions"] = text
    for key in ("model", "temperature"):
        value, who = _three_way(getattr(base, key), getattr(first, key), getattr(second, key))
        update[key] = value
        if who:
            taken[key] = who
    update["tools"], tool_sources = _merge_named(base.tools, first.tools, second.tools)
    taken.update({f"tools:{n}": who for n, who in tool_sources.items()})
    names = {_tool_name(t) for t in update["tools"]}
    if base.tool_mocks:  # mocks are not optimized; they go with a dropped tool
        update["tool_mocks"] = {k: v for k, v in base.tool_mocks.items() if k in names} or None
    skills: dict[str, Any] = {}
    for skill in base.skills:
        mine = next((s for s in first.skills if s.name == skill.name), skill)
        theirs = next((s for s in second.skills if s.name == skill.name), skill)
        chosen, who = _three_way(skill.body, mine.body, theirs.body)
        skills[skill.name] = skill.model_copy(update={"body": chosen})
        if who:
            taken[f"skills:{skill.name}"] = who
    if base.skills:
        update["skills"] = list(skills.values())
    child = base.model_copy(update=update)
    if config_hash(child) in (config_hash(first), config_hash(second)):
        return None  # one parent already is the merge
    return Merged(child, taken)


def _merge_named(
    base: list[dict[str, Any]], first: list[dict[str, Any]], second: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Tools merged by name: a description either parent rewrote, a tool either dropped."""
    b, f, s = (_by_name(x, _tool_name) for x in (base, first, second))
    out: list[dict[str, Any]] = []
    sources: dict[str, str] = {}
    for name, tool in b.items():
        value, who = _three_way(tool, f.get(name), s.get(name))
        if who:
            sources[name] = who
        if value is not None:
            out.append(copy.deepcopy(value))
    for extra in (f, s):  # tools a parent added (none today; kept if ever)
        for name, tool in extra.items():
            if name not in b and all(_tool_name(t) != name for t in out):
                out.append(copy.deepcopy(tool))
    return out, sources


def describe(plan: MergePlan, merged: Merged) -> str:
    """The rationale line: which parent gave which component."""
    parts = []
    for component, who in sorted(merged.taken.items()):
        source = {"first": plan.first, "second": plan.second, "both": "both"}[who]
        parts.append(f"{component} from {source}")
    return f"merged {plan.first} and {plan.second} (since {plan.ancestor}): " + ", ".join(parts)


def merge_proposal(definitions: Mapping[str, AgentDefinition], pair: MergePlan) -> Proposal | str:
    """The merge as a proposal, or why there is none."""
    merged = merge_definitions(
        definitions[pair.ancestor], definitions[pair.first], definitions[pair.second]
    )
    if merged is None:
        return f"{pair.first} and {pair.second} have nothing to combine"
    return Proposal(
        definition=merged.definition,
        strategy="merge",
        rationale=describe(pair, merged),
        mutation={
            "merged": [pair.first, pair.second],
            "ancestor": pair.ancestor,
            "components": merged.taken,
        },
    )


def merge_verdict(
    job: JobRecord, pair: MergePlan, child: Mapping[str, float | None]
) -> tuple[float, float, bool]:
    """On the validation tasks where the parents differ, the merge must beat the better of
    them there: a merge that only ties is what two lineages that differ by chance give, and
    not worth a full validation. Both parents' scores are their full validation results, not
    scores selected by a screening. (child's mean, the better parent's mean, accepted)"""
    sums: list[float] = []
    for cid in (pair.first, pair.second):
        record = job.candidate(cid)
        per_task = _per_task(record) if record else {}
        sums.append(sum(per_task.get(t, 0.0) for t in pair.tasks))
    mine = sum(v for t in pair.tasks if (v := child.get(t)) is not None)
    n = max(len(pair.tasks), 1)
    return mine / n, max(sums) / n, mine > max(sums) + _EPS
