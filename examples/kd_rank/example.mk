# kd-rank: each base (KD, DKD, LSKD, MLKD-lite) with and without the Kendall rank loss on synth100 and digits,
# 3 seeds, plus the gradient-share diagnostic (KL vs rank loss) on the synth100 teacher/student logits.
EXAMPLES += kd-rank kd-rank-sweep
KDRANK_SETS := synth100 digits

kd-rank: $(foreach s,$(KDRANK_SETS),kd_rank/out/$(s)/manifest.json) kd_rank/out/grad_share.png

# --resume: an interrupted run continues from its per-student checkpoints; a finished one is reused.
kd_rank/out/%/manifest.json: kd_rank/configs/%.yaml
	mkdir -p kd_rank/out
	$(PAPERKIT) kd-rank --config $< --run-dir $(@D) --resume > $(@D).summary.json

kd_rank/out/grad_share.png: kd_rank/out/synth100/manifest.json
	$(PAPERKIT) kd-rank-diag --teacher-logits kd_rank/out/synth100/teacher_test.npy \
	  --student-logits kd_rank/out/synth100/student_kd_norank_s0_test.npy --plot $@ -o kd_rank/out/grad_share.csv

# Sensitivity to k and gamma (KD base, smaller synth100): k in {0.5, 1, 2, 4} at gamma = 1, gamma in
# {0.25, 0.5, 2} at k = 1. The first point trains the teacher; the others load it.
PYTHON ?= $(or $(wildcard $(dir $(shell command -v $(firstword $(PAPERKIT))))python),python3)
KDRANK_SWEEP := k0.5-g1 k1-g1 k2-g1 k4-g1 k1-g0.25 k1-g0.5 k1-g2
kd-rank-sweep: kd_rank/out/sweep.csv

kd_rank/out/sweep-k1-g1/manifest.json: kd_rank/configs/sweep.yaml
	$(PAPERKIT) kd-rank --config $< --rank-k 1 --rank-weight 1 --run-dir $(@D) --resume -q > /dev/null

kd_rank/out/sweep-%/manifest.json: kd_rank/configs/sweep.yaml kd_rank/out/sweep-k1-g1/manifest.json
	k=$$(echo $* | sed -E 's/k([^-]+)-g.*/\1/'); g=$$(echo $* | sed -E 's/.*-g//'); \
	$(PAPERKIT) kd-rank --config $< --rank-k $$k --rank-weight $$g --teacher kd_rank/out/sweep-k1-g1/teacher.pt \
	  --run-dir $(@D) --resume -q > /dev/null

kd_rank/out/sweep.csv kd_rank/out/sweep.png &: $(foreach p,$(KDRANK_SWEEP),kd_rank/out/sweep-$(p)/manifest.json)
	$(PYTHON) kd_rank/sweep.py kd_rank/out/sweep.csv kd_rank/out/sweep.png $(foreach p,$(KDRANK_SWEEP),kd_rank/out/sweep-$(p))
