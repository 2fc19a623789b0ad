# Device run 8 (session 2026-12-01-s4): Numba's fused ranking during pass 1 (.ab/nnew, a copy of
# the working tree's masks/ and tests/) -- its GPU Numba tests, then 0ebbccc's package
# (.ab/cbase; its Numba kernels are 28dd600's) against it, interleaved: numba:fused at R >= 256
# twice, numba:split / numba at R = 1-64 once, each run from inside its tree.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; cp .ab/run8.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
(cd .ab/nnew && PYTHONPATH=/tmp/site:$PWD timeout 220 python3 -m pytest -q -rs -x -p no:cacheprovider tests -k numba > $S/pytest-numba.log 2>&1; echo "pytest rc $?" >> $S/env.txt)
tail -n 2 $S/pytest-numba.log
A="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
B="--num-reqs 1,4,16,64 --vocab 151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 100 python3 -m masks compare --backends $3 $4 --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do for t in cbase nnew; do run $t $t-$round numba:fused "$A"; done; done
for t in cbase nnew; do run $t split-$t-1 numba:split,numba "$B"; done
for p in "" split-; do for round in 1 2; do [ -d $S/${p}nnew-$round ] && python3 benchmarks/ab_table.py $S/${p}cbase-$round/compare.json $S/${p}nnew-$round/compare.json > $S/ab-${p}$round.md; done; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
cat $S/times.txt $S/env.txt
python3 - <<'PY'
import json, math, os
S = os.environ["OUT"] + "/s"
def load(n):
    d = json.load(open(f"{S}/{n}/compare.json"))
    return {(r["backend"], r["num_reqs"], r["vocab_size"], r["dtype"], r["support"]): r for r in d["results"] if r["status"] == "ok"}
for a, b in (("cbase-1", "nnew-1"), ("cbase-2", "nnew-2"), ("split-cbase-1", "split-nnew-1")):
    A, B = load(a), load(b)
    g = {}
    for k in A.keys() & B.keys():
        g.setdefault((k[0], k[3]), []).append(B[k]["device_time_us"] / A[k]["device_time_us"])
    for k, v in sorted(g.items()):
        print(b, k, round(math.exp(sum(map(math.log, v)) / len(v)), 3), round(min(v), 2), round(max(v), 2))
    print(b, "cells < 80%", sum(r["pct_of_ceiling"] < 80 for k, r in A.items() if k[1] >= 256), "->", sum(r["pct_of_ceiling"] < 80 for k, r in B.items() if k[1] >= 256))
PY
