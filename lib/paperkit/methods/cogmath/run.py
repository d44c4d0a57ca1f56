"""Orchestration of cogmath-generate, cogmath-eval and cogmath-report: settings (every default),
input checks before anything is written, and the runs themselves.

* ``cogmath-generate``: :class:`GenerateSettings`, :func:`prepare_generate` (the --source spec, the
  official/problems file, the agents/backend combination, the cache), :func:`execute_generate`.
* ``cogmath-eval``: :class:`EvalSettings`, :func:`prepare_eval` (the inquiry file, prompts, backend
  options and the response cache, all before a run dir exists), :func:`execute_eval`. The SQLite
  response cache is the resume mechanism for answers: every answer is stored as it arrives, so a
  resumed run sends only the prompts that have no answer yet (failed calls are never cached, so they
  are retried). Scoring is not a checkpointed stage: it is cheap, and a stage would freeze the failed
  items of the first try instead of retrying them.
* ``cogmath-report``: :class:`ReportSettings`, :func:`prepare_report`, :func:`execute_report`.

:func:`evaluate` is the evaluation itself (prompts, answers from a backend, verdicts, summary).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paperkit.core.errors import PaperkitError, UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.methods.cogmath.backends import CachedBackend
from paperkit.methods.cogmath.prompts import Prompts, fill
from paperkit.methods.cogmath.scoring import score_row, summarize
from paperkit.methods.cogmath.sources import Problem, available

log = logging.getLogger("paperkit.cogmath")

BACKEND_CHOICES = ("openai", "shell", "hf", "rule", "replay")
DTYPE_CHOICES = ("auto", "float32", "bfloat16", "float16")
AGENT_CHOICES = ("rule", "llm")
JUDGE_CHOICES = ("rule", "llm")
REPORT_FORMATS = ("table", "markdown", "csv", "tsv", "jsonl")
SOURCE_KINDS = ("synthetic", "official", "problems")
MAX_SYNTHETIC = 1_000_000
# Where the server is and how patiently it is called do not change answers: a run may resume elsewhere.
EVAL_RESUME_FREE = ("base_url", "api_key_env", "timeout", "retries", "cache")


# ------------------------------------------------------------------------------------------ settings
@dataclass(frozen=True)
class BackendSettings:
    """The model/backend parameters shared by cogmath-eval and cogmath-generate (LLM agents).

    ``backend`` has no default: cogmath-eval requires it (a forgotten ``--backend`` must not let the rule
    solver answer as if it were the model), cogmath-generate needs it only for LLM agents."""

    backend: str | None = None
    model: str | None = None
    base_url: str = "http://127.0.0.1:8000/v1"
    api_key_env: str | None = None
    cmd: str | None = None
    dtype: str | None = None
    failures: str | None = None
    timeout: float = 60.0
    retries: int = 2
    max_tokens: int = 1024
    seed: int = 0
    device: str = "auto"


@dataclass(frozen=True)
class EvalSettings(BackendSettings):
    judge: str = "rule"


@dataclass(frozen=True)
class GenerateSettings(BackendSettings):
    agents: str = "rule"
    min_steps: int = 2
    max_steps: int = 4


@dataclass(frozen=True)
class ReportSettings:
    names: tuple[str, ...] | None = None
    fmt: str = "table"


# ------------------------------------------------------------------------------------------ backends
def build_backend(settings: BackendSettings, *, template: str, memory: Sequence[tuple[str, str]]) -> Any:
    """The inner backend for ``settings`` (None for replay); its worker count is ``--jobs``."""
    from paperkit.core.resources import jobs
    from paperkit.methods.cogmath import backends

    s = settings
    return backends.make_backend(
        s.backend, model=s.model, base_url=s.base_url, api_key_env=s.api_key_env, cmd=s.cmd, timeout=s.timeout,
        retries=s.retries, max_tokens=s.max_tokens, jobs=jobs(), failures=s.failures, seed=s.seed,
        template=template, memory=memory, device=s.device, dtype=s.dtype, on_warning=log.warning)


def check_cache(path: str | os.PathLike | None, *, replay: bool, model: str | None) -> None:
    """Open and close the response cache at ``path``: a file that is not a cache (or, for replay, a
    missing one, or one without answers of ``model``) is refused before anything runs."""
    from paperkit.methods.cogmath.backends import with_cache

    if path is None:
        return
    if replay:
        with_cache(None, path, model=model).cache.close()
    elif Path(path).exists():
        from paperkit.methods.cogmath.cache import ResponseCache

        ResponseCache(path).close()


# ------------------------------------------------------------------------------------------ evaluation
@dataclass
class EvalResult:
    responses: list[dict[str, Any]]
    scores: list[dict[str, Any]]
    summary: dict[str, Any]


def build_prompts(rows: Sequence[dict[str, Any]], prompts: Prompts) -> list[tuple[int, str]]:
    """(row index, prompt) for every available row, in file order."""
    return [(i, fill(prompts.solve, inquiry=r["inquiry"])) for i, r in enumerate(rows) if available(r)]


def evaluate(rows: Sequence[dict[str, Any]], backend: CachedBackend, prompts: Prompts, *, judge: str = "rule",
             judge_backend: CachedBackend | None = None, tick: Callable[[int], None] | None = None) -> EvalResult:
    """Ask ``backend`` every available inquiry and score the answers.

    ``judge='llm'`` sends free-form (explain) answers to ``judge_backend`` (default: ``backend``) with the
    ``score_judge`` prompt; numeric and unsolvable inquiries are always scored by rule.
    """
    cfg = prompts.extraction
    todo = build_prompts(rows, prompts)
    done: dict[int, Any] = {}

    def on_done(j: int, c: Any) -> None:
        done[j] = c
        if tick:
            tick(1)

    completions = backend.complete([p for _, p in todo], on_done=on_done)
    judged: dict[int, Any] = {}
    if judge == "llm":
        jb = judge_backend or backend
        jobs = [(k, fill(prompts.score_judge, inquiry=rows[i]["inquiry"],
                         reference=rows[i].get("reference_text") or rows[i].get("reference"),
                         response=completions[k].text))
                for k, (i, _) in enumerate(todo) if rows[i]["expected"] == "explain" and completions[k].text is not None]
        if jobs:
            jc = jb.complete([p for _, p in jobs])
            judged = {k: c for (k, _), c in zip(jobs, jc, strict=True)}
    responses, scores = [], []
    for k, (i, prompt) in enumerate(todo):
        r, c = rows[i], completions[k]
        j = judged.get(k)
        resp = {"problem": r["problem"], "dimension": r["dimension"], "key": backend.key(prompt),
                "response": c.text, "error": c.error}
        if j is not None:
            resp["judge_response"], resp["judge_error"] = j.text, j.error
        responses.append(resp)
        scores.append(score_row(r, c.text, c.error, cfg, judge_response=None if j is None else j.text,
                                judge_error=None if j is None else (j.error or None)))
    for s in scores:
        s["pass"] = int(bool(s["pass"]))
    return EvalResult(responses, scores, summarize(rows, scores))


# ------------------------------------------------------------------------------------------ cogmath-eval
@dataclass
class EvalInputs:
    settings: EvalSettings
    rows: list[dict[str, Any]]
    prompts: Prompts
    inner: Any  # the backend (None: replay from the cache)
    cache_path: Path
    files: list[str] = field(default_factory=list)  # input files, for the manifest
    # for the user, logged by the command once the run has started (so that an input error stays one line)
    warnings: list[str] = field(default_factory=list)


@dataclass
class EvalRun:
    """What :func:`execute_eval` returns: the evaluation and how its answers were obtained."""

    result: EvalResult
    n_prompts: int
    kind: str
    model: str
    backend_settings: str
    cache_path: Path
    cache_hits: int
    calls: int

    @property
    def errors(self) -> list[str]:
        return [str(r["error"]) for r in self.result.responses if r["error"] is not None]


def prepare_eval(settings: EvalSettings, inquiries: str | os.PathLike, *, run_dir: str | os.PathLike,
                 cache: str | os.PathLike | None = None, prompts_file: str | os.PathLike | None = None,
                 force: bool = False) -> EvalInputs:
    """Read and check everything cogmath-eval needs: the inquiries, the prompts, the backend options
    and the response cache (default: ``cache.sqlite`` in the run dir)."""
    from paperkit.methods.cogmath.prompts import load_prompts
    from paperkit.methods.cogmath.sources import read_inquiries

    if settings.backend is None:
        raise UsageError(f"Missing option '--backend'. Choose from: {', '.join(BACKEND_CHOICES)}")
    rows = read_inquiries(inquiries)
    prompts = load_prompts(prompts_file)
    cache_path = Path(cache) if cache else Path(run_dir) / "cache.sqlite"
    replay = settings.backend == "replay"
    # the run dir's own cache is cleared by --force: check it only when it will be used
    if cache or not force:
        check_cache(cache_path, replay=replay, model=settings.model)
    elif replay:
        raise UsageError("--backend replay with --force clears the run dir's cache; give --cache FILE")
    memory = [(r["inquiry"], r["reference"]) for r in rows if r["dimension"] == 0]
    inner = build_backend(settings, template=prompts.solve, memory=memory)
    return EvalInputs(settings, rows, prompts, inner, cache_path,
                      [str(inquiries)] + ([str(prompts_file)] if prompts_file else []), backend_warnings(settings))


def backend_warnings(settings: BackendSettings) -> list[str]:
    """Warnings about the backend options that do not stop the run (shell syntax in ``--cmd``)."""
    from paperkit.methods.cogmath.backends import shell_syntax_warning

    w = shell_syntax_warning(settings.cmd) if settings.backend == "shell" else None
    return [w] if w else []


def log_warnings(warnings: Sequence[str]) -> None:
    for w in warnings:
        log.warning("%s", w)


def execute_eval(inputs: EvalInputs, run: Any = None, *, progress: Callable = default_progress) -> EvalRun:
    """Answer and score every inquiry through the response cache (``run`` is the RunDir; answers are
    resumed from the cache, not from checkpoints)."""
    from paperkit.methods.cogmath.backends import with_cache

    backend = with_cache(inputs.inner, inputs.cache_path, model=inputs.settings.model)
    n = len(build_prompts(inputs.rows, inputs.prompts))
    try:
        with progress(total=n, desc="cogmath-eval", unit="q") as bar:
            result = evaluate(inputs.rows, backend, inputs.prompts, judge=inputs.settings.judge, tick=bar.update)
    finally:
        backend.cache.compact()
        backend.close()
    return EvalRun(result, n, backend.kind, backend.model, backend.settings, inputs.cache_path,
                   backend.cache.hits, backend.misses)


def check_calls(out: EvalRun, responses_path: str | os.PathLike) -> None:
    """Raise when every call failed (nothing was scored as a pass); warn when some did."""
    failed = out.errors
    if out.n_prompts and len(failed) == out.n_prompts:
        first = failed[0].strip().splitlines()[0] if failed[0].strip() else "no message"
        raise PaperkitError(f"all {out.n_prompts} calls failed (first: {first}); nothing was scored as a pass, "
                            f"see {responses_path}; fix the backend and rerun with --resume")
    if out.result.summary["n_errors"]:
        log.warning("%d of %d calls failed (recorded as failures in scores.csv; see responses.jsonl); rerun with "
                    "--resume to retry them", out.result.summary["n_errors"], out.n_prompts)


def dimension_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per dimension, in percent: its accuracy (share of all problems whose inquiry passed) and
    its relative pass rate (among problems whose original was solved; None when none was)."""
    from paperkit.methods.cogmath.dimensions import DIMENSIONS

    def pct(v: float | None) -> float | None:
        return None if v is None else 100 * v

    out = []
    for d in DIMENSIONS[1:]:
        s = summary["dimensions"][str(d.index)]
        out.append({"dimension": f"D{d.index}", "title": d.title, "stage": d.stage, "n": s.get("n"),
                    "accuracy": pct(s.get("pass_rate")), "rpr": pct(s.get("rpr"))})
    return out


