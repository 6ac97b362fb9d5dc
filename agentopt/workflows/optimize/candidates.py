"""Candidate identity and numbers: a content hash (so an identical configuration is never
evaluated twice) and the validation summary with tokens and cost."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from agentopt.contracts.optimize_job import CandidateRecord
from agentopt.contracts.task_record import UnitResult
from agentopt.core.digest import sha256_hex
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.models.call import CallLayer
from agentopt.workflows.optimize.evaluation import agent_cost
from agentopt.workflows.optimize.ranking import summarize_split

OPTIMIZED_FIELDS = ("model", "instructions", "temperature", "tools", "skills", "tool_mocks")


def candidate_id(number: int) -> str:
    return f"cand_{number:02d}"


def config_hash(definition: AgentDefinition) -> str:
    """SHA-256 of what the optimizer can change (whitespace at the ends ignored)."""
    data = definition.model_dump(mode="json", include=set(OPTIMIZED_FIELDS))
    data["instructions"] = (data.get("instructions") or "").strip()
    for skill in data.get("skills") or []:
        skill["body"] = (skill.get("body") or "").strip()
        skill.pop("path", None)
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return sha256_hex(blob.encode("utf-8"))


def fill_validation(
    record: CandidateRecord,
    units: Mapping[str, UnitResult],
    names: Sequence[str],
    layer: CallLayer,
    seed: int,
) -> None:
    """Set the record's validation summary, mean tokens per task and agent cost."""
    record.validation = summarize_split({n: u.score for n, u in units.items()}, names, seed)
    present = [units[n] for n in names if n in units]
    record.tokens = sum(u.tokens for u in present) / len(present) if present else None
    record.cost = sum(agent_cost(layer, record.model, u.record.tokens) for u in present)
