# Thirty-eighth session (2026-12-08), call 1, from the working tree (8dd9014 + the `tiles` variant
# of CuPy, uncommitted). Run 1: benchmarks/traffic_floor.py twice at R = 256 and 512 with the new
# *tile floors*: one-step blocks of one row's groups, scheduled by the hardware as slots free up,
# the row's count and ids handed to its last tile to arrive (an atomic per tile, no waiting).
# Run 2: `cupy:tiles` (compact.cu `compact_tiles`: the same partition with finiteness tests, the
# last tile of a row ranking it from the mask in L2) against `cupy:fused`, R = 128-1024, every V,
# fp32 and bf16, every support, two rounds in opposite orders. Run 3: the CuPy tests natively.
S=$OUT/run-1; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s38a.sh $S/command.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
{ nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv; hostname
  (cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())"); } > $S/env.txt 2>&1
for round in 1 2; do
  s=$SECONDS; PYTHONPATH=$P timeout 200 python3 -W ignore::DeprecationWarning benchmarks/traffic_floor.py --num-reqs 256,512 --out $S/traffic_floor-$round.json > $S/traffic_floor-$round.txt 2>&1
  echo "floor-$round rc $? $((SECONDS-s)) s" >> $S/env.txt
done
tar -czf $OUT/s1.tgz -C $OUT run-1
S2=$OUT/run-2; mkdir -p $S2; cp .ab/s38a.sh $S2/command.sh
ab() { s=$SECONDS; PYTHONPATH=$P timeout 150 python3 -m masks compare --backends $2 --num-reqs 128,256,512,1024 --vocab 128256,151936,262144 --dtypes bf16,fp32 --budget-ms 20 --time-limit-s 130 --no-progress --out-dir $S2/$1 > $S2/$1.txt 2>&1; echo "$1 rc $? $((SECONDS-s)) s" >> $S2/times.txt; }
ab round-1 cupy:fused,cupy:tiles; ab round-2 cupy:tiles,cupy:fused
rm -f $S2/*/*.png $S2/*/compare.csv; tar -czf $OUT/s2.tgz -C $OUT run-2
S3=$OUT/run-3; mkdir -p $S3; cp .ab/s38a.sh $S3/command.sh; s=$SECONDS
PYTHONPATH=$P timeout 150 python3 -m pytest -q -rs -p no:cacheprovider tests/test_cupy_backend.py tests/test_conformance.py tests/test_fuzz.py -k cupy > $S3/pytest.log 2>&1; echo "pytest rc $? $((SECONDS-s)) s" >> $S3/env.txt
tar -czf $OUT/s3.tgz -C $OUT run-3
python3 - $S <<'PY'
import json, sys
from pathlib import Path
for f in sorted(Path(sys.argv[1]).glob("traffic_floor-*.json")):
    d = json.load(open(f)); print(f.name, "ceiling", round(d["copy_ceiling_gbps"]))
    for r in d["rows"]:
        p = r["pct"]; keys = ["copy", "outputs 256x8 pass", "rows 512x1", "chunks 512"] + [k for k in p if k.startswith("tiles")]
        print(r["num_reqs"], r["vocab"], r["dtype"], " ".join(f"{k.replace('tiles ','t')}={p[k]:.1f}" for k in keys if k in p),
              "| cupy", "/".join(f"{p[f'cupy {s}']:.1f}" for s in ("sparse", "dense", "full") if f"cupy {s}" in p))
PY
python3 - $S2 <<'PY'
import json, sys, statistics
from pathlib import Path
cells = {}
for f in sorted(Path(sys.argv[1]).glob("round-*/compare.json")):
    for r in json.load(open(f))["results"]:
        if r["status"].startswith("ok"):
            cells.setdefault((r["dtype"], r["num_reqs"], r["vocab_size"], r["support"]), {}).setdefault(r["backend"], []).append(r["pct_of_ceiling"])
ratios = {}
for k in sorted(cells):
    v = cells[k]; a = v.get("cupy:fused", []); b = v.get("cupy:tiles", [])
    print(*k, "fused", "/".join(f"{x:.1f}" for x in a), "tiles", "/".join(f"{x:.1f}" for x in b))
PY
cat $S/env.txt $S2/times.txt $S3/env.txt; tail -n 3 $S3/pytest.log; grep -m3 -i "error\|Traceback" $S/traffic_floor-1.txt $S2/round-1.txt