# ------------------------------------------------------------------------------------------ cogmath-generate
@dataclass
class GenerateInputs:
    settings: GenerateSettings
    kind: str  # synthetic, official or problems
    n: int  # synthetic: number of problems
    problems: list[Any]  # official/problems: the problems read
    rows: list[dict[str, Any]]  # official: the imported inquiry rows
    prompts: Prompts
    inner: Any  # llm agents: the backend (None: replay)
    cache: str | None
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # logged by the command after prepare


@dataclass
class GenerateResult:
    problems: list[Any]
    rows: list[dict[str, Any]]


def parse_source(spec: str) -> tuple[str, str]:
    kind, _, arg = str(spec).partition(":")
    if kind not in SOURCE_KINDS or not arg:
        raise UsageError(f"--source {spec!r}: expected synthetic:N, official:FILE.json or problems:FILE")
    return kind, arg


def prepare_generate(settings: GenerateSettings, source: str, *, prompts_file: str | os.PathLike | None = None,
                     cache: str | os.PathLike | None = None) -> GenerateInputs:
    """Check the --source spec and the agent/backend combination; read the official or problems file."""
    from paperkit.methods.cogmath import sources
    from paperkit.methods.cogmath.prompts import load_prompts

    s = settings
    kind, arg = parse_source(source)
    llm = s.agents == "llm" and kind != "official"
    if s.agents == "llm" and kind != "official" and s.backend not in ("openai", "shell", "hf", "replay"):
        raise UsageError("--agents llm needs a language model: --backend openai, shell, hf or replay"
                         + (f" (not {s.backend})" if s.backend else ""))
    if s.min_steps > s.max_steps:
        raise UsageError(f"--min-steps {s.min_steps} is above --max-steps {s.max_steps}")
    prompts = load_prompts(prompts_file)
    files = [str(prompts_file)] if prompts_file else []
    n, problems, rows = 0, [], []
    if kind == "synthetic":
        try:
            n = int(arg)
        except ValueError:
            raise UsageError(f"--source synthetic:{arg}: N must be a whole number") from None
        if not 1 <= n <= MAX_SYNTHETIC:
            raise UsageError(f"--source synthetic:{n}: N must be between 1 and {MAX_SYNTHETIC}")
    elif kind == "official":
        problems, rows = sources.read_official(arg, cfg=prompts.extraction)
        files.append(arg)
    else:
        if s.agents != "llm":
            raise UsageError("--source problems:FILE needs --agents llm (rule agents need program-backed problems)")
        problems = sources.read_problems(arg, cfg=prompts.extraction)
        files.append(arg)
    inner = None
    if llm:
        if s.backend == "replay" and not cache:
            raise UsageError("--backend replay needs --cache FILE")
        check_cache(cache, replay=s.backend == "replay", model=s.model)
        inner = build_backend(s, template=prompts.solve, memory=[])
    return GenerateInputs(s, kind, n, problems, rows, prompts, inner, None if cache is None else str(cache), files,
                          backend_warnings(s) if llm else [])


