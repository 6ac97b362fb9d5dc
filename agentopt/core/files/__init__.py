"""Pydantic models and the one loader of each user file format.

- `eval.yaml`: `load_eval_config`, `validate_eval_config`, `parse_eval_config`,
  `dump_eval_config`, `write_eval_config`, `update_pinned_versions` (models in `eval_yaml`).
- `azure.yaml`: `load_azure_yaml` → `AzureYaml`, `read_service_agent`; azd environment:
  `load_azd_environment`, `deployed_identity`, `resolve_project_endpoint`.
- `.agent_configs/<id>/`: `load_agent_config`, `write_agent_config`, `compose_system_prompt`.
- `rubric_dimensions.json`: `load_rubric`, `parse_rubric`, `dump_rubric`.
- registered evaluator YAML: `load_evaluator_yaml`, `parse_evaluator_yaml`, `dump_evaluator_yaml`.
"""

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
