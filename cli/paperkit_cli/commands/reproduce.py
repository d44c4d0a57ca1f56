"""``paperkit reproduce``: run the papers' headline claims at laptop scale and give each a verdict."""

from __future__ import annotations

from pathlib import Path

import click

from paperkit_cli import options


@options.command("reproduce", short_help="Run the papers' headline claims and say whether each holds.")
@click.argument("selection", nargs=-1, metavar="[PAPER|CLAIM]...")
@click.option("--quick", "mode", flag_value="quick", help="Laptop-scale experiments (the default).")
@click.option("--full", "full", is_flag=True, help="The larger experiments (more seeds, longer runs).")
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Folder for report.md, report.json, figures/ and each claim's runs (required to run).")
@click.option("--resume", is_flag=True, help="Continue an interrupted report: finished claims are not rerun.")
@click.option("--force", is_flag=True, help="Overwrite a finished or unfinished report in --run-dir.")
@options.jobs_option
@click.option("--list", "list_only", is_flag=True, help="Print the registry (claims, criteria, seeds) and exit.")
@click.option("--strict", is_flag=True, help="Exit 1 when a claim does not hold or fails to run (for CI).")
def cli(selection: tuple[str, ...], mode: str | None, full: bool, run_dir: Path | None, resume: bool, force: bool,
        jobs: int, list_only: bool, strict: bool) -> None:
    """Run the papers' headline claims and say whether each holds.

    Each claim (see --list) runs the same paperkit commands and example configs as examples/, over its
    seeds, in subprocesses; the registry's criterion turns the numbers into a verdict: holds, partly,
    does not hold, not run (with the reason) or error. SELECTION narrows to papers (package name such as
    'conformal', or a paper command) or claim ids ('conformal/efficiency'). Writes report.md,
    report.json and figures/ into --run-dir, prints the table on stdout, and exits 0 whatever the
    verdicts (1 with --strict when a claim does not hold).

    \b
    Examples:
      $ paperkit reproduce --list
      $ paperkit reproduce --quick --run-dir repro -j 2
      $ paperkit reproduce conformal bandit/fusion --run-dir repro-some --resume
    """
    from paperkit.reproduce import registry

    if mode and full:
        raise click.UsageError("--quick and --full are exclusive; choose one")
    mode = "full" if full else "quick"
    claims = registry.load()
    chosen = _select(claims, selection)
    if list_only:
        _list(chosen, mode)
        return
    if run_dir is None:
        raise click.UsageError("missing --run-dir DIR (where the report and the runs go)")
    _run(chosen, claims, selection, mode, run_dir, resume, force, jobs, strict)


def _select(claims: list, selection: tuple[str, ...]) -> list:
    if not selection:
        return claims
    from paperkit_cli.registry import PAPER_OF

    chosen = []
    for s in selection:
        paper = PAPER_OF[s].key if s in PAPER_OF else None
        hit = [c for c in claims if s in (c.id, c.package, c.package.replace("_", "-")) or c.paper == paper]
        if not hit:
            raise click.UsageError(f"unknown paper or claim '{s}'; see 'paperkit reproduce --list'")
        chosen += [c for c in hit if c not in chosen]
    return chosen


def _list(claims: list, mode: str) -> None:
    from paperkit.reproduce.registry import available

    for c in claims:
        steps, seeds = c.plan(mode)
        why = available(c)
        options.echo_data(f"{c.id}\t{c.where}\tpaper: {c.paper_value}\tcriterion: {c.criterion}\t"
                          f"seeds: {','.join(map(str, seeds))}\t~{c.quick_s if mode == 'quick' else c.full_s:.0f} s"
                          + (f"\tnot run ({why})" if why else ""))


def _run(chosen: list, claims: list, selection: tuple[str, ...], mode: str, run_dir: Path, resume: bool,
         force: bool, jobs: int, strict: bool) -> None:
    import time

    from paperkit.core import io
    from paperkit.core.resources import resolve_jobs
    from paperkit.reproduce import criteria, runner
    from paperkit_cli import runtime

    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("strict", "list_only"),
                            extra={"claims": [c.id for c in chosen]})
    jobs = resolve_jobs(jobs)
    t0 = time.perf_counter()

    def done(r: dict) -> None:
        options.report(f"{r['id']}: {runner.fmt_verdict(r)} ({r.get('seconds', 0):.0f} s)")

    results = runner.run_claims(chosen, run, mode, jobs=jobs, on_done=done)
    if not selection:
        results += runner.unbuilt_papers(claims)
    total = time.perf_counter() - t0
    md = runner.markdown(results, mode=mode, total_s=total)
    io.write_text(run.file("report.md"), md)
    io.write_json(run.file("report.json"), {"mode": mode, "total_seconds": round(total, 1), "claims": results})
    runtime.write_manifest(run_dir=run.path)
    for line in md.splitlines():
        options.echo_data(line)
    if strict and any(r["verdict"] in (criteria.FAILS, criteria.ERROR) for r in results):
        raise SystemExit(1)