def execute_generate(inputs: GenerateInputs, *, progress: Callable = default_progress) -> GenerateResult:
    """The inquiry rows: program-backed rule agents, an imported official file, or LLM agents."""
    from paperkit.methods.cogmath import agents, synthetic
    from paperkit.methods.cogmath.backends import with_cache

    s, problems, rows = inputs.settings, inputs.problems, inputs.rows
    if inputs.kind == "synthetic":
        if s.agents == "rule":
            with progress(total=inputs.n, desc="cogmath-generate", unit="problem") as bar:
                problems, rows = synthetic.generate(inputs.n, s.seed, max_retries=s.retries + 1,
                                                    min_steps=s.min_steps, max_steps=s.max_steps, progress=bar.update)
        else:
            problems = [Problem(p.id, p.text, str(synthetic.format_number(p.answer)), p.solution)
                        for p in synthetic.generate(inputs.n, s.seed, max_retries=1, min_steps=s.min_steps,
                                                    max_steps=s.max_steps)[0]]
    if s.agents == "llm" and inputs.kind != "official":
        backend = with_cache(inputs.inner, inputs.cache, model=s.model)
        try:
            rows = agents.llm_inquiries(problems, backend, inputs.prompts, seed=s.seed, max_retries=s.retries + 1)
        finally:
            backend.cache.compact()
            backend.close()
    return GenerateResult(list(problems), rows)


