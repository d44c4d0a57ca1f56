# bandit-sim: the paper's figures (regret vs t, vs alpha, vs reward gap, vs preference gap) + the bound.
EXAMPLES += bandit-sim
BANDIT_SWEEPS := alpha reward-gap pref-gap

bandit-sim: bandit-sim/out/regret/manifest.json \
            $(foreach s,$(BANDIT_SWEEPS),bandit-sim/out/$(s)/manifest.json) \
            bandit-sim/out/bound.csv

# --resume: an interrupted run continues from its checkpoints; a finished one is reused as is.
bandit-sim/out/regret/manifest.json: bandit-sim/configs/regret.yaml
	$(PAPERKIT) bandit-sim --config $< --seed 0 --run-dir $(@D) --resume -q

bandit-sim/out/%/manifest.json: bandit-sim/configs/%.yaml
	$(PAPERKIT) bandit-sweep --config $< --seed 0 --run-dir $(@D) --resume -q

bandit-sim/out/bound.csv:
	mkdir -p $(@D)
	$(PAPERKIT) bandit-bound --preset official16 --alpha 0.5 -T 200000 -o $@
