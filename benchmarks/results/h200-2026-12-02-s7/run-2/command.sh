# Run 2 (session 2026-12-02-s7): an L2 prefetch ahead of the register loads. compact.cu's pass-1
# vector loop compiled four ways (experiment-only macros, variants/prefetch-run2.diff): P0 as
# committed; B1 / B2 a 4 KB bulk prefetch to L2 (cp.async.bulk.prefetch.L2, lane 0) of the
# warp's group one / two groups ahead of its loads; L1 each lane prefetching one 128-byte line
# (prefetch.global.L2) of the next group. Each in its own process, cupy:fused at R = 256, 512,
# 1024, every V, fp32 and bf16, every support; the order P0 B1 B2 L1 P0 B1 B2 L1 so that drift
# shows.
S=$OUT/run-2; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s17run2.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
run() {  # name, defines
  s=$SECONDS; (cd /tmp && MASKS_CU_DEFINES="$2" PYTHONPATH=$P timeout 60 python3 -m masks compare --backends cupy:fused --num-reqs 256,512,1024 --dtypes fp32,bf16 --budget-ms 20 --time-limit-s 50 --no-progress --out-dir $S/$1 > $S/$1.txt 2>&1); echo "$1 [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  rm -f $S/$1/*.png $S/$1/compare.csv
}
B1="-DMASKS_PREFETCH=1 -DMASKS_PREFETCH_MODE=1"; B2="-DMASKS_PREFETCH=2 -DMASKS_PREFETCH_MODE=1"; L1="-DMASKS_PREFETCH=1 -DMASKS_PREFETCH_MODE=2"
run P0a ""; run B1a "$B1"; run B2a "$B2"; run L1a "$L1"; run P0b ""; run B1b "$B1"; run B2b "$B2"; run L1b "$L1"
s=$SECONDS; (cd /tmp && MASKS_CU_DEFINES="$B1" PYTHONPATH=$P timeout 120 python3 -m pytest -q -p no:cacheprovider -x -k "cupy" $R/tests/test_conformance.py > $S/pytest-B1.log 2>&1); echo "pytest B1 rc $? $((SECONDS-s)) s" >> $S/env.txt; tail -n 3 $S/pytest-B1.log
tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/env.txt
for v in P0a B1a B2a L1a P0b B1b B2b L1b; do echo "== $v $(grep -m1 ceiling $S/$v.txt)"; grep -E "^cupy:fused +256 .*bfloat16" $S/$v.txt | awk '{printf "%s/%s %s %s; ", $3,$5,$6,$10}'; echo; done
