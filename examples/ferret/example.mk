# ferret: the qualitative Table 2 / Table 4 story on the built-in tasks — accuracy and communication of
# Ferret, FedAvg, FedZO and FedKSeed (digits MLP; instruction task with a small transformer) — plus the
# reconstruction study (cosine vs K). Each run resumes from its checkpoints when interrupted.
EXAMPLES += ferret
# summarize.py imports paperkit: the interpreter next to $(PAPERKIT), else python3 (override with PYTHON=...).
PYTHON ?= $(or $(wildcard $(dir $(shell command -v $(firstword $(PAPERKIT))))python),python3)
FERRET_DIGITS := fedavg ferret fedzo fedkseed
FERRET_INSTRUCT := fedavg ferret fedkseed

ferret: ferret/out/table.md ferret/out/recon/manifest.json

ferret/out/digits-%/manifest.json: ferret/configs/digits-%.yaml
	$(PAPERKIT) ferret-train --config $< --seed 0 --run-dir $(@D) --resume -q > /dev/null

ferret/out/instruct-%/manifest.json: ferret/configs/instruct-%.yaml
	$(PAPERKIT) ferret-train --config $< --seed 0 --run-dir $(@D) --resume -q > /dev/null

ferret/out/table.md: $(foreach a,$(FERRET_DIGITS),ferret/out/digits-$(a)/manifest.json) \
                     $(foreach a,$(FERRET_INSTRUCT),ferret/out/instruct-$(a)/manifest.json)
	$(PYTHON) ferret/summarize.py ferret/out > $@

ferret/out/recon/manifest.json:
	$(PAPERKIT) ferret-recon --d 100000 --k 50,100,200,350,700,1400 --trials 5 --zo-eps 1e-3 --run-dir $(@D) --force -q > /dev/null
