"""disempower-sim: gradual disempowerment as a transparent coupled-systems simulator (Kulveit et al., ICML 2025).

The paper has no model; this package is our formalisation. ``mechanisms.yaml`` holds every equation and
parameter with the claim it encodes; ``scenario`` reads scenario YAML (untrusted input, validated);
``dynamics`` integrates the ODE vectorised over parameter draws; ``abm`` is the agent-based mode;
``sensitivity`` runs one-at-a-time sweeps, Monte Carlo, Morris and Sobol (SALib); ``run`` orchestrates
the commands.
"""

from paperkit.methods.disempower.abm import Population, simulate_abm
from paperkit.methods.disempower.dynamics import Model, compile_model, simulate, simulate_rk45
from paperkit.methods.disempower.registry import SYSTEMS, load_registry
from paperkit.methods.disempower.scenario import Scenario, builtin_names, load_scenario

__all__ = ["SYSTEMS", "Model", "Population", "Scenario", "builtin_names", "compile_model", "load_registry", "load_scenario",
           "simulate", "simulate_abm", "simulate_rk45"]
