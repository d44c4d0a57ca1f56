"""``paperkit cogmath-eval``: ask a model every CogMath inquiry and score mastery per dimension."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._cogmath_common import backend_options

SETTINGS = "paperkit.methods.cogmath.run:EvalSettings"


@options.command("cogmath-eval", short_help="Ask a model every CogMath inquiry and score mastery per dimension.")
@click.option("--inquiries", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="Inquiry JSONL from cogmath-generate (one line per problem and dimension).")
@backend_options
@click.option("--judge", type=click.Choice(["rule", "llm"]), default="rule", show_default=True,
              help="Who grades free-form (explain, official D8) answers: llm (the backend with the score_judge "
                   "prompt; the faithful grader) or rule (a heuristic: the answer must state a quantity of the "
                   "reference explanation that the question does not give).")
@options.run_dir_options
def cli(inquiries, cache, prompts_file, run_dir, resume, force, **_):
    """Ask a model every CogMath inquiry and score mastery per dimension.

    Reads the inquiries, sends the original problem and each available inquiry (nine dimensions,
    three stages) to the backend, extracts and checks every answer, and writes into --run-dir:
    responses.jsonl, scores.csv (problem, dimension, pass, status, extracted), summary.json
    (accuracy, pass rate = mastery of the original and all its inquiries, overestimation, and per
    dimension and stage its accuracy `pass_rate` and relative pass rate `rpr`), cache.sqlite and
    manifest.json. Prints one JSON summary line. summary.json and the JSON line hold fractions in
    [0, 1]; the table on stderr and cogmath-report print percent. Per dimension, accuracy counts every
    problem with that inquiry; RPR counts only problems whose original was solved ('-' when none was).

    --backend is required: there is no default model (the rule backend is a simulated solver, not a
    language model, and must be asked for).

    Answer format: the solve prompt asks the model to finish with a line '#### <answer>'. The scorer
    takes the first of these markers it finds: '####', '\\boxed{...}', 'final answer', 'answer is',
    'answer:', else the last number in the response; numbers, fractions and simple LaTeX are compared
    exactly. Inquiries that cannot be solved (D2, D3) pass only when the response says so ('cannot be
    solved', ...) and commits to no number. Change both with --prompts (prompts.yaml: solve, extraction).

    Every answer is cached as it arrives (SQLite; runs may share one --cache): rerun with --resume
    (or --backend replay --cache FILE) to continue or repeat a run without calling the model again.
    A failed call is a failed item, never a pass; when every call fails, the outputs are still
    written and the command exits 1. Answers are read, never evaluated as code.

    A local server (vLLM, llama.cpp, Ollama): --backend openai --base-url http://127.0.0.1:8000/v1
    --model NAME --jobs 8. A hosted API: add --api-key-env VAR (an https URL; a key sent over plain
    http to another machine is warned about). The run's --seed is sent; a server that refuses
    max_tokens gets max_completion_tokens; when the first calls all fail with the same error the run
    stops (exit 1). A local transformers model: --backend hf --model PATH [--dtype bfloat16]. Any
    program: --backend shell --cmd 'python3 my_model.py' (prompt on stdin, answer on stdout; run without a
    shell, so | > $VAR are not interpreted: a warning says so).

    \b
    Examples:
      $ paperkit cogmath-generate --source synthetic:20 -o inq.jsonl
      $ paperkit cogmath-eval --inquiries inq.jsonl --backend rule --failures memorise --run-dir runs/mem
      $ paperkit cogmath-eval --inquiries inq.jsonl --backend replay --cache runs/mem/cache.sqlite --run-dir runs/mem2
      $ paperkit cogmath-eval --inquiries inq.jsonl --backend rule --failures distracted:0.5 --run-dir runs/half
    """
    import json

    from paperkit.core import io, tables
    from paperkit.methods.cogmath.run import (
        EVAL_RESUME_FREE,
        EvalSettings,
        check_calls,
        dimension_rows,
        execute_eval,
        log_warnings,
        prepare_eval,
    )
    from paperkit_cli import runtime

    s = runtime.settings(EvalSettings)
    inputs = prepare_eval(s, inquiries, run_dir=run_dir, cache=cache, prompts_file=prompts_file, force=force)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=EVAL_RESUME_FREE)
    log_warnings(inputs.warnings)
    out = execute_eval(inputs, run)
    res = out.result
    io.write_jsonl(run.file("responses.jsonl"), res.responses)
    tables.write_table(run.file("scores.csv"), res.scores)
    io.write_json(run.file("summary.json"), res.summary)
    check_calls(out, run.path / "responses.jsonl")
    sm = res.summary

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.1f}%"

    options.report_table(dimension_rows(sm), [("dimension", "dim", ""), ("title", "inquiry", ""), ("stage", "stage", "d"),
                                              ("n", "n", "d"), ("accuracy", "acc %", ".1f"), ("rpr", "RPR %", ".1f")],
                         title=f"{sm['n_problems']} problems, {sm['n_inquiries']} inquiries ({out.kind} {out.model})",
                         footer=f"accuracy {pct(sm['accuracy'])}  pass rate {pct(sm['pass_rate'])}  "
                                f"overestimation {pct(sm['overestimation']).rstrip('%')} points")
    runtime.write_manifest(inputs=inputs.files, run_dir=run.path, seed=s.seed,
                           extra={"backend": out.kind, "model": out.model, "settings": out.backend_settings,
                                  "cache": str(out.cache_path), "cache_hits": out.cache_hits, "calls": out.calls})
    options.echo_data(json.dumps({"run_dir": str(run.path), "backend": out.kind, "model": out.model, "accuracy": sm["accuracy"], "pass_rate": sm["pass_rate"],
                                  "overestimation": sm["overestimation"], "n_inquiries": sm["n_inquiries"],
                                  "n_errors": sm["n_errors"], "cached": out.cache_hits, "called": out.calls}))
