"""The secret-bearing values an eval.yaml configures, masked from the moment it is loaded
(issue 38 item 6): the values of provider and agent headers and API-key variables, the secret
parts of configured URLs' queries (`?sig=`, `?code=`), and every variable `options.secrets`
names. Their variables may be called anything (`X_TEAM`), so the environment-suffix rule of
`core.redaction` alone missed them: a header canary reached results.json and every report."""

from __future__ import annotations

from collections.abc import Mapping

from agentopt.core.files.eval_yaml import EvalConfig
from agentopt.core.redaction import secret_parts


def config_secret_values(config: EvalConfig, env: Mapping[str, str]) -> list[str]:
    """Every configured secret value found in `env`, and the secret parts of configured URLs."""
    names: list[str] = list(config.options.secrets)
    urls: list[str | None] = []
    for provider in config.options.providers.values():
        names += provider.headers.values()
        if provider.api_key_env:
            names.append(provider.api_key_env)
        urls += [provider.base_url, provider.endpoint]
    if config.agent is not None:
        names += config.agent.headers.values()
        urls.append(config.agent.endpoint)
    values = [env[n] for n in names if env.get(n)]
    values += [part for url in urls if url for part in secret_parts(url)]
    return sorted(set(values))
