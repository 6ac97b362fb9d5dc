"""Load and validate `eval.yaml` (files.md §3).

azd writes and reads older spellings of several keys, and people hand-edit this file, so:
aliases are read (one warning each, then treated as canonical); unknown keys are warned
about with the closest known key; every error names the key path, the line, what was
expected and what was found — all of them at once.
"""

from __future__ import annotations

import os
import re
import shlex
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agentopt.core import redaction
from agentopt.core.errors import InputError, Problem
from agentopt.core.files import bounded
from agentopt.core.files.config_secrets import config_secret_values
from agentopt.core.files.eval_yaml import (
    INTERNAL_FIELDS,
    DatasetRef,
    EvalConfig,
    InstructionFile,
)
from agentopt.core.files.problems import Collector, KeyPath, describe
from agentopt.core.files.yaml_source import parse_yaml, read_text
from agentopt.core.redaction import looks_like_secret
from agentopt.core.versions import version_problem

# (old path, new path): read the old spelling as the new one.
ALIASES: tuple[tuple[KeyPath, KeyPath], ...] = (
    (("dataset_reference",), ("dataset",)),
    (("validation_reference",), ("validation_dataset",)),
    (("dataset_file",), ("dataset", "local_uri")),
    (("options", "max_iterations"), ("options", "max_candidates")),
    (("options", "reflection_model"), ("options", "optimization_model")),
    (
        ("options", "optimization_config", "model"),
        ("options", "optimization_config", "model_search_space"),
    ),
)
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DATASET_KEYS = ("dataset", "validation_dataset", "test_dataset")


def load_eval_config(
    path: Path | str, *, check_files: bool = False
) -> tuple[EvalConfig, list[Problem]]:
    """Read eval.yaml; return the config and its warnings.

    Args:
        path: the eval.yaml file; relative paths inside resolve against its folder.
        check_files: also report referenced local files that do not exist (errors).

    Raises:
        ConfigError: holding every error found (file, key path, line, expected, found).
    """
    path = Path(path)
    shown = str(path)
    config, c = _load(read_text(path, shown=shown), shown, path.resolve().parent, check_files)
    c.raise_if_errors(config=True)
    assert config is not None
    config.path = path
    redaction.remember(config_secret_values(config, os.environ))  # masked from here on
    return config, c.warnings


def parse_eval_config(
    text: str, file: str, base_dir: Path, *, check_files: bool = False
) -> tuple[EvalConfig, list[Problem]]:
    """`load_eval_config` for text already in memory (e.g. a proposed edit)."""
    config, c = _load(text, file, Path(base_dir).resolve(), check_files)
    c.raise_if_errors(config=True)
    assert config is not None
    return config, c.warnings


def validate_eval_config(path: Path | str) -> list[Problem]:
    """Every problem of an eval.yaml (errors and warnings), including missing local files."""
    path = Path(path)
    try:
        text = read_text(path, shown=str(path))
        return _load(text, str(path), path.resolve().parent, True)[1].problems
    except InputError as exc:
        return exc.problems


def _load(
    text: str, file: str, base_dir: Path, check_files: bool
) -> tuple[EvalConfig | None, Collector]:
    try:
        data, lines = parse_yaml(text, file)
    except InputError as exc:
        c = Collector(file)
        c.problems.extend(exc.problems)
        return None, c
    c = Collector(file, lines)
    if data is None:
        c.error((), "the file is empty; expected a mapping with agent, dataset, evaluators")
        return None, c
    if not isinstance(data, dict):
        c.error((), f"expected a mapping with agent, dataset, evaluators; found {describe(data)}")
        return None, c
    _apply_aliases(c, data)
    _prepare(c, data)
    _drop_unknown(c, EvalConfig, data, ())
    if c.errors:
        return None, c
    try:
        config = EvalConfig.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            _report(c, err)
        return None, c
    _check_refs(c, config)
    _not_acted_on(c, config)
    _resolve_paths(config, base_dir)
    if check_files:
        _check_files(c, config)
    config.base_dir = base_dir
    return (None if c.errors else config), c


NOT_USED_YET = {
    "cached_input": "agentopt does not count cached input tokens yet, so all input tokens are "
    "priced at `input`",
}
"""Keys the file accepts that no command acts on yet: each one set is a warning naming it."""


def _not_acted_on(c: Collector, config: EvalConfig) -> None:
    for model, price in config.options.prices.items():
        if price.cached_input is not None:
            path = ("options", "prices", model, "cached_input")
            c.warn(path, f"accepted but not used: {NOT_USED_YET['cached_input']}")


def _apply_aliases(c: Collector, data: dict[str, Any]) -> None:
    for old, new in ALIASES:
        parent = _get(data, old[:-1])
        if not isinstance(parent, dict) or old[-1] not in parent:
            continue
        value = parent.pop(old[-1])
        canonical = ".".join(str(p) for p in new)
        target = _get(data, new[:-1], create=True)
        if not isinstance(target, dict):
            c.error(new[:-1], f"expected a mapping, found {describe(target)}")
            continue
        if new[-1] in target:
            c.error(old, f'both "{old[-1]}" and its new name "{canonical}" are set; keep one')
            continue
        c.warn(old, f'"{old[-1]}" is an old name for "{canonical}"; read as that (rename it)')
        target[new[-1]] = value
        c.lines.move(old, new)


