"""agentopt's error codes → the categorized codes of the M365 output schema (1.9+).

Internal codes stay what the evaluators and targets emit (several already are upstream's
names: agentAuthenticationError, toolCallNotAllowed, judgeTimeout, ...); this is the one place
that translates the others, and folds what a document's schema version does not know into its
generic code, so an output always validates against the schema matching its schemaVersion.
"""

from __future__ import annotations

from agentopt.core.files.m365_schemas import ErrorCodes

GENERIC_ITEM = "agentRequestFailed"
GENERIC_EVALUATOR = "evaluatorError"
ITEM_CODE = {
    "timeout": "agentTimeout",
    "toolRoundsExceeded": GENERIC_ITEM,
}
EVALUATOR_CODE = {
    "judgeParseFailed": "judgeOutputUnparseable",
    "judgeUnavailable": GENERIC_EVALUATOR,
    "evaluatorCrashed": GENERIC_EVALUATOR,
    "evaluatorFailed": GENERIC_EVALUATOR,
    "missingInput": "evaluatorConfigurationError",
}


def item_error(code: str, message: str, codes: ErrorCodes) -> dict[str, str]:
    """An `ErrorObject`; a code the schema lacks becomes the generic one, named in the text."""
    upstream = ITEM_CODE.get(code, code)
    if upstream in codes.item:
        return {"code": upstream, "message": message or upstream}
    return {"code": GENERIC_ITEM, "message": f"{message or code} ({code})"}


def errored_score_code(code: str | None, codes: ErrorCodes) -> str | None:
    """The `ErroredScore.code` for an evaluator error, or None when the schema has none."""
    if not codes.evaluator:
        return None
    upstream = EVALUATOR_CODE.get(code or "", code or "")
    return upstream if upstream in codes.evaluator else GENERIC_EVALUATOR
