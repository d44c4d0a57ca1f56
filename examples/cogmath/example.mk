# CogMath: the rule solver and its failure modes on 200 generated problems; accuracy vs mastery.
EXAMPLES += cogmath
COGMATH_MODELS := perfect memoriser distracted literal no-refusal no-backward mixed
COGMATH_RUNS := $(foreach m,$(COGMATH_MODELS),cogmath/out/runs/$(m)/summary.json)

cogmath: cogmath/out/report.md cogmath/out/dimensions.png

cogmath/out/inquiries.jsonl: cogmath/configs/generate.yaml
	$(PAPERKIT) cogmath-generate --config $< -o $@

cogmath/out/runs/%/summary.json: cogmath/out/inquiries.jsonl cogmath/configs/%.yaml
	$(PAPERKIT) cogmath-eval --config cogmath/configs/$*.yaml --inquiries $< --run-dir cogmath/out/runs/$* --force -q > /dev/null

cogmath/out/report.md: $(COGMATH_RUNS)
	$(PAPERKIT) cogmath-report $(foreach m,$(COGMATH_MODELS),cogmath/out/runs/$(m)) --format markdown > $@.tmp
	mv $@.tmp $@

cogmath/out/dimensions.png: $(COGMATH_RUNS)
	$(PAPERKIT) cogmath-report $(foreach m,$(COGMATH_MODELS),cogmath/out/runs/$(m)) --plot $@ > /dev/null
