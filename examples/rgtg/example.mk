# rgtg: FaRMA vs ref, CD, ARGS, PARGS and best-of-N on the toy language (3 seeds: task, RMs and decoding),
# with the call table, true rewards, gap to the DP optimum and diversity. See rgtg/README.md.
# Reduced scale (half the default pairs, 100 prompts, one thread) so that 3 seeds run in minutes on 2 cores.
EXAMPLES += rgtg
RGTG_SEEDS := 0 1 2
RGTG_PY ?= python
RGTG_LOSSES := farma seq bt-prefix cd-regress
RGTG_GEN := $(foreach s,$(RGTG_SEEDS),rgtg/out/seed$(s)/gen/summary.json)

rgtg: rgtg/out/table.md

.PRECIOUS: rgtg/out/seed%/task/manifest.json rgtg/out/seed%/rm-farma/manifest.json rgtg/out/seed%/rm-seq/manifest.json \
  rgtg/out/seed%/rm-bt-prefix/manifest.json rgtg/out/seed%/rm-cd-regress/manifest.json

rgtg/out/seed%/task/manifest.json:
	$(PAPERKIT) rgtg-toy --pairs 2000 --heldout 400 --prompts 100 --seed $* --run-dir $(@D) --resume -q > /dev/null

rgtg/out/seed%/rm-farma/manifest.json rgtg/out/seed%/rm-seq/manifest.json rgtg/out/seed%/rm-bt-prefix/manifest.json \
rgtg/out/seed%/rm-cd-regress/manifest.json: rgtg/out/seed%/task/manifest.json
	t=rgtg/out/seed$*/task; for loss in $(RGTG_LOSSES); do \
	  $(PAPERKIT) rgtg-train-rm --lm $$t/lm.pt --pairs $$t/pairs.jsonl --heldout $$t/heldout.jsonl \
	    --rollouts $$t/rollouts.jsonl --loss $$loss --seed $* -j 1 --run-dir rgtg/out/seed$*/rm-$$loss --resume -q > /dev/null; \
	done

rgtg/out/seed%/gen/summary.json: $(foreach l,$(RGTG_LOSSES),rgtg/out/seed%/rm-$(l)/manifest.json)
	d=rgtg/out/seed$*; $(PAPERKIT) rgtg-generate --lm $$d/task/lm.pt --prompts $$d/task/prompts.jsonl \
	  --scorer $$d/task/reward.json --method ref --method farma=$$d/rm-farma/rm.pt \
	  --method cd=$$d/rm-cd-regress/rm.pt --method args=$$d/rm-seq/rm.pt --method pargs=$$d/rm-bt-prefix/rm.pt \
	  --method best-of-n=$$d/rm-seq/rm.pt --seed $* -j 1 --run-dir $$d/gen --resume -q > /dev/null

rgtg/out/table.md: $(RGTG_GEN) rgtg/summarize.py
	$(RGTG_PY) rgtg/summarize.py rgtg/out > $@
	cat $@
