# bandit: the paper's figures (regret vs t, vs alpha, vs reward gap, vs preference gap) + the bound.
EXAMPLES += bandit
BANDIT_SWEEPS := alpha reward-gap pref-gap

bandit: bandit/out/regret/manifest.json \
            $(foreach s,$(BANDIT_SWEEPS),bandit/out/$(s)/manifest.json) \
            bandit/out/bound.csv

# --resume: an interrupted run continues from its checkpoints; a finished one is reused as is.
bandit/out/regret/manifest.json: bandit/configs/regret.yaml
	$(PAPERKIT) bandit-sim --config $< --seed 0 --run-dir $(@D) --resume -q

bandit/out/%/manifest.json: bandit/configs/%.yaml
	$(PAPERKIT) bandit-sweep --config $< --seed 0 --run-dir $(@D) --resume -q

bandit/out/bound.csv:
	mkdir -p $(@D)
	$(PAPERKIT) bandit-bound --preset official16 --alpha 0.5 --horizon 200000 -o $@
