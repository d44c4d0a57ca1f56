# kd-rank: each base (KD, DKD, LSKD, MLKD-lite) with and without the Kendall rank loss on synth100 and digits,
# 3 seeds, plus the gradient-share diagnostic (KL vs rank loss) on the synth100 teacher/student logits.
EXAMPLES += kd-rank
KDRANK_SETS := synth100 digits

kd-rank: $(foreach s,$(KDRANK_SETS),kd-rank/out/$(s)/manifest.json) kd-rank/out/grad_share.png

# --resume: an interrupted run continues from its per-student checkpoints; a finished one is reused.
kd-rank/out/%/manifest.json: kd-rank/configs/%.yaml
	mkdir -p kd-rank/out
	$(PAPERKIT) kd-rank --config $< --run-dir $(@D) --resume > $(@D).summary.json

kd-rank/out/grad_share.png: kd-rank/out/synth100/manifest.json
	$(PAPERKIT) kd-rank-diag --teacher-logits kd-rank/out/synth100/teacher_test.npy \
	  --student-logits kd-rank/out/synth100/student_kd_norank_s0_test.npy --plot $@ -o kd-rank/out/grad_share.csv