def _get(data: dict[str, Any], path: KeyPath, *, create: bool = False) -> Any:
    node: Any = data
    for key in path:
        if not isinstance(node, dict):
            return None
        if key not in node and create:
            node[key] = {}
        node = node.get(key)  # type: ignore[arg-type]
    return node


def _prepare(c: Collector, data: dict[str, Any]) -> None:
    """Turn the file's short forms into the model's shape, checking them on the way."""
    evaluators = data.get("evaluators")
    if evaluators is None and "evaluators" in data:
        data["evaluators"] = []
    elif isinstance(evaluators, list):
        for i, entry in enumerate(evaluators):
            if isinstance(entry, str):
                evaluators[i] = {"name": entry}
            elif not isinstance(entry, dict):
                c.error(("evaluators", i), f"expected a name or a mapping, found {describe(entry)}")
    if isinstance(data.get("options"), dict):
        _prepare_providers(c, data["options"])
        named = data["options"].get("secrets")
        if isinstance(named, list):
            for i, value in enumerate(named):
                named[i] = _env_name(c, ("options", "secrets", i), value) or value
        opt = data["options"].get("optimization_config")
        if opt is None and "optimization_config" in data["options"]:
            data["options"].pop("optimization_config")
        space = (opt or {}).get("model_search_space") if isinstance(opt, dict) else None
        if isinstance(space, str):
            opt["model_search_space"] = [m.strip() for m in space.split(",") if m.strip()]
    agent = data.get("agent")
    if not isinstance(agent, dict):
        return
    _prepare_instruction(c, agent)
    if isinstance(agent.get("command"), str):
        agent["command"] = shlex.split(agent["command"])
    headers = agent.get("headers")
    if isinstance(headers, dict):
        for name, value in headers.items():
            env = _env_name(c, ("agent", "headers", name), value)
            if env is not None:
                headers[name] = env


def _prepare_providers(c: Collector, options: dict[str, Any]) -> None:
    providers = options.get("providers")
    if not isinstance(providers, dict):
        return
    for pname, provider in providers.items():
        if not isinstance(provider, dict):
            continue
        path: KeyPath = ("options", "providers", pname)
        if provider.get("api_key_env") is not None:
            env = _env_name(c, (*path, "api_key_env"), provider["api_key_env"])
            provider["api_key_env"] = env or provider["api_key_env"]
        headers = provider.get("headers")
        if isinstance(headers, dict):
            for hname, value in headers.items():
                env = _env_name(c, (*path, "headers", hname), value)
                headers[hname] = env or value


def _env_name(c: Collector, path: KeyPath, value: Any) -> str | None:
    """The environment variable a secret is read from (`NAME` or `${NAME}`). Anything else is
    refused WITHOUT showing it: a value pasted here by mistake is usually the secret itself."""
    env = value.strip()[2:-1] if isinstance(value, str) and value.startswith("${") else value
    if isinstance(env, str) and _ENV_NAME_RE.match(env) and not looks_like_secret(env):
        return env
    found = describe(value) if not isinstance(value, str) else "a value that is not a variable name"
    c.error(
        path,
        "expected the name of an environment variable holding the secret (like LAB_API_KEY), "
        f"found {found} (not shown: it may be the secret itself); put the secret in an "
        "environment variable and name the variable here",
    )
    return None


def _prepare_instruction(c: Collector, agent: dict[str, Any]) -> None:
    value = agent.get("instruction")
    if value is None or isinstance(value, str):
        return
    path: KeyPath = ("agent", "instruction")
    if isinstance(value, dict):
        for key in value:
            if key != "file":
                c.unknown_key(path, key, ("file",))
        if isinstance(value.get("file"), str) and value["file"].strip():
            agent["instruction"] = {"file": value["file"]}
            return
    c.error(path, f"expected text or {{file: path}}, found {describe(value)}")


def _drop_unknown(
    c: Collector, model: type[BaseModel], data: dict[str, Any], path: KeyPath
) -> None:
    """Warn about and remove keys the model does not have; recurse into nested models."""
    fields = {k: f for k, f in model.model_fields.items() if k not in INTERNAL_FIELDS}
    for key in list(data):
        if key not in fields:
            c.unknown_key(path, key, fields)
            del data[key]
            continue
        value = data[key]
        if value is None and not _nullable(fields[key].annotation):
            del data[key]  # `options:` with every child commented out means "not set"
            continue
        shape, sub = _nested(fields[key].annotation)
        if sub is None:
            continue
        if shape == "model" and isinstance(value, dict):
            _drop_unknown(c, sub, value, (*path, key))
        elif shape == "list" and isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    _drop_unknown(c, sub, item, (*path, key, i))
        elif shape == "dict" and isinstance(value, dict):
            for name, item in value.items():
                if isinstance(item, dict):
                    _drop_unknown(c, sub, item, (*path, key, name))


