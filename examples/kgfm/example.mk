# kgfm: MOTIF's Table 1 on ConnectHub(k) (ultra and starm, 3 seeds), the WL separations, and zero-shot MRR on
# rule KGs (none < f2 <= f3, 3 seeds). See kgfm/README.md.
EXAMPLES += kgfm
KGFM_SEEDS := 0 1 2
KGFM_KS := 2 3 4
KGFM_GRAPHS := 5
# graphs per ConnectHub(k) file where not KGFM_GRAPHS: k = 3 and 4 on 3 graphs (|R_H| = k+1..k+3, 2 train, 1 test)
KGFM_GRAPHS_3 := 3
KGFM_GRAPHS_4 := 3
KGFM_PY ?= python
# starm for m <= k+1, and ultra, for each k
kgfm_models = ultra $(foreach m,$(shell seq 2 $$(($(1)+1))),star$(m))
KGFM_T1 := $(foreach k,$(KGFM_KS),$(foreach f,$(call kgfm_models,$(k)),$(foreach s,$(KGFM_SEEDS),\
             kgfm/out/ch$(k)/$(f)-seed$(s)/manifest.json)))
KGFM_RULES := $(foreach f,none f2 f3,$(foreach s,$(KGFM_SEEDS),kgfm/out/rules/$(f)-seed$(s).json))

kgfm: kgfm/out/table1.md kgfm/out/wl.md kgfm/out/rules.md

kgfm/out/data-ch%/manifest.json:
	$(PAPERKIT) kgfm-gen --kind connecthub --k $* --graphs $(or $(KGFM_GRAPHS_$*),$(KGFM_GRAPHS)) --run-dir $(@D) --resume -q

kgfm/out/data-rules%/manifest.json:
	$(PAPERKIT) kgfm-gen --kind rules --seed $* --run-dir $(@D) --resume -q

kgfm/out/data-search/manifest.json:
	$(PAPERKIT) kgfm-gen --kind search --run-dir $(@D) --resume -q

.SECONDEXPANSION:
kgfm/out/ch%/manifest.json: kgfm/configs/connecthub.yaml kgfm/out/data-ch$$(firstword $$(subst /, ,$$*))/manifest.json
	d=kgfm/out/data-ch$(firstword $(subst /, ,$*)); run=$(@D); name=$$(basename $$run); \
	$(PAPERKIT) kgfm-motif --config $< --train $$d/train.tsv --test $$d/test.tsv --labels $$d/labels.csv \
	  --motifs $${name%-seed*} --seed $${name##*-seed} --run-dir $$run --resume -q > /dev/null

.PRECIOUS: kgfm/out/data-rules%/manifest.json
# each seed draws its own rule KGs (train and test) and trains on them
kgfm/out/rules/%.json: kgfm/configs/rules.yaml kgfm/out/data-rules$$(lastword $$(subst -seed, ,$$*))/manifest.json
	n=$*; d=kgfm/out/data-rules$${n##*-seed}; $(PAPERKIT) kgfm-motif --config $< --train $$d/train.tsv \
	  --train-queries $$d/train_queries.tsv --valid $$d/valid.tsv --motifs $${n%-seed*} --seed $${n##*-seed} \
	  --run-dir kgfm/out/rules/$*-run --resume -q > /dev/null
	n=$*; d=kgfm/out/data-rules$${n##*-seed}; $(PAPERKIT) kgfm-eval --model kgfm/out/rules/$*-run/model.pt \
	  --graph $$d/test_graph.tsv --queries $$d/test.tsv -o $@ -q

kgfm/out/table1.md: $(KGFM_T1)
	$(KGFM_PY) kgfm/summarize.py table1 kgfm/out > $@

kgfm/out/rules.md: $(KGFM_RULES)
	$(KGFM_PY) kgfm/summarize.py rules kgfm/out > $@

kgfm/out/wl.md: $(foreach k,$(KGFM_KS),kgfm/out/data-ch$(k)/manifest.json) kgfm/out/data-search/manifest.json
	$(KGFM_PY) kgfm/summarize.py wl kgfm/out > $@
