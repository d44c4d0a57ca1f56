# disempower: the six claims as scenario contrasts (3 seeds), the ABM against the ODE, a tornado plot,
# Sobol indices, and P(irreversible) vs the start year of mitigation. See disempower/README.md.
EXAMPLES += disempower
DISEMPOWER_SEEDS := 0 1 2
DISEMPOWER_STARTS := 0 5 10 15 20 25 30
DISEMPOWER_PY ?= python

disempower: disempower/out/claims.md \
            $(foreach s,$(DISEMPOWER_SEEDS),disempower/out/abm-seed$(s)/manifest.json) \
            disempower/out/tornado/manifest.json disempower/out/sobol/manifest.json \
            disempower/out/p_irreversible.csv

# --resume: an interrupted run continues from its finished stages; a finished one is reused as is.
disempower/out/compare-seed%/manifest.json: disempower/configs/compare.yaml
	$(PAPERKIT) disempower-compare --config $< --seed $* --run-dir $(@D) --resume -q

disempower/out/uncoupled/manifest.json: disempower/configs/uncoupled.yaml
	$(PAPERKIT) disempower-sim --config $< --run-dir $(@D) --resume -q

disempower/out/abm-seed%/manifest.json: disempower/configs/abm.yaml
	$(PAPERKIT) disempower-sim --config $< --seed $* --run-dir $(@D) --resume -q

disempower/out/tornado/manifest.json: disempower/configs/tornado.yaml
	$(PAPERKIT) disempower-sweep --config $< --run-dir $(@D) --resume -q

disempower/out/sobol/manifest.json: disempower/configs/sobol.yaml
	$(PAPERKIT) disempower-sweep --config $< --run-dir $(@D) --resume -q

# kept: the sweeps name these files as inputs in their manifests
.PRECIOUS: disempower/out/scenarios/mitigation_at_%.yaml
disempower/out/scenarios/mitigation_at_%.yaml: disempower/scenarios/mitigation_at.yaml.in
	mkdir -p $(@D)
	sed 's/START/$*/g' $< > $@

disempower/out/start-%/manifest.json: disempower/configs/mc.yaml disempower/out/scenarios/mitigation_at_%.yaml
	$(PAPERKIT) disempower-sweep --config $< --scenario $(word 2,$^) --run-dir $(@D) --resume -q

disempower/out/p_irreversible.csv: $(foreach y,$(DISEMPOWER_STARTS),disempower/out/start-$(y)/manifest.json)
	$(DISEMPOWER_PY) disempower/p_irreversible.py $@ disempower/out/p_irreversible.png $(^D)

disempower/out/claims.md: $(foreach s,$(DISEMPOWER_SEEDS),disempower/out/compare-seed$(s)/manifest.json) \
                          disempower/out/uncoupled/manifest.json
	$(DISEMPOWER_PY) disempower/claims.py $@ $(foreach s,$(DISEMPOWER_SEEDS),disempower/out/compare-seed$(s)) \
	    --uncoupled disempower/out/uncoupled
