# rgtg: FaRMA vs ref, CD, ARGS, PARGS and best-of-N on two tasks, 3 seeds each (task, RMs and decoding), with the
# call table, true rewards, gap to the DP optimum (toy) and diversity. See rgtg/README.md.
#   toy:  seed<s>/  a 20-token Markov pi_ref (rgtg-toy)
#   char: char<s>/  a char-level pi_ref fitted to the shipped Shakespeare excerpt (rgtg-train-lm), one LM for all seeds
# toy: the defaults (4000 pairs, 200 test + 200 validation prompts); char: reduced (1000 pairs, 100 + 100 prompts)
# so the runs take minutes on 2 cores. Each guided method's w is picked from --w-grid on the validation prompts.
EXAMPLES += rgtg
RGTG_SEEDS := 0 1 2
RGTG_PY ?= python
RGTG_LOSSES := farma seq bt-prefix cd-regress
RGTG_RUNS := $(foreach s,$(RGTG_SEEDS),seed$(s) char$(s))
RGTG_SEED = $(subst seed,,$(subst char,,$*))

rgtg: rgtg/out/table-toy.md rgtg/out/table-char.md

.PRECIOUS: rgtg/out/seed%/task/manifest.json rgtg/out/char%/task/manifest.json $(foreach l,$(RGTG_LOSSES),rgtg/out/%/rm-$(l)/manifest.json) \
  rgtg/out/charlm/manifest.json

rgtg/out/charlm/manifest.json:
	$(PAPERKIT) rgtg-train-lm --corpus shakespeare --epochs 3 --d-model 48 -j 1 --run-dir $(@D) --resume -q > /dev/null

rgtg/out/seed%/task/manifest.json:
	$(PAPERKIT) rgtg-toy --seed $* --run-dir $(@D) --resume -q > /dev/null

rgtg/out/char%/task/manifest.json: rgtg/out/charlm/manifest.json
	$(PAPERKIT) rgtg-toy --lm rgtg/out/charlm/lm.pt --length 24 --prompt-len 8 --min-len 24 --pairs 1000 \
	  --heldout 200 --prompts 100 --val-prompts 100 --seed $* --run-dir $(@D) --resume -q > /dev/null

$(foreach l,$(RGTG_LOSSES),rgtg/out/%/rm-$(l)/manifest.json): rgtg/out/%/task/manifest.json
	t=rgtg/out/$*/task; for loss in $(RGTG_LOSSES); do \
	  $(PAPERKIT) rgtg-train-rm --lm $$t/lm.pt --pairs $$t/pairs.jsonl --heldout $$t/heldout.jsonl \
	    --rollouts $$t/rollouts.jsonl --loss $$loss --seed $(RGTG_SEED) -j 1 --run-dir rgtg/out/$*/rm-$$loss --resume -q > /dev/null; \
	done

rgtg/out/%/gen/summary.json: $(foreach l,$(RGTG_LOSSES),rgtg/out/%/rm-$(l)/manifest.json)
	d=rgtg/out/$*; $(PAPERKIT) rgtg-generate --lm $$d/task/lm.pt --prompts $$d/task/prompts.jsonl \
	  --scorer $$d/task/reward.json --val-prompts $$d/task/val_prompts.jsonl --method ref --method farma=$$d/rm-farma/rm.pt \
	  --method cd=$$d/rm-cd-regress/rm.pt --method args=$$d/rm-seq/rm.pt --method pargs=$$d/rm-bt-prefix/rm.pt \
	  --method best-of-n=$$d/rm-seq/rm.pt --max-new $(if $(findstring char,$*),16,10) \
	  --seed $(RGTG_SEED) -j 1 --run-dir $$d/gen --resume -q > /dev/null

rgtg/out/table-toy.md: $(foreach s,$(RGTG_SEEDS),rgtg/out/seed$(s)/gen/summary.json) rgtg/summarize.py
	$(RGTG_PY) rgtg/summarize.py rgtg/out seed > $@
	cat $@

rgtg/out/table-char.md: $(foreach s,$(RGTG_SEEDS),rgtg/out/char$(s)/gen/summary.json) rgtg/summarize.py
	$(RGTG_PY) rgtg/summarize.py rgtg/out char > $@
	cat $@
