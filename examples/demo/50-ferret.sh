# ferret: Ferret vs FedAvg on the digits MLP (a few rounds), and a small reconstruction study.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit ferret-train --algo ferret --k 200 --clients 20 --fraction 0.25 --rounds 8 -q --run-dir "$out/ferret"
paperkit ferret-train --algo fedavg --clients 20 --fraction 0.25 --rounds 8 -q --run-dir "$out/fedavg"
paperkit ferret-recon --d 20000 --k 50,200,800 --trials 3 --no-zo -q --run-dir "$out/recon"
ls "$out/ferret" "$out/recon"
