# symeq-fit: the exact basis of S_n-equivariant maps S^2 -> S^2 (9 maps, 5 at n = 2), then an equivariant
# network against an MLP on task B with 64 samples, trained at n = 6 and evaluated at n = 10.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit symeq-basis --k 2 --l 2 --n 6 --kind diagram --dense "$out/basis.npy" | cut -c1-300
paperkit symeq-basis --k 2 --l 2 --n 2 | cut -c1-120
paperkit symeq-fit --task B --n-train 64 --test-n 10 --model equivariant,mlp --seeds 0 --steps 200 --n-test 500 -j 1 \
  --run-dir "$out/b"
ls "$out/b"
