"""``paperkit cogmath-eval``: ask a model every CogMath inquiry and score mastery per dimension."""

from __future__ import annotations

import json
from collections.abc import Callable

import click

from paperkit_cli import options

BACKEND_CHOICES = ["openai", "shell", "hf", "rule", "replay"]
DTYPE_CHOICES = ["auto", "float32", "bfloat16", "float16"]


class PositiveSeconds(click.ParamType):
    """A finite number of seconds above zero (``nan`` and ``inf`` are refused, exit 2)."""

    name = "seconds"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        import math

        try:
            x = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(x) or x <= 0:
            self.fail(f"{value!r} is not a finite number of seconds above 0", param, ctx)
        return x


def backend_options(f: Callable) -> Callable:
    """The model/backend options shared by cogmath-eval and cogmath-generate (LLM agents)."""
    decorators = [
        click.option("--backend", type=click.Choice(BACKEND_CHOICES), default="rule", show_default=True,
                     help="openai: an OpenAI-compatible server; shell: a program (prompt on stdin, answer on "
                          "stdout); hf: a local transformers model; rule: the template-aware rule solver; "
                          "replay: answers from --cache only."),
        click.option("--model", default=None, metavar="NAME|PATH",
                     help="openai: the model name the server serves; hf: a local Hugging Face model folder "
                          "(nothing is downloaded); replay: the cache's model to replay; shell, rule: the name "
                          "answers are cached under."),
        click.option("--base-url", default="http://127.0.0.1:8000/v1", show_default=True, metavar="URL",
                     help="OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, a hosted API)."),
        click.option("--api-key-env", default=None, metavar="VAR",
                     help="Environment variable holding the API key (never stored); none for local servers."),
        click.option("--cmd", default=None, metavar="'PROG ARGS'",
                     help="Shell backend program and arguments, split like a shell would but run without one."),
        click.option("--dtype", type=click.Choice(DTYPE_CHOICES), default=None,
                     help="hf backend: precision of the weights; auto is the model's own [default: float32 on "
                          "CPU, auto on CUDA]. Part of the cache key."),
        click.option("--failures", default=None, metavar="SPEC",
                     help="rule backend failure modes, e.g. 'memorise' or 'distracted:0.5,literal' (modes: "
                          "memorise, literal, distracted, no_refusal, no_backward, no_intermediate, off_by_one)."),
        click.option("--timeout", type=PositiveSeconds(), default=60.0, show_default=True,
                     help="Seconds per request (openai, shell); a finite number above 0."),
        click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
                     help="openai: retries with exponential backoff on timeouts, 429 and 5xx; cogmath-generate "
                          "also gives each dimension N+1 inquiry proposals before recording it as missing."),
        click.option("--max-tokens", type=click.IntRange(min=1), default=1024, show_default=True,
                     help="Longest answer to generate (openai, hf)."),
        click.option("--cache", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                     help="Response cache (SQLite; several runs may share one) to reuse and extend "
                          "[default: cache.sqlite in the run dir]. An old JSONL cache is migrated into FILE.sqlite."),
        click.option("--prompts", "prompts_file", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                     help="YAML overriding the shipped prompt templates and extraction settings."),
        options.jobs_option, options.seed_option, options.device_option,
    ]
    for d in reversed(decorators):
        f = d(f)
    return f


def build_backend(params: dict, *, template: str, memory: list) -> object:
    """The inner backend for the given option values (None for replay)."""
    import logging

    from paperkit.methods.cogmath import backends

    jobs = params["jobs"]
    if jobs == 0:
        import os

        jobs = os.cpu_count() or 1
    return backends.make_backend(
        params["backend"], model=params["model"], base_url=params["base_url"], api_key_env=params["api_key_env"],
        cmd=params["cmd"], timeout=params["timeout"], retries=params["retries"], max_tokens=params["max_tokens"],
        jobs=jobs, failures=params["failures"], seed=params["seed"], template=template, memory=memory,
        device=params["device"], dtype=params["dtype"], on_warning=logging.getLogger("paperkit.cogmath").warning)


@options.command("cogmath-eval", short_help="Ask a model every CogMath inquiry and score mastery per dimension.")
@click.option("--inquiries", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="Inquiry JSONL from cogmath-generate (one line per problem and dimension).")
@backend_options
@click.option("--judge", type=click.Choice(["rule", "llm"]), default="rule", show_default=True,
              help="Who grades free-form (explain, official D8) answers: llm (the backend with the score_judge "
                   "prompt; the faithful grader) or rule (a heuristic: the answer must state a quantity of the "
                   "reference explanation that the question does not give).")
