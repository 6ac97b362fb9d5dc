"""No proposal carries a task's question or its expected answer: reflection lines that quote
one are dropped, a candidate that still quotes one is refused before it is evaluated, and
both are counted and shown (`optimize status`, the final report, job.json)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from agentopt.contracts.task import Criterion, Task, Turn
from agentopt.core.files.agent_definition import AgentDefinition, Skill
from agentopt.models.types import ChatRequest
from agentopt.reports.optimize_report import final_report, status_renderables
from agentopt.workflows.optimize.leak import LeakCheck
from agentopt.workflows.optimize.strategies import (
    Example,
    NoProposal,
    ProposalContext,
    make_strategy,
)
from tests.optimize.conftest import Models, make_project, optimize

QUERY = "Can I still send back the lamp I bought three weeks ago for a refund?"


def tasks() -> list[Task]:
    return [
        Task(name="a", turns=[Turn(query=QUERY, ground_truth="45 days")]),
        Task(name="b", turns=[Turn(query="Do you offer free shipping?", ground_truth="$35")]),
        Task(name="c", turns=[Turn(query="Where is my order?")]),
    ]


def test_quotations_are_found_and_general_policies_are_not() -> None:
    check = LeakCheck.of(tasks())
    # Eight consecutive words of a question, whatever the case and punctuation.
    found = check.in_line("- send back the LAMP I bought three weeks ago: yes")
    assert found is not None and (found.task, found.what) == ("a", "query")
    # A short question quoted whole, and an expected answer attached to its question.
    assert check.in_line('FAQ: "Do you offer free shipping?" Yes.') is not None
    attached = check.in_line("When asked whether you offer free shipping, answer $35.")
    assert attached is not None and attached.what == "query and expected answer"
    # The policy in general words is not a quotation; nor is a question of four words.
    assert check.in_line("Returns are accepted within 45 days of delivery.") is None
    assert check.in_line("Shipping is free on orders over $35.") is None
    assert check.in_line("When asked where is my order, call get_order.") is None
    # The user's own starting text never counts.
    assert check.in_text(f"Intro.\n{QUERY}", allowed=f"Intro.\n{QUERY}") == []


def test_skills_and_tool_descriptions_are_checked_too() -> None:
    check = LeakCheck.of(tasks())
    start = AgentDefinition(
        name="s",
        model="mock:x",
        instructions="Be brief.",
        skills=[Skill(name="returns", description="Returns.", body="Check the date.")],
        tools=[{"type": "function", "function": {"name": "get_order", "description": "Orders."}}],
    )
    skill = start.skills[0].model_copy(update={"body": f"Check the date.\nAsked: {QUERY}"})
    tool = {"type": "function", "function": {"name": "get_order", "description": f"For {QUERY}"}}
    assert [x.task for x in check.in_definition(start, start)] == []
    assert [
        x.task for x in check.in_definition(start.model_copy(update={"skills": [skill]}), start)
    ] == ["a"]
    assert [
        x.task for x in check.in_definition(start.model_copy(update={"tools": [tool]}), start)
    ] == ["a"]


class QuotingLayer:
    """An optimization model that rewrites `get_order` by quoting the task's question, and
    (`learns`) writes it in general words once told why a quotation is refused."""

    def __init__(self, learns: bool) -> None:
        self.learns = learns
        self.requests: list[ChatRequest] = []

    async def complete(self, model: str, request: ChatRequest, **kw: Any) -> Any:
        self.requests.append(request)
        told = "quotes a task is refused" in (request.messages[-1].content or "")
        description = "Looks up an order's status." if told and self.learns else f'For "{QUERY}"'
        tool = {"name": "get_order", "description": description}

        class Reply:
            text = json.dumps({"tool": tool, "rationale": "rewrite"})
            finish_reason = "stop"
            usage = None

        return Reply()


def tool_context(layer: QuotingLayer) -> ProposalContext:
    start = AgentDefinition(
        name="s",
        model="mock:opt_tool_reflect",
        instructions="Be brief.",
        tools=[{"type": "function", "function": {"name": "get_order", "description": "Orders."}}],
    )
    task = Task(
        name="a", turns=[Turn(query=QUERY, criteria=[Criterion(name="c", instruction="x")])]
    )
    record = {"response": "no", "evaluators": [], "tool_calls": [{"name": "get_order"}]}
    ex = Example(task, 0.0, "fail", record)
    return ProposalContext(
        number=1, parent_id="baseline", parent=start, examples=[ex], train=[ex],
        tried_models=set(), search_space=[], layer=layer, optimization_model="m", seed=0,  # type: ignore[arg-type]
        leaks=LeakCheck.of([task]), start=start,
    )  # fmt: skip


def test_a_tool_rewrite_that_quotes_a_task_is_dropped_and_counted() -> None:
    """A model that quotes the task again when asked again: both replies' lines are dropped
    and counted, and nothing is proposed."""
    layer = QuotingLayer(learns=False)
    try:
        asyncio.run(make_strategy("tools").propose(tool_context(layer)))
    except NoProposal as exc:
        assert exc.leaks == 2 and "quoting a task were dropped" in exc.reason
    else:
        raise AssertionError("a description that only quotes a task was proposed")
    assert len(layer.requests) == 2  # asked once more, not again and again


def test_a_tool_rewrite_that_only_quoted_a_task_is_asked_again_with_the_reason() -> None:
    """The first reply only quoted the task (dropped, counted); the model is told why and
    asked once more, and its general description is the proposal."""
    layer = QuotingLayer(learns=True)
    proposal = asyncio.run(make_strategy("tools").propose(tool_context(layer)))
    assert proposal.mutation["description"] == "Looks up an order's status."
    assert proposal.mutation["leaks_dropped"] == 1
    assert len(layer.requests) == 2
    again = layer.requests[1].messages
    assert again[-2].role == "assistant" and QUERY in (again[-2].content or "")
    assert "in general words" in (again[-1].content or "")


def rows(prefix: str, n: int) -> list[dict[str, Any]]:
    return [
        {
            "name": f"{prefix}{i}",
            "query": f"[{prefix}{i}] please tell me how the store handles my refund request now",
            "criteria": [
                {"name": "key", "instruction": "The response includes the phrase 'refund window'"}
            ],
        }
        for i in range(n)
    ]


def render(items: list[Any]) -> str:
    console = Console(width=200, record=True)
    for item in items:
        console.print(item)
    return console.export_text()


def test_memorized_reflection_lines_are_dropped_before_evaluation_and_counted(
    tmp_path: Path, models: Models
) -> None:
    """The reflection model writes one memorized line (a train question with its fix) and one
    general rule: only the general rule is tried, and the refusal is shown."""

    def reflect(req: ChatRequest) -> str:
        prompt = "\n".join(m.content or "" for m in req.messages)
        asked = next(line for line in prompt.splitlines() if line.startswith("User: ["))
        memorized = f"When asked \"{asked.removeprefix('User: ')}\", say 'refund window'."
        general = "Always say 'refund window' when customers ask about refunds."
        return json.dumps(
            {"instructions": f"Be brief.\n{memorized}\n{general}", "rationale": "fixed it"}
        )

    models.add("opt_reflect", reflect)
    project = make_project(
        tmp_path,
        rows("train", 4),
        validation=rows("val", 4),
        test=rows("test", 3),
        instructions="Be brief.",
        options={"optimization_model": "mock:opt_reflect"},
    )
    outcome = optimize(project, max_candidates=1, seed=1, parallel_proposals=1)
    job = outcome.job
    best = job.candidate(job.best or "")
    assert best is not None and best.strategy == "instructions" and best.star
    text = outcome.instructions[best.id]
    assert "When asked" not in text and "Always say 'refund window'" in text
    assert job.leak_refusals >= 1 and best.mutation["leaks_dropped"] == 1
    queries = [r["query"] for r in rows("train", 4) + rows("val", 4) + rows("test", 3)]
    for cid, instructions in outcome.instructions.items():
        assert not any(q in instructions for q in queries), cid
    saved = json.loads(outcome.store.job_json.read_text())
    assert saved["leak_refusals"] == job.leak_refusals
    shown = render(status_renderables(job))
    assert f"{job.leak_refusals} proposed text" in shown and "quoted a task's query" in shown
    assert "Leaks:" in render(final_report(job, outcome.instructions, None))


def test_a_candidate_that_still_quotes_a_task_is_refused_before_evaluation(
    tmp_path: Path, models: Models
) -> None:
    """A criterion that repeats its task's question, restated as a rule by the model-free
    proposer, would carry the question: the search refuses the candidate unevaluated."""
    question = "how do I reset the password on the mobile app"
    rows_ = [
        {
            "name": f"t{i}",
            "query": f"Please tell me {question} {i}",
            "criteria": [
                {"name": "c", "instruction": f"The response explains {question} and links the form"}
            ],
        }
        for i in range(9)
    ]
    models.add("opt_vague_judge", lambda req: json.dumps(
        {"verdicts": [{"name": "c", "passed": False, "reason": "Incomplete."}]}
    ))  # fmt: skip
    project = make_project(
        tmp_path, rows_, instructions="Be brief.", options={"eval_model": "mock:opt_vague_judge"}
    )
    stalled: list[str] = []

    class Sink:
        def attach(self, meter: Any) -> None: ...
        def status(self, message: str) -> None: ...
        def notice(self, message: str) -> None: ...
        def candidate(self, job: Any, candidate: Any) -> None: ...
        def finish(self, job: Any) -> None: ...

        def stalled(self, number: int, strategy: str, reason: str) -> None:
            stalled.append(reason)

    outcome = optimize(project, Sink(), max_candidates=2, max_stalls=1, seed=2)
    job = outcome.job
    assert job.leak_refusals >= 1
    assert [c.id for c in job.candidates] == ["baseline"]  # nothing was evaluated
    assert any(r.startswith("refused before evaluation: rules quotes the query") for r in stalled)
    units = [json.loads(x) for x in outcome.store.journal.read_text().splitlines()]
    assert {u["candidate"] for u in units if u["kind"] == "unit"} == {"baseline"}
