"""The six claims of Kulveit et al. (ICML 2025) as scenario contrasts, measured from the example's runs.

Usage: python claims.py OUT.md COMPARE_DIR... --uncoupled SIM_DIR
Each COMPARE_DIR is a disempower-compare run (one per seed); SIM_DIR the baseline with W = 0. Values are
means over the seeds with their standard error (the ODE draws random numbers only for monitoring noise,
so only the triggered scenarios vary between seeds).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

from paperkit.core import tables


def main(argv: list[str]) -> None:
    out, rest = argv[0], argv[1:]
    k = rest.index("--uncoupled")
    compare_dirs, uncoupled = rest[:k], Path(rest[k + 1])
    per_seed = []
    for d in compare_dirs:
        rows = tables.read_table(Path(d) / "compare.csv").records()
        per_seed.append({r["scenario"]: r for r in rows})
    un = json.loads((uncoupled / "summary.json").read_text())

    def val(scenario: str, key: str) -> str:
        xs = [float(s[scenario][key]) if s[scenario][key] not in (None, "") else math.nan for s in per_seed]
        if any(math.isnan(x) for x in xs):
            return "never" if all(math.isnan(x) for x in xs) else "mixed"
        m = statistics.fmean(xs)
        se = statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else 0.0
        return f"{m:.3f} ± {se:.3f}" if se > 5e-4 else f"{m:.3f}"

    def irr(scenario: str) -> str:
        flags = {str(s[scenario]["irreversible"]).lower() for s in per_seed}
        return "yes" if flags == {"true"} else "no" if flags == {"false"} else "mixed"

    def mean(scenario: str, key: str) -> float:
        xs = [float(s[scenario][key]) if s[scenario][key] not in (None, "") else math.nan for s in per_seed]
        return statistics.fmean(xs)

    def yes(ok: bool, note: str = "") -> str:
        return ("yes" + (f", {note}" if note else "")) if ok else "**no**"

    b, th = "baseline_incremental", 0.5
    cross = {n: mean(n, "theta_crossing") for n in (b, "rentier_state", "aligned_ai_competitive", "single_domain_fix")}
    lines = [
        f"Measured over {len(per_seed)} seeds (mean ± standard error where the seeds differ); 50 years, dt 0.25; "
        "'holds' is computed from the numbers.", "",
        "| claim | scenarios | metric | result | holds |",
        "|---|---|---|---|---|",
        f"| 1 aligned today; decline without any capability jump | `no_ai_progress` vs `{b}` | HII final | "
        f"{val('no_ai_progress', 'hii_final')} (= HII(0) {val('no_ai_progress', 'hii0')}) vs {val(b, 'hii_final')} "
        f"(smooth logistic capability) | "
        f"{yes(abs(mean('no_ai_progress', 'hii_final') - mean('no_ai_progress', 'hii0')) < 1e-6 and mean(b, 'hii_final') < th)} |",
        f"| 2 the implicit channel matters (state revenue from AI) | `rentier_state` vs `{b}` | HII<θ at (year) | "
        f"{val('rentier_state', 'theta_crossing')} vs {val(b, 'theta_crossing')} | {yes(cross['rentier_state'] < cross[b])} |",
        f"| 3 competition alone erodes both channels | `aligned_ai_competitive` (μ = 0) | HII final; irreversible | "
        f"{val('aligned_ai_competitive', 'hii_final')}; {irr('aligned_ai_competitive')} | "
        f"{yes(irr('aligned_ai_competitive') == 'yes')} |",
        f"| 4 proxy optimisation speeds the loss | `{b}` vs `aligned_ai_competitive` | HII<θ at (year) | "
        f"{val(b, 'theta_crossing')} vs {val('aligned_ai_competitive', 'theta_crossing')} | "
        f"{yes(cross[b] < cross['aligned_ai_competitive'], 'by under a year' if cross['aligned_ai_competitive'] - cross[b] < 1 else '')} |",
        f"| 5 coupling speeds the collapse | `{b}` vs `{b}` with W = 0 | HII<θ at (year) | {val(b, 'theta_crossing')} vs "
        f"{un['theta_crossing']:.3f} | {yes(cross[b] < un['theta_crossing'])} |",
        f"| 5 fixing one system fails | `single_domain_fix` (econ cap) vs `{b}` | HII<θ at; HII final; irreversible | "
        f"{val('single_domain_fix', 'theta_crossing')} vs {val(b, 'theta_crossing')}; {val('single_domain_fix', 'hii_final')} "
        f"vs {val(b, 'hii_final')}; {irr('single_domain_fix')} | {yes(irr('single_domain_fix') == 'yes')} |",
        f"| 6 early action helps, late action or a freeze does not | `early_mitigation`, `late_mitigation`, "
        f"`freeze_after_collapse` | HII final; irreversible | {val('early_mitigation', 'hii_final')}, "
        f"{irr('early_mitigation')}; {val('late_mitigation', 'hii_final')}, {irr('late_mitigation')}; "
        f"{val('freeze_after_collapse', 'hii_final')}, {irr('freeze_after_collapse')} | "
        f"{yes(irr('early_mitigation') == 'no' and irr('late_mitigation') == irr('freeze_after_collapse') == 'yes')} |",
        f"| relative, not absolute loss | `ubi_redistribution` | C_H(T)/C_H(0); HII(0) → HII(T) | "
        f"{val('ubi_redistribution', 'c_h_ratio')}; {val('ubi_redistribution', 'hii0')} → "
        f"{val('ubi_redistribution', 'hii_final')} | "
        f"{yes(mean('ubi_redistribution', 'c_h_ratio') > 1 and mean('ubi_redistribution', 'hii_final') < th)} |",
        f"| concentration vs loss for all | `power_concentration` vs `{b}` | elite share of human demand | "
        f"{val('power_concentration', 'elite_final')} vs {val(b, 'elite_final')} | "
        f"{yes(mean('power_concentration', 'elite_final') > mean(b, 'elite_final'))} |",
    ]
    Path(out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
