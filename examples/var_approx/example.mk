# var_approx: width scaling per Lipschitz constant, attention vs no-attn on context, VAR's scale list vs a
# geometric one (fit and tokenizer), and the flow head vs regress (3 seeds each); tables.md + compare.png.
# A reduced run: make var_approx VAR_APPROX_ARGS="--steps 300" (every fit and sweep gets these options;
# VAR_APPROX_SWEEP_ARGS="--widths 8,32,128 --seeds 0,1" goes to the sweeps only).
EXAMPLES += var_approx
VAR_APPROX_SEEDS := 0 1 2
VAR_APPROX_ARGS ?=
VAR_APPROX_SWEEP_ARGS ?=
PYTHON ?= $(or $(wildcard $(dir $(shell command -v $(firstword $(PAPERKIT))))python),python3)

var_approx: var_approx/out/tables.md var_approx/out/construct.json

var_approx/out/tables.md: var_approx/out/scaling/manifest.json var_approx/out/context-none/manifest.json \
            var_approx/out/context-no-attn/manifest.json var_approx/out/schedules/manifest.json \
            var_approx/out/tokenize-var/manifest.json var_approx/out/tokenize-geom-1-16-5/manifest.json \
            $(foreach s,$(VAR_APPROX_SEEDS),var_approx/out/flow-seed$(s)/manifest.json \
                                            var_approx/out/regress-seed$(s)/manifest.json) var_approx/table.py
	$(PYTHON) var_approx/table.py var_approx/out > $@

var_approx/out/scaling/manifest.json: var_approx/configs/scaling.yaml
	$(PAPERKIT) var-approx-sweep --config $< $(VAR_APPROX_ARGS) $(VAR_APPROX_SWEEP_ARGS) --run-dir $(@D) --resume -q

var_approx/out/context-%/manifest.json: var_approx/configs/context.yaml
	$(PAPERKIT) var-approx-sweep --config $< --ablate $* $(VAR_APPROX_ARGS) $(VAR_APPROX_SWEEP_ARGS) --run-dir $(@D) --resume -q

var_approx/out/schedules/manifest.json: var_approx/configs/schedules.yaml
	$(PAPERKIT) var-approx-sweep --config $< $(VAR_APPROX_ARGS) $(VAR_APPROX_SWEEP_ARGS) --run-dir $(@D) --resume -q

var_approx/out/flow-seed%/manifest.json: var_approx/configs/flow.yaml
	$(PAPERKIT) var-approx --config $< --seed $* $(VAR_APPROX_ARGS) --run-dir $(@D) --resume -q

var_approx/out/regress-seed%/manifest.json: var_approx/configs/flow.yaml
	$(PAPERKIT) var-approx --config $< --head regress --seed $* $(VAR_APPROX_ARGS) --run-dir $(@D) --resume -q

# The tokenizer on 16x16 digits: VAR's list (1,2,3,4,5,6,8,10,13,16) vs a geometric one (1,2,4,8,16).
var_approx/out/tokenize-var/manifest.json:
	$(PAPERKIT) var-approx-tokenize --scales var --run-dir $(@D) --resume -q

var_approx/out/tokenize-geom-1-16-5/manifest.json:
	$(PAPERKIT) var-approx-tokenize --scales geom:1:16:5 --run-dir $(@D) --resume -q

var_approx/out/construct.json:
	@mkdir -p $(@D)
	$(PAPERKIT) var-approx-construct --init 2x2 --dim 1 --delta 0.25 -o $@ -q
