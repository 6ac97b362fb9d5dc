"""Pydantic models and the one loader of each user file format.

- `eval.yaml`: `load_eval_config`, `validate_eval_config`, `parse_eval_config`,
  `dump_eval_config`, `write_eval_config`, `update_pinned_versions` (models in `eval_yaml`).
- `azure.yaml`: `load_azure_yaml` → `AzureYaml`, `read_service_agent`; azd environment:
  `load_azd_environment`, `deployed_identity`, `resolve_project_endpoint`.
- `.agent_configs/<id>/`: `load_agent_config`, `write_agent_config`, `compose_system_prompt`.
- `rubric_dimensions.json`: `load_rubric`, `parse_rubric`, `dump_rubric`.
- registered evaluator YAML: `load_evaluator_yaml`, `parse_evaluator_yaml`, `dump_evaluator_yaml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
    from agentopt.core.files.agent_config import (
        compose_system_prompt,
        load_agent_config,
        write_agent_config,
    )
    from agentopt.core.files.agent_definition import AgentDefinition, McpServer, Skill
    from agentopt.core.files.azd_env import (
        AzdEnvironment,
        azd_env_name,
        deployed_identity,
        load_azd_environment,
        parse_dotenv,
        resolve_project_endpoint,
        service_env_prefix,
    )
    from agentopt.core.files.azure_yaml import AzureYaml, load_azure_yaml, read_service_agent
    from agentopt.core.files.eval_yaml import (
        AgentSection,
        DatasetRef,
        EvalConfig,
        EvaluatorEntry,
        InstructionFile,
        OptimizationConfig,
        Options,
        Price,
        ProviderConfig,
    )
    from agentopt.core.files.eval_yaml_load import (
        load_eval_config,
        parse_eval_config,
        validate_eval_config,
    )
    from agentopt.core.files.eval_yaml_write import (
        dump_eval_config,
        update_pinned_versions,
        write_eval_config,
    )
    from agentopt.core.files.evaluator_yaml import (
        BuiltinConfigDefinition,
        CodeDefinition,
        EvaluatorSpec,
        PromptDefinition,
        RubricDefinition,
        ScoreRange,
        dump_evaluator_yaml,
        evaluator_yaml_problems,
        load_evaluator_yaml,
        parse_evaluator_yaml,
    )
    from agentopt.core.files.rubric import (
        RubricDimension,
        dump_rubric,
        load_rubric,
        parse_rubric,
        rubric_problems,
    )

_HOMES = {
    "compose_system_prompt": "agentopt.core.files.agent_config",
    "load_agent_config": "agentopt.core.files.agent_config",
    "write_agent_config": "agentopt.core.files.agent_config",
    "AgentDefinition": "agentopt.core.files.agent_definition",
    "McpServer": "agentopt.core.files.agent_definition",
    "Skill": "agentopt.core.files.agent_definition",
    "AzdEnvironment": "agentopt.core.files.azd_env",
    "azd_env_name": "agentopt.core.files.azd_env",
    "deployed_identity": "agentopt.core.files.azd_env",
    "load_azd_environment": "agentopt.core.files.azd_env",
    "parse_dotenv": "agentopt.core.files.azd_env",
    "resolve_project_endpoint": "agentopt.core.files.azd_env",
    "service_env_prefix": "agentopt.core.files.azd_env",
    "AzureYaml": "agentopt.core.files.azure_yaml",
    "load_azure_yaml": "agentopt.core.files.azure_yaml",
    "read_service_agent": "agentopt.core.files.azure_yaml",
    "AgentSection": "agentopt.core.files.eval_yaml",
    "DatasetRef": "agentopt.core.files.eval_yaml",
    "EvalConfig": "agentopt.core.files.eval_yaml",
    "EvaluatorEntry": "agentopt.core.files.eval_yaml",
    "InstructionFile": "agentopt.core.files.eval_yaml",
    "OptimizationConfig": "agentopt.core.files.eval_yaml",
    "Options": "agentopt.core.files.eval_yaml",
    "Price": "agentopt.core.files.eval_yaml",
    "ProviderConfig": "agentopt.core.files.eval_yaml",
    "load_eval_config": "agentopt.core.files.eval_yaml_load",
    "parse_eval_config": "agentopt.core.files.eval_yaml_load",
    "validate_eval_config": "agentopt.core.files.eval_yaml_load",
    "dump_eval_config": "agentopt.core.files.eval_yaml_write",
    "update_pinned_versions": "agentopt.core.files.eval_yaml_write",
    "write_eval_config": "agentopt.core.files.eval_yaml_write",
    "BuiltinConfigDefinition": "agentopt.core.files.evaluator_yaml",
    "CodeDefinition": "agentopt.core.files.evaluator_yaml",
    "EvaluatorSpec": "agentopt.core.files.evaluator_yaml",
    "PromptDefinition": "agentopt.core.files.evaluator_yaml",
    "RubricDefinition": "agentopt.core.files.evaluator_yaml",
    "ScoreRange": "agentopt.core.files.evaluator_yaml",
    "dump_evaluator_yaml": "agentopt.core.files.evaluator_yaml",
    "evaluator_yaml_problems": "agentopt.core.files.evaluator_yaml",
    "load_evaluator_yaml": "agentopt.core.files.evaluator_yaml",
    "parse_evaluator_yaml": "agentopt.core.files.evaluator_yaml",
    "RubricDimension": "agentopt.core.files.rubric",
    "dump_rubric": "agentopt.core.files.rubric",
    "load_rubric": "agentopt.core.files.rubric",
    "parse_rubric": "agentopt.core.files.rubric",
    "rubric_problems": "agentopt.core.files.rubric",
}

__all__ = [
    "AgentDefinition",
    "AgentSection",
    "AzdEnvironment",
    "AzureYaml",
    "BuiltinConfigDefinition",
    "CodeDefinition",
    "DatasetRef",
    "EvalConfig",
    "EvaluatorEntry",
    "EvaluatorSpec",
    "InstructionFile",
    "McpServer",
    "OptimizationConfig",
    "Options",
    "Price",
    "PromptDefinition",
    "ProviderConfig",
    "RubricDefinition",
    "RubricDimension",
    "ScoreRange",
    "Skill",
    "azd_env_name",
    "compose_system_prompt",
    "deployed_identity",
    "dump_eval_config",
    "dump_evaluator_yaml",
    "dump_rubric",
    "evaluator_yaml_problems",
    "load_agent_config",
    "load_azd_environment",
    "load_azure_yaml",
    "load_eval_config",
    "load_evaluator_yaml",
    "load_rubric",
    "parse_dotenv",
    "parse_eval_config",
    "parse_evaluator_yaml",
    "parse_rubric",
    "read_service_agent",
    "resolve_project_endpoint",
    "rubric_problems",
    "service_env_prefix",
    "update_pinned_versions",
    "validate_eval_config",
    "write_agent_config",
    "write_eval_config",
]

__getattr__ = lazy_exports(__name__, _HOMES)
