# symeq: learning curves of tasks A, B, C (8..4096 samples, 3 seeds; equivariant, MLP, MLP + S_n
# augmentation, Maron), size transfer n = 6 -> 4, 8, 10, and the speed/memory table. See symeq/README.md.
EXAMPLES += symeq
SYMEQ_TASKS := A B C
SYMEQ_PY ?= python
# SYMEQ_ARGS=--sweep 8,32,128,512 gives the reduced run of README.md in minutes
SYMEQ_ARGS ?=

symeq: symeq/out/table.md symeq/out/bench.md

symeq/out/table.md: $(foreach t,$(SYMEQ_TASKS),symeq/out/curve-$(t)/manifest.json) symeq/table.py
	$(SYMEQ_PY) symeq/table.py symeq/out > $@.tmp && mv $@.tmp $@

# --resume: an interrupted run continues from its finished fits; a finished one is reused as is.
symeq/out/curve-%/manifest.json: symeq/configs/curve-%.yaml
	$(PAPERKIT) symeq-fit --config $< $(SYMEQ_ARGS) --run-dir $(@D) --resume -q

symeq/out/bench.md: ../benchmarks/symeq_fit.py
	mkdir -p $(@D) && $(SYMEQ_PY) $< > $@.tmp && mv $@.tmp $@
