# Run 1 (session 2026-12-04): CuPy `cluster` (a row over a thread block cluster of blocks that
# hand each other their kept counts through distributed shared memory) against `fused`, side by
# side in one process per configuration; first the CuPy tests and the conformance suite for
# CuPy natively with the default cluster configuration (256 threads x 2 blocks).
S=$OUT/run-1; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s27run1.sh $S/command.sh; cp .ab/knobs.py $S/
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/test_cupy_backend.py tests/test_conformance.py tests/test_fuzz.py -k cupy > $S/pytest-cupy.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tail -n 3 $S/pytest-cupy.log
GRID="--backends cupy:fused,cupy:cluster --num-reqs 256,512 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
for cfg in c256x2:CLUSTER_THREADS=256,CLUSTER_PARTS=2 c128x4:CLUSTER_THREADS=128,CLUSTER_PARTS=4 c256x2b:CLUSTER_THREADS=256,CLUSTER_PARTS=2 c128x2:CLUSTER_THREADS=128,CLUSTER_PARTS=2; do
  name=${cfg%%:*}; knobs=${cfg#*:}
  s=$SECONDS; MASKS_CUPY_KNOBS=$knobs PYTHONPATH=$P timeout 150 python3 .ab/knobs.py compare $GRID --out-dir $S/$name > $S/$name.txt 2> $S/$name.err
  echo "$name ($knobs) rc $? $((SECONDS-s)) s" >> $S/env.txt
  PYTHONPATH=$P python3 - $S/$name/compare.json <<'PY' >> $S/summary.txt
import json, sys
d = json.load(open(sys.argv[1])); t = {}
for r in d["results"]:
    if r["status"] == "ok":
        t.setdefault((r["num_reqs"], r["vocab_size"], r["dtype"]), {})[(r["backend"], r["support"])] = r["pct_of_ceiling"]
print(sys.argv[1], "ceiling", round(d["copy_ceiling"]["gbps"]))
for k in sorted(t):
    c = t[k]
    cells = [f"{c.get(('cupy:fused', s), 0):5.1f}/{c.get(('cupy:cluster', s), 0):5.1f}" for s in ("sparse", "dense", "full")]
    print(k, "fused/cluster s d f:", "  ".join(cells))
bad = [r for r in d["results"] if r["status"] != "ok"]
print("not ok:", [(r["backend"], r["num_reqs"], r["vocab_size"], r["dtype"], r["support"], r["status"], r["detail"][:200]) for r in bad])
PY
  tar -czf $OUT/s.tgz -C $OUT run-1
done
cat $S/summary.txt; cat $S/env.txt
