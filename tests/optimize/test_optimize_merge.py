"""The merge step: two lineages' changes in one child, component by component, and the loop
that proposes it when their validation results complement each other."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from agentopt.contracts.optimize_job import CandidateRecord, JobRecord, ScoreSummary
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.models.types import ChatRequest
from agentopt.workflows.optimize.merge import merge_definitions, merge_text, pick_pair
from agentopt.workflows.optimize.strategies import RULES_HEADING
from tests.optimize.conftest import Models, make_project, optimize, prompt_text, task

BASE = "You are the store's assistant.\nAnswer briefly."
TOOL = {
    "type": "function",
    "function": {"name": "get_order", "description": "Get an order.", "parameters": {}},
}


def test_rules_two_lineages_added_share_one_section() -> None:
    a = f"{BASE}\n\n{RULES_HEADING}\n- Mention 'refund window'.\n- Mention 'tracking link'."
    b = f"{BASE}\n\n{RULES_HEADING}\n- Mention 'order number'."
    merged = merge_text(BASE, a, b)
    assert merged is not None
    assert merged.count(RULES_HEADING) == 1
    assert all(rule in merged for rule in ("refund window", "tracking link", "order number"))
    assert merged.startswith(BASE)


def test_a_line_one_lineage_removed_stays_removed_and_same_line_edits_conflict() -> None:
    base = "Intro.\nAlways offer 'store credit'.\nEnd."
    a = base + "\nMention 'tracking link'."
    b = "Intro.\nEnd.\nMention 'original payment method'."
    assert merge_text(base, a, b) == (
        "Intro.\nEnd.\nMention 'original payment method'.\nMention 'tracking link'."
    )
    assert merge_text("A\nB", "A\nB one way", "A\nB another way") is None


def test_instructions_from_one_parent_and_a_tool_description_from_the_other() -> None:
    base = AgentDefinition(name="s", model="mock:m", instructions=BASE, tools=[TOOL])
    rules = base.model_copy(update={"instructions": BASE + "\nMention 'refund window'."})
    tool = copy.deepcopy(TOOL)
    tool["function"]["description"] = "Look up an order by its id."
    described = base.model_copy(update={"tools": [tool]})
    merged = merge_definitions(base, rules, described)
    assert merged is not None
    assert merged.definition.instructions == rules.instructions
    assert merged.definition.tools == [tool]
    assert merged.taken == {"instructions": "first", "tools:get_order": "second"}
    # A parent that already holds both changes is not merged again.
    assert merge_definitions(base, merged.definition, described) is None


def record(
    cid: str, parent: str | None, per_task: dict[str, float], number: int
) -> CandidateRecord:
    score = sum(per_task.values()) / len(per_task)
    summary = ScoreSummary(score=score, pass_rate=score, n=len(per_task), per_task=per_task)
    status = "baseline" if parent is None else "evaluated"
    return CandidateRecord(id=cid, number=number, parent=parent, status=status, validation=summary)


def test_the_pair_picked_complements_on_validation_and_is_not_one_lineage() -> None:
    job = JobRecord(id="j", started_at="now")
    job.candidates = [
        record("baseline", None, {"v1": 0, "v2": 0, "v3": 0, "v4": 0}, 0),
        record("cand_01", "baseline", {"v1": 1, "v2": 1, "v3": 0, "v4": 0}, 1),
        record("cand_02", "baseline", {"v1": 0, "v2": 0, "v3": 1, "v4": 0}, 2),
        record("cand_03", "cand_01", {"v1": 1, "v2": 1, "v3": 0, "v4": 1}, 3),
    ]
    plan = pick_pair(job, set())
    assert plan is not None
    assert (plan.first, plan.second, plan.ancestor) == ("cand_03", "cand_02", "baseline")
    assert plan.gain == 1  # v3: what cand_02 adds to cand_03
    assert plan.tasks == ["v1", "v2", "v3", "v4"]  # where they differ: the merge's screening
    tried = {frozenset(("cand_03", "cand_02"))}
    second = pick_pair(job, tried)
    assert second is not None and {second.first, second.second} == {"cand_01", "cand_02"}
    tried.add(frozenset(("cand_01", "cand_02")))
    assert pick_pair(job, tried) is None  # cand_03 descends from cand_01: never a pair


PHRASES = ("refund window", "tracking link", "order number", "secure checkout")
_TOPIC = re.compile(r"\[([a-z ]+)\] question")


def topic_rows(prefix: str, n: int) -> list[dict[str, Any]]:
    rows = [
        task(f"{prefix}{i}", PHRASES[i % 4], query=f"[{PHRASES[i % 4]}] question {i}")
        for i in range(n)
    ]
    for row in rows:  # a criterion that names nothing: only reflection can find the phrase
        row["criteria"] = [{"name": "policy", "instruction": "The response follows the policy."}]
    return rows


def topic_judge(req: ChatRequest) -> str:
    """Passes when the answer says its topic's phrase (beyond echoing the question)."""
    text = prompt_text(req)
    query = re.search(r"<query-(\w+)>\n(.*?)\n</query-\1>", text, re.S)
    response = re.search(r"<response-(\w+)>\n(.*?)\n</response-\1>", text, re.S)
    topic = _TOPIC.search(query.group(2)) if query else None
    said = response.group(2).replace(query.group(2), "") if response and query else ""
    ok = topic is not None and topic.group(1) in said
    return json.dumps({"verdicts": [{"name": "policy", "passed": ok, "reason": "see policy"}]})


def one_phrase_reflection(req: ChatRequest) -> str:
    """A modest reflection model: one rule per call, for the first example's topic."""
    text = prompt_text(req)
    current = re.search(r"<instructions-(\w+)>\n(.*?)\n</instructions-\1>", text, re.S)
    base = current.group(2) if current else ""
    for phrase in _TOPIC.findall(text):
        if phrase not in base:
            return json.dumps({"instructions": f"{base}\nAlways say '{phrase}'.", "rationale": "r"})
    return json.dumps({"instructions": base, "rationale": "nothing"})


def test_the_loop_merges_two_lineages_that_learned_different_rules(
    tmp_path: Path, models: Models
) -> None:
    models.add("topic_judge", topic_judge)
    models.add("one_phrase_reflect", one_phrase_reflection)
    project = make_project(
        tmp_path,
        topic_rows("t", 8),
        validation=topic_rows("v", 8),
        test=topic_rows("x", 4),
        options={
            "eval_model": "mock:topic_judge",
            "optimization_model": "mock:one_phrase_reflect",
            "optimization_config": {"candidate_screening_sample_size": 2},
        },
    )
    outcome = optimize(project, max_candidates=6, seed=2, parallel_proposals=2)
    job = outcome.job
    merges = [c for c in job.candidates if c.strategy == "merge"]
    assert merges, [(c.id, c.strategy, c.status) for c in job.candidates]
    merge = merges[0]
    first, second = merge.mutation["merged"]
    assert merge.parent == first
    text = outcome.instructions[merge.id].splitlines()
    for parent in (first, second):
        rules = [x for x in outcome.instructions[parent].splitlines() if x.startswith("Always")]
        assert rules and all(rule in text for rule in rules)
    # Each parent passes only the phrases it learned; the merge passes both sets.
    assert merge.status == "evaluated" and merge.validation is not None
    scores = [job.candidate(p).validation.score for p in (first, second)]  # type: ignore[union-attr]
    assert merge.validation.score is not None and merge.validation.score > max(scores)
