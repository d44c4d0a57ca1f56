# sve: primitive (multi-task) vs counts-only pretraining, and router vs equal vs global-only on the same
# frozen encoders, over 3 seeds; table.md and router-weight plots. See sve/README.md.
EXAMPLES += sve
SVE_SEEDS := 0 1 2
SVE_SCALE ?= reduced
SVE_PY ?= python
# Torch threads per run (0 = one per core; under make -jN the cores divided by N, since N runs at one
# thread per core each would oversubscribe the CPU and train ~4x slower: see sve/README.md, "Laptop scale").
SVE_JOBS ?= 0

sve: sve/out/table.md

# --resume: an interrupted run continues from its finished stages; a finished one is reused as is.
sve/out/primitives-seed%/manifest.json: sve/configs/$(SVE_SCALE).yaml
	$(PAPERKIT) sve-encode --config $< --pretrain primitives --seed $* --run-dir $(@D) --resume -j $(SVE_JOBS) -q

sve/out/counts-seed%/manifest.json: sve/configs/$(SVE_SCALE).yaml
	$(PAPERKIT) sve-encode --config $< --pretrain counts --seed $* --run-dir $(@D) --resume -j $(SVE_JOBS) -q

sve/out/table.md: $(foreach s,$(SVE_SEEDS),sve/out/primitives-seed$(s)/manifest.json sve/out/counts-seed$(s)/manifest.json)
	$(SVE_PY) sve/table.py sve/out > $@
