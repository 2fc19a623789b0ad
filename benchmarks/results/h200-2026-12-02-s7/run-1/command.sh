# Run 1 (session 2026-12-02-s7): does the load instruction matter at one wave of rows? compact.cu's
# streaming 16-byte load compiled six ways (MASKS_LOAD, an experiment-only macro; 0 = __ldcs, the
# committed load): 1 ld.global.cs.L2::256B, 2 ld.global.nc.L1::no_allocate.L2::256B,
# 3 ld.global.L1::no_allocate.L2::256B, 4 ld.global.nc.L1::no_allocate, 5 ld.global.cs.L2::128B.
# Each in its own process, cupy:fused at R = 256, 512, 1024, every V, fp32 and bf16, every
# support; the order 0 1 2 3 4 5 0 1 2 so that drift shows.
S=$OUT/run-1; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s17run1.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
run() {  # name, MASKS_LOAD
  s=$SECONDS; (cd /tmp && MASKS_CU_DEFINES="-DMASKS_LOAD=$2" PYTHONPATH=$P timeout 60 python3 -m masks compare --backends cupy:fused --num-reqs 256,512,1024 --dtypes fp32,bf16 --budget-ms 20 --time-limit-s 50 --no-progress --out-dir $S/$1 > $S/$1.txt 2>&1); echo "$1 [MASKS_LOAD=$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  rm -f $S/$1/*.png $S/$1/compare.csv
}
run L0a 0; run L1a 1; run L2a 2; run L3a 3; run L4a 4; run L5a 5; run L0b 0; run L1b 1; run L2b 2
tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/env.txt
for v in L0a L1a L2a L3a L4a L5a L0b L1b L2b; do echo "== $v $(grep -m1 ceiling $S/$v.txt)"; grep -E "^cupy:fused +256 .*bfloat16" $S/$v.txt | awk '{printf "%s/%s/%s %s %s; ", $3,$4,$5,$6,$10}'; echo; done
