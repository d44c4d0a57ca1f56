# hygma: HYGMA-QMIX against QMIX on predator-prey (easy) and group-capture (medium), learning curves and
# group timelines as PNG; `hygma-all` runs the full 5-algorithm comparison (~40 CPU-minutes) and pp medium
# at 600k steps for HYGMA-QMIX, QMIX and IQL (~50 CPU-minutes).
EXAMPLES += hygma
HYGMA_SETS := pp-easy group-capture

hygma: $(foreach s,$(HYGMA_SETS),hygma/out/$(s)/manifest.json) hygma/out/curves.png

hygma-all: hygma/out/pp-medium-all/manifest.json hygma/out/pp-medium-long/manifest.json \
  hygma/out/group-capture-all/manifest.json
	$(PAPERKIT) hygma-plot hygma/out/pp-medium-all hygma/out/pp-medium-long hygma/out/group-capture-all \
	  -o hygma/out/curves-all.png

# --resume: an interrupted run continues from its per-(algo, seed) checkpoints; a finished one is reused.
hygma/out/%/manifest.json: hygma/configs/%.yaml
	mkdir -p hygma/out
	$(PAPERKIT) hygma-train --config $< --run-dir $(@D) --resume -q > $(@D).summary.json

hygma/out/curves.png: $(foreach s,$(HYGMA_SETS),hygma/out/$(s)/manifest.json)
	$(PAPERKIT) hygma-plot $(foreach s,$(HYGMA_SETS),hygma/out/$(s)) -o $@