@options.run_dir_options
def cli(**params: object) -> None:
    """Ask a model every CogMath inquiry and score mastery per dimension.

    Reads the inquiries, sends the original problem and each available inquiry (nine dimensions,
    three stages) to the backend, extracts and checks every answer, and writes into --run-dir:
    responses.jsonl, scores.csv (problem, dimension, pass, status, extracted), summary.json
    (accuracy, pass rate = mastery of the original and all its inquiries, overestimation, relative
    pass rate per dimension and stage), cache.sqlite and manifest.json. Prints one JSON summary line.
    Every answer is cached as it arrives (SQLite; runs may share one --cache): rerun with --resume
    (or --backend replay --cache FILE) to continue or repeat a run without calling the model again.
    A failed call is a failed item, never a pass; when every call fails, the outputs are still
    written and the command exits 1. Answers are read, never evaluated as code.

    A local server (vLLM, llama.cpp, Ollama): --backend openai --base-url http://127.0.0.1:8000/v1
    --model NAME --jobs 8. A hosted API: add --api-key-env VAR (an https URL; a key sent over plain
    http to another machine is warned about). The run's --seed is sent; a server that refuses
    max_tokens gets max_completion_tokens; when the first calls all fail with the same error the run
    stops (exit 1). A local transformers model: --backend hf --model PATH [--dtype bfloat16]. Any
    program: --backend shell --cmd 'python3 my_model.py' (prompt on stdin, answer on stdout).

    \b
    Examples:
      $ paperkit cogmath-generate --source synthetic:20 -o inq.jsonl
      $ paperkit cogmath-eval --inquiries inq.jsonl --backend rule --failures memorise --run-dir runs/mem
      $ paperkit cogmath-eval --inquiries inq.jsonl --backend replay --cache runs/mem/cache.sqlite --run-dir runs/mem2
      $ paperkit cogmath-eval --inquiries inq.jsonl --backend rule --failures distracted:0.5 --run-dir runs/half
    """
    import logging
    from pathlib import Path

    from paperkit.core import io, tables
    from paperkit.core.progress import progress
    from paperkit.methods.cogmath import backends, evaluate, sources
    from paperkit.methods.cogmath.prompts import load_prompts
    from paperkit_cli import runtime

    rows = sources.read_inquiries(params["inquiries"])
    prompts = load_prompts(params["prompts_file"])
    memory = [(r["inquiry"], r["reference"]) for r in rows if r["dimension"] == 0]
    run_dir = Path(params["run_dir"])
    cache_path = Path(params["cache"]) if params["cache"] else run_dir / "cache.sqlite"
    if params["backend"] == "replay":
        io.require_file(cache_path)
    inner = build_backend(params, template=prompts.solve, memory=memory)
    # where the server is and how patiently it is called do not change answers: a run may resume elsewhere
    run = runtime.start_run(run_dir, resume=params["resume"], force=params["force"],
                            resume_free=("base_url", "api_key_env", "timeout", "retries", "cache"))
    backend = backends.with_cache(inner, cache_path, model=params["model"])
    n = len(evaluate.build_prompts(rows, prompts))
    try:
        with progress(total=n, desc="cogmath-eval", unit="q") as bar:
            result = evaluate.evaluate(rows, backend, prompts, judge=params["judge"], tick=bar.update)
    finally:
        backend.cache.compact()
        backend.close()
    io.write_jsonl(run.file("responses.jsonl"), result.responses)
    tables.write_table(run.file("scores.csv"), result.scores)
    io.write_json(run.file("summary.json"), result.summary)
    s = result.summary
    failed = [r["error"] for r in result.responses if r["error"] is not None]
    if n and len(failed) == n:
        from paperkit.core.errors import PaperkitError

        first = str(failed[0]).strip().splitlines()[0] if str(failed[0]).strip() else "no message"
        raise PaperkitError(f"all {n} calls failed (first: {first}); nothing was scored as a pass, see "
                            f"{run.path / 'responses.jsonl'}; fix the backend and rerun with --resume")
    if s["n_errors"]:
        logging.getLogger("paperkit.cogmath").warning(
            "%d of %d calls failed (recorded as failures in scores.csv; see responses.jsonl); rerun with --resume "
            "to retry them", s["n_errors"], n)
    runtime.write_manifest(inputs=[params["inquiries"], params["prompts_file"]], run_dir=run.path, seed=params["seed"],
                           extra={"backend": backend.kind, "model": backend.model, "settings": backend.settings,
                                  "cache": str(cache_path), "cache_hits": backend.cache.hits, "calls": backend.misses})
    options.echo_data(json.dumps({"run_dir": str(run.path), "accuracy": s["accuracy"], "pass_rate": s["pass_rate"],
                                  "overestimation": s["overestimation"], "n_inquiries": s["n_inquiries"],
                                  "n_errors": s["n_errors"], "cached": backend.cache.hits, "called": backend.misses}))
