# ldsmc: train a tiny latent diffusion prior, restore 8 box-inpainted digits with LD-SMC, compare to latent DPS.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit ldsmc-train --vae-iters 80 --ldm-iters 300 --vae-width 16 --ldm-width 128 --classifier-iters 20 \
    -j 1 --run-dir "$out/model" -q
paperkit ldsmc-restore --model "$out/model" --task box --tau 0.05 --particles 8 --n-images 8 -j 1 --run-dir "$out/smc"
paperkit ldsmc-restore --model "$out/model" --task box --tau 0.05 --method ldps --n-images 8 -j 1 \
    --run-dir "$out/dps"
ls "$out/smc"
