"""The variants of a matrix run: from repeated `--agent-model` / `--instructions` flags (every
model × every instructions text), or from eval.yaml `variants:`.

A variant changes the model and/or the instructions of the agent the run would otherwise use
(the ad-hoc agent the flags make, or the suite's own prompt agent, its tools and skills kept).
"""

from __future__ import annotations

from itertools import product
from pathlib import Path

from agentopt.contracts.matrix import VariantSpec
from agentopt.core.errors import ConfigError
from agentopt.core.files.eval_yaml import EvalConfig, InstructionFile
from agentopt.core.files.yaml_source import read_text

MAX_VARIANTS = 16
"""More columns than this is a typo (a glob expanded by the shell), not a comparison."""


def _instructions(value: str, cwd: Path) -> tuple[str, str, str]:
    """(text, source, short label) of one `--instructions` value: TEXT or @FILE."""
    if not value.startswith("@"):
        words = " ".join(value.split())
        return value, "--instructions", words if len(words) <= 24 else words[:23] + "…"
    shown = value[1:]
    path = Path(shown)
    path = path if path.is_absolute() else cwd / path
    if not path.is_file():
        raise ConfigError.at("", "--instructions", f"file not found: {shown}")
    return read_text(path, shown=shown, kind="text"), value, Path(shown).stem


def _unique(labels: list[str]) -> list[str]:
    """Labels made unique by a number where two are the same (two files named `v.md`)."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        n = seen[label] = seen.get(label, 0) + 1
        out.append(label if n == 1 else f"{label} ({n})")
    return out


def variants_from_flags(
    models: list[str] | None, instructions: list[str] | None, cwd: Path
) -> list[VariantSpec]:
    """Every model × every instructions value; fewer than two is not a matrix ([])."""
    models = list(dict.fromkeys(models or []))
    texts = [_instructions(v, cwd) for v in dict.fromkeys(instructions or [])]
    model_axis: list[str | None] = list(models) or [None]
    text_axis: list[tuple[str, str, str] | None] = list(texts) or [None]
    pairs = list(product(model_axis, text_axis))
    if len(pairs) < 2:
        return []
    _check_count(len(pairs), "--agent-model × --instructions")
    labels = []
    for model, text in pairs:
        parts = []
        if len(models) > 1 and model:
            parts.append(model.split("@", 1)[0])  # `compat:qwen@http://…`: the name is enough
        if len(texts) > 1 and text:
            parts.append(text[2])
        labels.append(" · ".join(parts))
    return [
        VariantSpec(
            label=label,
            model=model,
            instructions=text[0] if text else None,
            instructions_source=text[1] if text else None,
        )
        for label, (model, text) in zip(_unique(labels), pairs, strict=True)
    ]


def variants_from_config(config: EvalConfig | None) -> list[VariantSpec]:
    """eval.yaml `variants:` ([] when it has fewer than two)."""
    if config is None or len(config.variants) < 2:
        if config is not None and len(config.variants) == 1:
            raise ConfigError.at(
                str(config.path or "eval.yaml"),
                "variants",
                "expected two or more variants to compare, found one",
            )
        return []
    _check_count(len(config.variants), "eval.yaml variants")
    out = []
    for i, entry in enumerate(config.variants):
        where = f"eval.yaml variants[{i}]"
        if entry.model is None and entry.instruction is None:
            raise ConfigError.at(
                str(config.path or "eval.yaml"),
                f"variants[{i}]",
                "expected `model` and/or `instruction`, found neither",
            )
        text = entry.instruction_text()
        source = (
            f"@{entry.instruction.file.name}"
            if isinstance(entry.instruction, InstructionFile)
            else (where if text is not None else None)
        )
        label = entry.name or " · ".join(
            p
            for p in (
                entry.model,
                entry.instruction.file.stem
                if isinstance(entry.instruction, InstructionFile)
                else None,
            )
            if p
        )
        out.append(
            VariantSpec(
                label=label or f"variant {i + 1}",
                model=entry.model,
                instructions=text,
                instructions_source=source,
            )
        )
    labels = _unique([v.label for v in out])
    return [v.model_copy(update={"label": label}) for v, label in zip(out, labels, strict=True)]


def _check_count(n: int, what: str) -> None:
    if n > MAX_VARIANTS:
        raise ConfigError(
            f"{what} makes {n} variants; a matrix run takes at most {MAX_VARIANTS}",
            hint="compare fewer models or instructions at once",
        )
