# var_approx: width scaling per Lipschitz constant, attention vs no-attn on context, VAR's scale list vs a
# geometric one, and the flow head vs regress (3 seeds each). See var_approx/README.md.
EXAMPLES += var_approx
VAR_APPROX_SEEDS := 0 1 2

var_approx: var_approx/out/scaling/manifest.json var_approx/out/context-none/manifest.json \
            var_approx/out/context-no-attn/manifest.json var_approx/out/schedules/manifest.json \
            $(foreach s,$(VAR_APPROX_SEEDS),var_approx/out/flow-seed$(s)/manifest.json \
                                            var_approx/out/regress-seed$(s)/manifest.json) \
            var_approx/out/construct.json

var_approx/out/scaling/manifest.json: var_approx/configs/scaling.yaml
	$(PAPERKIT) var-approx-sweep --config $< --run-dir $(@D) --resume -q

var_approx/out/context-%/manifest.json: var_approx/configs/context.yaml
	$(PAPERKIT) var-approx-sweep --config $< --ablate $* --run-dir $(@D) --resume -q

var_approx/out/schedules/manifest.json: var_approx/configs/schedules.yaml
	$(PAPERKIT) var-approx-sweep --config $< --run-dir $(@D) --resume -q

var_approx/out/flow-seed%/manifest.json: var_approx/configs/flow.yaml
	$(PAPERKIT) var-approx --config $< --seed $* --run-dir $(@D) --resume -q

var_approx/out/regress-seed%/manifest.json: var_approx/configs/flow.yaml
	$(PAPERKIT) var-approx --config $< --head regress --seed $* --run-dir $(@D) --resume -q

var_approx/out/construct.json:
	@mkdir -p $(@D)
	$(PAPERKIT) var-approx-construct --init 2x2 --dim 1 --delta 0.25 -o $@ -q
