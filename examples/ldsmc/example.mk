# ldsmc: train the digits prior, then the method ordering on box inpainting and the s and N ablations.
EXAMPLES += ldsmc
LDSMC_MODEL := ldsmc/out/model
LDSMC_COMMON := --model $(LDSMC_MODEL) --task box --tau 0.05 --n-images 64 --n-seeds 3 --seed 0 --resume -q

ldsmc: ldsmc/out/methods/manifest.json ldsmc/out/ablation-s/manifest.json ldsmc/out/ablation-n/manifest.json

# --resume: an interrupted run continues from its checkpoints; a finished one is reused as is.
$(LDSMC_MODEL)/manifest.json: ldsmc/configs/train.yaml
	$(PAPERKIT) ldsmc-train --config $< --seed 0 --run-dir $(@D) --resume -q

ldsmc/out/methods/manifest.json: $(LDSMC_MODEL)/manifest.json
	$(PAPERKIT) ldsmc-bench $(LDSMC_COMMON) --particles 8 --run-dir $(@D)

ldsmc/out/ablation-s/manifest.json: $(LDSMC_MODEL)/manifest.json
	$(PAPERKIT) ldsmc-bench $(LDSMC_COMMON) --particles 8 --sweep s --values 0,20,66,133,199 --run-dir $(@D)

ldsmc/out/ablation-n/manifest.json: $(LDSMC_MODEL)/manifest.json
	$(PAPERKIT) ldsmc-bench $(LDSMC_COMMON) --sweep particles --values 1,2,4,8,16 --run-dir $(@D)
