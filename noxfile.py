"""nox sessions: tests (CI), slow (the slow test tier), report (the main job), thirdparty (audits of other libraries), bench, lint.

Every session installs the project with pip into a virtualenv (the CPU
torch wheel lies on this machine's disk and pip finds it; uv does not) and
pins torch/jax through constraints.txt.
"""

import os

import nox

nox.options.default_venv_backend = "virtualenv"
nox.options.sessions = ["lint", "tests"]
PYTHON = "3.11"
CONSTRAINTS = ("-c", "constraints.txt")


def install(session, extras):
    session.install("--upgrade", "pip")
    session.install(*CONSTRAINTS, f".[{extras}]")
    # compiled definitions and jax programs (spec/cache.py) in the session's own folder: a fresh
    # clone (CI) starts cold, and what one process derives its xdist siblings and later runs reuse
    if "LOSSCHECK_CACHE" not in os.environ:
        session.env["LOSSCHECK_CACHE"] = os.path.join(session.virtualenv.location, "losscheck-cache")


def _pytest(session, tier):
    install(session, "torch,jax,dev")
    session.env["HYPOTHESIS_PROFILE"] = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    # two workers (CI has two cores); --dist loadgroup keeps the torch and jax items of one
    # (quantity, property) in one worker, where the second reuses the first's reference values
    workers = os.environ.get("LOSSCHECK_WORKERS", str(min(2, os.cpu_count() or 1)))
    session.run("pytest", "-q", "-rs", "--durations=10", "-n", workers, "--dist", "loadgroup", "-m", tier,
                *session.posargs)


@nox.session(python=PYTHON)
def tests(session):
    """The test suite (CI): properties of our implementations, spec claims, meta-tests, textbook
    audits (derandomised), all but the slow tier (properties/tests/tiers.py)."""
    _pytest(session, "not slow")


@nox.session(python=PYTHON)
def slow(session):
    """The slow tier (properties/tests/tiers.py): our implementations at float16 and bfloat16 and the
    items that take 30 s or more; run before a release (HYPOTHESIS_PROFILE=thorough for a larger budget)."""
    _pytest(session, "slow")


@nox.session(python=PYTHON)
def report(session):
    """Audit every registered implementation and write reports/out/index.{md,html} and results.json."""
    install(session, "torch,jax")
    jobs = os.environ.get("LOSSCHECK_WORKERS", str(os.cpu_count() or 1))  # one audit per core, each in its own process
    session.run("losscheck", "report", "--out", "reports/out", "--jobs", jobs, *session.posargs)


@nox.session(python=PYTHON)
def thirdparty(session):
    """Audit third-party loss implementations (impls/adapters), one process each: reports/out/thirdparty.{md,html}.

    torch 2.14.1 + torchvision 0.29.1 here (torchvision imports only with that pair; a CUDA build,
    ~5.5 GB, kept out of the tests session), jax pinned as in constraints.txt, keras on the jax backend.
    """
    session.install("--upgrade", "pip")
    session.install("-c", "constraints-thirdparty.txt", ".[jax]", "torch", "torchvision", "optax", "monai", "kornia",
                    "scikit-learn", "torchmetrics", "fvcore", "segmentation-models-pytorch", "pytorch-toolbelt", "keras")
    session.env["KERAS_BACKEND"] = "jax"
    jobs = str(min(os.cpu_count() or 1, 4))  # one audit process per core (posargs may override: --jobs 1)
    session.run("losscheck", "audit-all", "--out", "reports/out", "--jobs", jobs, *session.posargs)


@nox.session(python=PYTHON)
def bench(session):
    """Side-by-side benchmarks (pytest-benchmark, ratios ours / fastest peer) and the engine's own speed
    (asv_benchmarks/engine.py); `-- asv` also times the checkout with asv --quick, records it under HEAD's
    commit and publishes the dashboard (.asv/html; `asv preview` serves it); `-- asv ARGS...` passes ARGS
    to asv run (e.g. `--bench logsumexp`)."""
    install(session, "torch,jax,bench,dev")
    session.env["LOSSCHECK_BENCH"] = "1"
    os.makedirs("reports/out", exist_ok=True)
    session.run("pytest", "properties/tests/test_bench.py", "properties/tests/test_bench_engine.py", "--benchmark-only",
                "--benchmark-json", "reports/out/benchmarks.json", "-q")
    session.run("python", "-m", "asv_benchmarks.ratios", "reports/out/benchmarks.json")
    if "asv" in session.posargs:
        extra = session.posargs[session.posargs.index("asv") + 1:]
        session.run("asv", "machine", "--yes")
        # --python=same: this session's virtualenv (losscheck and the peers, installed above).  asv saves the
        # results of such a run only with --set-commit-hash: recorded under HEAD, each run on a new commit adds
        # a point to the history (`asv run NEW` times the commits missing, in asv's own environments: asv.conf.json)
        session.run("asv", "run", "--quick", "--python=same", "--set-commit-hash", "HEAD", "--show-stderr", *extra)
        session.run("asv", "publish")
        session.log("the dashboard: `asv preview` (serves .asv/html), or open .asv/html/index.html")


@nox.session(python=PYTHON)
def lint(session):
    """ruff."""
    session.install("ruff")
    session.run("ruff", "check", ".")