def _nullable(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    return origin in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation)


def _nested(annotation: Any) -> tuple[str, type[BaseModel] | None]:
    """("model"|"list"|"dict", Model) when a field holds pydantic models, else ("", None)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        models = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _nested(models[0]) if len(models) == 1 else ("", None)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", annotation
    args = typing.get_args(annotation)
    if origin is list and args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
        return "list", args[0]
    if (
        origin is dict
        and len(args) == 2
        and isinstance(args[1], type)
        and issubclass(args[1], BaseModel)
    ):
        return "dict", args[1]
    return "", None


_EXPECTED = {
    "int_parsing": "an integer",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_parsing": "a number",
    "float_type": "a number",
    "string_type": "text",
    "bool_parsing": "true or false",
    "bool_type": "true or false",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "path_type": "a path",
}


def _report(c: Collector, err: Any) -> None:
    loc = tuple(err["loc"])
    kind, ctx, found = err["type"], err.get("ctx") or {}, describe(err.get("input"))
    if kind == "missing":
        c.error(loc[:-1], f'missing "{loc[-1]}"')
        return
    if kind in _EXPECTED:
        want = _EXPECTED[kind]
    elif kind == "literal_error":
        want = f"one of {ctx.get('expected', '')}".replace("'", "")
    elif kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        want = _bounds_text(kind, ctx, err.get("input"))
    else:
        want = err["msg"][0].lower() + err["msg"][1:]
    c.error(loc, f"expected {want}, found {found}")


def _bounds_text(kind: str, ctx: dict[str, Any], found: Any) -> str:
    sign = {"greater_than_equal": "≥", "greater_than": ">", "less_than_equal": "≤"}.get(kind, "<")
    bound = next(iter(ctx.values()), "")
    noun = "an integer" if isinstance(found, int) and not isinstance(found, bool) else "a number"
    return f"{noun} {sign} {bound}"


def _check_refs(c: Collector, config: EvalConfig) -> None:
    for key in _DATASET_KEYS:
        ref: DatasetRef | None = getattr(config, key)
        if ref is None:
            continue
        if not ref.name and ref.local_uri is None:
            c.error((key,), "expected name (registered dataset) or local_uri (a file or folder)")
        problem = version_problem(ref.version) if ref.version is not None else None
        if problem is not None:
            c.error((key, "version"), problem)
    seen: set[str] = set()
    for i, ev in enumerate(config.evaluators):
        if not ev.name.strip():
            c.error(("evaluators", i, "name"), "expected an evaluator name, found an empty string")
        problem = version_problem(ev.version) if ev.version is not None else None
        if problem is not None:
            c.error(("evaluators", i, "version"), problem)
        if ev.name in seen:
            c.warn(("evaluators", i), f'evaluator "{ev.name}" is listed twice; it runs once')
        seen.add(ev.name)
    if config.agent and config.agent.version is not None and not config.agent.version.strip():
        c.error(("agent", "version"), "expected a version, found an empty string")


def _resolve_paths(config: EvalConfig, base: Path) -> None:
    def fix(p: Path | None) -> Path | None:
        if p is None:
            return None
        p = Path(str(p)).expanduser()
        return p if p.is_absolute() else (base / p)

    for key in _DATASET_KEYS:
        ref = getattr(config, key)
        if ref is not None:
            ref.local_uri = fix(ref.local_uri)
    for ev in config.evaluators:
        ev.local_uri = fix(ev.local_uri)
    if config.agent is not None:
        config.agent.config = fix(config.agent.config)
        if isinstance(config.agent.instruction, InstructionFile):
            config.agent.instruction.file = fix(config.agent.instruction.file) or Path()
    for variant in config.variants:
        if isinstance(variant.instruction, InstructionFile):
            variant.instruction.file = fix(variant.instruction.file) or Path()


def _check_files(c: Collector, config: EvalConfig) -> None:
    def need(path: Path | None, where: KeyPath) -> None:
        if path is not None and not bounded.exists(path):
            c.error(where, f"expected an existing file or folder, found nothing at {path}")

    for key in _DATASET_KEYS:
        ref = getattr(config, key)
        if ref is not None:
            need(ref.local_uri, (key, "local_uri"))
    for i, ev in enumerate(config.evaluators):
        need(ev.local_uri, ("evaluators", i, "local_uri"))
    if config.agent is not None:
        need(config.agent.config, ("agent", "config"))
        if isinstance(config.agent.instruction, InstructionFile):
            need(config.agent.instruction.file, ("agent", "instruction", "file"))
    for i, variant in enumerate(config.variants):
        if isinstance(variant.instruction, InstructionFile):
            need(variant.instruction.file, ("variants", i, "instruction", "file"))
