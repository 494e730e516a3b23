# One command sets up and runs the main job (`make demo`), one sets up and runs every check
# and the tests (`make check`, what CI runs). Everything installs into .venv from this
# repository's own files.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_QUERY ?= where are search results from several signals fused into one ranking

.PHONY: setup demo test test-slow check lint imports typecheck format inspector bench bench-serve eval eval-repo eval-dev clean

setup: $(STAMP)

# The cluster extra (Ray) is installed too: its tests are part of make check.
# torch is pinned and installed first: a bare `torch` requirement (pulled in by
# sentence-transformers) would otherwise fetch a multi-GB CUDA build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,cluster]'
	touch $(STAMP)

demo: setup
	$(BIN)/engine index . --name engine
	$(BIN)/engine query engine "$(DEMO_QUERY)" --limit 5

test: setup
	$(BIN)/python -m pytest

test-slow: setup
	$(BIN)/python -m pytest -m slow

lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

# The layer contracts in pyproject.toml ([tool.importlinter]).
imports: setup
	$(BIN)/lint-imports --no-cache

typecheck: setup
	$(BIN)/mypy engine signals scip cli eval tests

# Everything CI checks (.ci/run calls it): format, lint, import layers, types, then the fast
# and the slow tests. Measured on 2 cores while other work shared them: fast suite 8.7 min
# (about 2.5 min on an idle machine), slow suite 11.5 min (the SIGKILL fault injection 7 min,
# the serve load 2.6 min), so a clean checkout's setup plus `make check` fits well inside
# CI's 90 minutes. For quick runs while editing, `make test` runs only the fast suite.
check: lint imports typecheck test test-slow

# The official MCP Inspector's CLI and the Node.js 22 it needs (tests/cli/serve/test_inspector.py
# runs it against engine serve; skipped when this was not run). From the npm registry, pinned
# by tests/inspector/package-lock.json; about 300 MB, 20 s. .ci/run calls it.
inspector:
	npm ci --prefix tests/inspector --no-audit --no-fund --silent

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Speed on real corpora (the interpreter's stdlib): indexing and search with the lexical and
# symbol signals, then the vector signal's embedding throughput, warm search at 10k and 100k
# vectors, and a cold query process. Results go to stdout; BENCHMARKS.md records them.
# With SCALE_HOME set to an ENGINE_HOME where semble-dev is indexed (make eval-dev; it is
# only read), also exact against approximate vector search at 100k, 200k and 1M vectors built
# from its real MiniLM vectors (eval/bench/vector_scale.py; ~15 minutes, ~6 GB of memory).
SCALE_HOME ?=
bench: setup
	$(BIN)/python -m eval.bench.corpus --signals lexical,symbol
	$(BIN)/python -m eval.bench.vector embed --chunks 300
	$(BIN)/python -m eval.bench.vector search
	$(BIN)/python -m eval.bench.vector cold --chunks 300
	@if [ -n "$(SCALE_HOME)" ]; then $(BIN)/python -m eval.bench.vector scale --exact \
		--real-home $(SCALE_HOME) --benchmark $(BENCHMARKS)/semble-dev \
		--sizes 100000 200000 1000000; else echo "vector scale: skipped (set SCALE_HOME)"; fi
	$(BIN)/python -m eval.bench.tiers

# The agent tool end to end through a real MCP client (builds a 10k-chunk index first:
# about 5-15 minutes of embedding on 2 cores).
bench-serve: setup
	$(BIN)/python -m eval.bench.serve

eval: setup
	$(BIN)/engine index . --name engine-self
	$(BIN)/engine eval eval/datasets/self.jsonl --repo engine-self

# The public development sets (../shared/benchmarks): semble-dev's 36 repositories (NDCG@10
# by its own protocol, the ablation, lowConfidence on the checked negatives; then what an agent
# pays in tokens against grep-then-read, eval/agent_cost.py) and swebench-dev's
# long queries (file Acc@k, function hit@10). Needs the snapshots fetched first (`fetch
# github:<owner>/<name>` for each repository; eval/README.md); the first run indexes every
# checkout (about an hour on 2 cores for semble-dev), later runs reuse the indexes. Set
# ENGINE_HOME to keep these indexes apart from your own. swebench-dev runs all five
# repositories (about 2 hours on 2 cores, most of it sympy's 77 reindexes; SWEBENCH_REPOS=
# flask,seaborn,xarray for a quick look) and saves every issue's signal runs, so that a
# ranking change is then scored in seconds with `python -m eval.swebench ... --replay`.
BENCHMARKS ?= ../shared/benchmarks
SWEBENCH_REPOS ?=
SWEBENCH_RUNS ?= .bench-repos/swebench-runs
eval-dev: setup
	$(BIN)/engine eval --benchmark $(BENCHMARKS)/semble-dev \
		--negatives eval/datasets/semble-dev-negatives.jsonl --out eval/runs/semble-dev.json
	$(BIN)/python -m eval.agent_cost --benchmark $(BENCHMARKS)/semble-dev \
		--out eval/runs/semble-dev-agent-cost.json
	$(BIN)/python -m eval.swebench $(BENCHMARKS)/swebench-dev --repos "$(SWEBENCH_REPOS)" \
		--save-runs $(SWEBENCH_RUNS) --out eval/runs/swebench-dev.json

# A public-repository dataset, e.g. `make eval-repo REPO=jinja` (jinja, ky, urfave-cli):
# materializes the pinned commit into .eval-repos/, indexes it and runs its dataset.
eval-repo: setup
	$(BIN)/python -m eval.materialize $(REPO)
	$(BIN)/engine index .eval-repos/$(REPO) --name $(REPO)
	$(BIN)/engine eval eval/datasets/$(REPO).jsonl --repo $(REPO)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
