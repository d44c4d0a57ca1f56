# pigdreamer: PIG / No-Rep / Unprivileged (SafeDreamer) over 3 seeds and Informed, NLI, PPO-Lag on 1 seed,
# 20k steps each on HazardNav-PO with moving hazards, then the return/cost table and curves, and the
# tabular bound plot. PIG_STEPS lowers the budget for a quicker pass (the README says what was run).
EXAMPLES += pigdreamer
PIG_STEPS ?= 20000
# extra pigdreamer-train options, e.g. PIG_ARGS=--cost-debias (use a clean out/: runs are resumed by name)
PIG_ARGS ?=
PIG_CONFIG := pigdreamer/configs/hazardnav-moving.yaml
PIG_RUNS := $(foreach v,pig no-rep unprivileged,$(foreach s,0 1 2,$(v)_s$(s))) informed_s0 nli_s0 ppo-lag_s0

pigdreamer: pigdreamer/out/table.csv pigdreamer/out/bound.json

# --resume: an interrupted run continues from its last 5k-step checkpoint; a finished one is reused.
pigdreamer/out/runs/%/summary.json: $(PIG_CONFIG)
	mkdir -p pigdreamer/out/runs
	$(PAPERKIT) pigdreamer-train --config $< --variant $(firstword $(subst _s, ,$*)) \
	  --seed $(lastword $(subst _s, ,$*)) --steps $(PIG_STEPS) $(PIG_ARGS) --run-dir $(@D) --resume -q > /dev/null

pigdreamer/out/table.csv: $(foreach r,$(PIG_RUNS),pigdreamer/out/runs/$(r)/summary.json)
	$(PAPERKIT) pigdreamer-compare $(foreach r,$(PIG_RUNS),pigdreamer/out/runs/$(r)) -o $@ \
	  --plot pigdreamer/out/curves.png

pigdreamer/out/bound.json:
	mkdir -p pigdreamer/out
	$(PAPERKIT) pigdreamer-bound -o $@ --plot pigdreamer/out/bound.png