# ------------------------------------------------------------------------------------------ cogmath-report
@dataclass
class ReportInputs:
    settings: ReportSettings
    labels: list[str]
    summaries: list[dict[str, Any]]
    files: list[str]


def prepare_report(settings: ReportSettings, runs: Sequence[str | os.PathLike], *,
                   plot: str | os.PathLike | None = None) -> ReportInputs:
    """Each run's summary.json, and one distinct column name per run; ``plot`` (the --plot path) must
    name a PNG, since a PNG is what is written there."""
    from paperkit.methods.cogmath.report import load_summary

    if plot is not None and not str(plot).lower().endswith(".png"):
        raise UsageError(f"--plot {str(plot)!r} must end in .png")
    summaries = [load_summary(r) for r in runs]
    labels = list(settings.names) if settings.names else [Path(r).resolve().name for r in runs]
    if len(labels) != len(runs):
        raise UsageError(f"--names gives {len(labels)} names for {len(runs)} runs")
    if len(set(labels)) != len(labels):
        raise UsageError(f"run names must differ ({', '.join(labels)}); use --names")
    taken = [x for x in labels if x in ("metric", "unit")]
    if taken:
        raise UsageError(f"run name {taken[0]!r} is a column of the report; use --names")
    return ReportInputs(settings, labels, summaries, [str(r) for r in runs])


def execute_report(inputs: ReportInputs) -> list[dict[str, Any]]:
    """One row per metric, one column per run."""
    from paperkit.methods.cogmath.report import table_rows

    return table_rows(inputs.labels, inputs.summaries)
