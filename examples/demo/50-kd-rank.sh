# kd-rank: a tiny synth100 distillation (KD with and without the Kendall rank loss), then the diagnostics.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit kd-rank --data synth100 --train-per-class 10 --test-per-class 5 --teacher-hidden 128 --teacher-epochs 8 \
  --epochs 4 --batch-size 32 --seeds 0,1 --base kd --run-dir "$out/run"
paperkit kd-rank-diag --teacher-logits "$out/run/teacher_test.npy" \
  --student-logits "$out/run/student_kd_norank_s0_test.npy" --plot "$out/share.png" \
  -o "$out/share.jsonl"
head -3 "$out/share.jsonl"
ls "$out/run"
