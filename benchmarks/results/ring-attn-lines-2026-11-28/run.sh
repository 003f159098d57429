set -u
source .diag-407/prelude.sh
nvidia-smi -L
A=.diag-407/app
c() { echo "{\"name\":\"$1\",\"workload\":\"ring-attn\",\"ranks\":$2,\"shape\":{\"m\":$3,\"n\":$4,\"k\":1},\"dtype\":\"$5\",\"chunksPerRank\":$6,\"gather\":\"$7\",\"order\":\"$8\",\"seed\":171}"; }
ALL="[$(c c407 7 126 9 f16 2 one-shot row-major),$(c c407cm 7 126 9 f16 2 one-shot column-major),$(c r5 5 90 9 f16 2 one-shot row-major),$(c r9 9 162 9 f16 2 one-shot row-major),$(c n8 7 112 8 f16 2 one-shot row-major),$(c c1 7 126 9 f16 1 one-shot row-major),$(c f32 7 126 9 f32 2 one-shot row-major),$(c ring 7 126 9 f16 2 ring row-major),$(c r8n11 8 88 11 f16 4 one-shot chunk-arrival)]"
echo "== old (HEAD before the fix)"
TRIALS=100 timeout 120 node $A/old/diag.mjs "[$(c c407 7 126 9 f16 2 one-shot row-major),$(c r9 9 162 9 f16 2 one-shot row-major)]" 2>&1 | grep -v Warning
echo "== fix"
TRIALS=200 timeout 200 node $A/diagfix/diag.mjs "$ALL" 2>&1 | grep -v Warning
CMD="run ring-attn --ranks 7 --m 126 --n 9 --k 1 --dtype f16 --chunks-per-rank 2 --gather one-shot --order row-major --seed 171"
for v in old fix old fix; do echo "== $v: $CMD"; node $A/$v/syncopate.mjs $CMD 2>&1 | grep -E "verified|max abs|fused|phases"; done
for v in old fix; do echo "== $v: default ring-attn f16 8x4"; node $A/$v/syncopate.mjs run ring-attn --ranks 8 --chunks-per-rank 4 --dtype f16 2>&1 | grep -E "verified|fused"; done
echo "== fuzz seed 3 case 338 (fix)"
timeout 60 node $A/fix/fuzz.mjs --seed 3 --case 338 2>&1 | tail -3
echo "== fuzz seed 6, ring-attn and ag-gemm, one device (fix)"
timeout 150 node $A/fix/fuzz.mjs --processes 12 --cases 1500 --seed 6 --workloads ring-attn,ag-gemm --devices 1 --case-timeout-ms 45000 --time-limit-s 90 --out $OUT/fuzz.jsonl --summary $OUT/fuzz-summary.md 2>&1 | tail -12
true
