# CogMath: nine-dimension inquiries for 20 generated problems; a memoriser looks perfect on plain
# accuracy but masters nothing. Then the openai backend over real HTTP, against a loopback test
# double whose replies come from a rule solver (not a language model), and a byte-identical replay.
out=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$out"' EXIT
paperkit cogmath-generate --source synthetic:20 --seed 1 -o "$out/inq.jsonl"
paperkit cogmath-eval --inquiries "$out/inq.jsonl" --backend rule --failures memorise --run-dir "$out/memoriser"
paperkit cogmath-eval --inquiries "$out/inq.jsonl" --backend rule --failures distracted:0.5,literal:0.5 --run-dir "$out/mixed"
python "$(dirname "$0")/../cogmath/serve_stub.py" --url-file "$out/url" &
server=$!
for _ in $(seq 100); do [ -s "$out/url" ] && break; sleep 0.1; done
paperkit cogmath-eval --inquiries "$out/inq.jsonl" --backend openai --base-url "$(cat "$out/url")" --model stub \
  --jobs 4 --run-dir "$out/http"
paperkit cogmath-eval --inquiries "$out/inq.jsonl" --backend replay --cache "$out/http/cache.sqlite" --run-dir "$out/replay"
cmp "$out/http/summary.json" "$out/replay/summary.json" && echo "replay: byte-identical summary.json" >&2
paperkit cogmath-report "$out/memoriser" "$out/mixed" "$out/http"
