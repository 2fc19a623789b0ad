# Run 3 (session 2026-12-02-s7): wide mask stores. In `fused`'s pass 1, 16-bit rows, a group's
# mask bytes are stored by each lane as one 8-byte word (the word `rank_bytes` regroups through
# shared memory to rank; a group with no kept column stores zeros without regrouping) rather
# than as 8 single bytes 32 apart: one store instruction and 256 contiguous bytes per warp and
# group instead of eight of 32 (variants/widestores-run3.diff, macro MASKS_WIDE_STORES; rows
# whose mask is not 8-byte aligned keep the byte stores). W0 as committed, W1 wide; each in its
# own process, cupy:fused at R = 256, 512, 1024, every V, fp32 (unchanged: a control) and bf16,
# every support, in the order W0 W1 W0 W1 W0 W1; then the conformance suite's CuPy cases with W1.
S=$OUT/run-3; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s17run3.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
run() {  # name, defines
  s=$SECONDS; (cd /tmp && MASKS_CU_DEFINES="$2" PYTHONPATH=$P timeout 60 python3 -m masks compare --backends cupy:fused --num-reqs 256,512,1024 --dtypes fp32,bf16 --budget-ms 20 --time-limit-s 50 --no-progress --out-dir $S/$1 > $S/$1.txt 2>&1); echo "$1 [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  rm -f $S/$1/*.png $S/$1/compare.csv
}
W1="-DMASKS_WIDE_STORES"
run W0a ""; run W1a "$W1"; run W0b ""; run W1b "$W1"; run W0c ""; run W1c "$W1"
s=$SECONDS; (cd /tmp && MASKS_FUZZ_SECONDS=15 MASKS_CU_DEFINES="$W1" PYTHONPATH=$P timeout 150 python3 -m pytest -q -p no:cacheprovider -k "cupy" $R/tests/test_conformance.py $R/tests/test_fuzz.py > $S/pytest-W1.log 2>&1); echo "pytest W1 rc $? $((SECONDS-s)) s" >> $S/env.txt; tail -n 3 $S/pytest-W1.log
tar -czf $OUT/s.tgz -C $OUT run-3
cat $S/env.txt
for v in W0a W1a W0b W1b W0c W1c; do echo "== $v $(grep -m1 ceiling $S/$v.txt)"; grep -E "^cupy:fused +256 .*bfloat16" $S/$v.txt | awk '{printf "%s/%s %s %s; ", $3,$5,$6,$10}'; echo; done
