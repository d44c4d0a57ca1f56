# mm-prefill: per-head pattern search on a synthetic video+text sample, recall vs density per pattern,
# and the CPU speedup of the sparse operator over dense SDPA against N.
EXAMPLES += mm-prefill
MMP_PATTERNS := a_shape vs block grid 2d_boundary
MMP_DENSITIES := 0.02 0.05 0.1 0.2
MMP_SPEC := mm_prefill/specs/video_text.yaml
PYTHON ?= $(or $(wildcard $(dir $(shell command -v $(firstword $(PAPERKIT))))python),python3)

mm-prefill: mm_prefill/out/patterns.json mm_prefill/out/searched/metrics.json mm_prefill/out/recall_vs_density.png \
            mm_prefill/out/bench/bench.csv

mm_prefill/out/patterns.json: mm_prefill/configs/search.yaml $(MMP_SPEC)
	mkdir -p $(@D)
	$(PAPERKIT) mm-prefill-search --config $< --seed 0 -o $@ -q

mm_prefill/out/searched/metrics.json: mm_prefill/out/patterns.json
	$(PAPERKIT) mm-prefill --synthetic $(MMP_SPEC) --patterns $< --masks --seed 0 --run-dir $(@D) --force -q > /dev/null

# one run per (pattern, density): every head gets the same pattern, so each planted type is scored under each
mm_prefill/out/apply/%/metrics.json: $(MMP_SPEC)
	$(PAPERKIT) mm-prefill --synthetic $(MMP_SPEC) --pattern $(word 1,$(subst @, ,$*)) \
	  --density $(word 2,$(subst @, ,$*)) --seed 0 --run-dir $(@D) --force -q > /dev/null

MMP_RUNS := $(foreach p,$(MMP_PATTERNS),$(foreach d,$(MMP_DENSITIES),mm_prefill/out/apply/$(p)@$(d)/metrics.json))
mm_prefill/out/recall_vs_density.png mm_prefill/out/recall_vs_density.csv &: $(MMP_RUNS)
	$(PYTHON) mm_prefill/summarize.py mm_prefill/out $(MMP_RUNS)

mm_prefill/out/bench/bench.csv: mm_prefill/configs/bench.yaml
	$(PAPERKIT) mm-prefill-bench --config $< --seed 0 --run-dir $(@D) --force -q > /dev/null
