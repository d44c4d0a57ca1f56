# ldsmc: train the digits prior, tune the samplers on the validation digits, then the method table on two
# tasks (box and random-mask inpainting, 5 seeds) and the particle ablation, on the test digits.
EXAMPLES += ldsmc
LDSMC_MODEL := ldsmc/out/model
LDSMC_COMMON := --model $(LDSMC_MODEL) --tau 0.05 --n-images 64 --n-seeds 5 --seed 0 --resume -q
LDSMC_METHODS := ldsmc,ltds,ldps,psld,pfld,latentdaps,resample

ldsmc: ldsmc/out/box/manifest.json ldsmc/out/random/manifest.json ldsmc/out/ablation-n/manifest.json

# --resume: an interrupted run continues from its checkpoints; a finished one is reused as is.
$(LDSMC_MODEL)/manifest.json: ldsmc/configs/train.yaml
	$(PAPERKIT) ldsmc-train --config $< --seed 0 --run-dir $(@D) --resume -q

# the defaults of RestoreParams came from this search (validation digits only; see ldsmc/README.md)
.PHONY: ldsmc-tune
ldsmc-tune: $(LDSMC_MODEL)/manifest.json
	$(REPRODUCE_PY) ldsmc/tune.py --model $(LDSMC_MODEL) --out ldsmc/out/tune --n-images 64

ldsmc/out/box/manifest.json: $(LDSMC_MODEL)/manifest.json
	$(PAPERKIT) ldsmc-bench $(LDSMC_COMMON) --task box --methods $(LDSMC_METHODS) --run-dir $(@D)

ldsmc/out/random/manifest.json: $(LDSMC_MODEL)/manifest.json
	$(PAPERKIT) ldsmc-bench $(LDSMC_COMMON) --task random --methods $(LDSMC_METHODS) --run-dir $(@D)

ldsmc/out/ablation-n/manifest.json: $(LDSMC_MODEL)/manifest.json
	$(PAPERKIT) ldsmc-bench $(LDSMC_COMMON) --task box --sweep particles --values 1,2,4,8 --run-dir $(@D)
