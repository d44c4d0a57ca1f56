# TMvML (Laplace Tensor Rank) against its ablations and the baselines, 5 random 70/30 splits per dataset.
EXAMPLES += mvml
MVML_SETS := digits synthetic planted
# summarize.py imports paperkit: run it with the interpreter installed next to $(PAPERKIT) (override with
# PYTHON=...; python3 when there is none, e.g. paperkit run as a module).
PYTHON ?= $(or $(wildcard $(dir $(shell command -v $(firstword $(PAPERKIT))))python),python3)
mvml: mvml/out/table.csv mvml/out/average_precision.png

mvml/out/%/metrics.json: mvml/configs/%.yaml
	$(PAPERKIT) mvml-fit --config $< --seed 0 --run-dir mvml/out/$* --force -q > /dev/null

mvml/out/table.csv mvml/out/average_precision.png &: $(foreach s,$(MVML_SETS),mvml/out/$(s)/metrics.json)
	$(PYTHON) mvml/summarize.py mvml/out/table.csv mvml/out/average_precision.png $(foreach s,$(MVML_SETS),mvml/out/$(s))

# The same three sets with λ, δ chosen by mvml-fit --select (inner 3-fold CV of every training part);
# not part of `make mvml` (about 3 times its cost): `make -C examples mvml-select`.
MVML_SELECT_SETS := $(foreach s,$(MVML_SETS),$(s)-select)
mvml-select: mvml/out/table-select.csv

mvml/out/table-select.csv mvml/out/average_precision-select.png &: $(foreach s,$(MVML_SELECT_SETS),mvml/out/$(s)/metrics.json)
	$(PYTHON) mvml/summarize.py mvml/out/table-select.csv mvml/out/average_precision-select.png $(foreach s,$(MVML_SELECT_SETS),mvml/out/$(s))
