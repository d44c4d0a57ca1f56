# gen_select: PAK-UCB / RFF-UCB vs baselines on the switching, null, add-a-model and MiniLM text instances,
# plus RFF vs PAK time against T (benchmarks/gen_select.py).
EXAMPLES += gen_select
GEN_SELECT_RUNS := switch null add-model text

gen_select: $(foreach r,$(GEN_SELECT_RUNS),gen_select/out/$(r)/manifest.json) gen_select/out/timing.txt

gen_select/out/%/manifest.json: gen_select/configs/%.yaml
	$(PAPERKIT) gen-select --config $< --seed 0 --run-dir $(@D) --resume -q

gen_select/out/timing.txt:
	mkdir -p $(@D)
	python ../benchmarks/gen_select.py --repeats 3 > $@
