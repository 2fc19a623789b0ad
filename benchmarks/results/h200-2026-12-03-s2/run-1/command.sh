# Run 1 (session 2026-12-03-s2): Numba's `fused` tail after its barrier (run 6's profile: twice
# CuPy's samples there, 2.7x its instructions): B = the working tree, where warp totals are one
# `redux.sync` (`warp_sum`, CUDA C's __reduce_add_sync) instead of a shuffle scan, and the -1
# padding and the staged ids' copy step 32-bit slots; A = HEAD (.ab/A). numba:fused at R = 256 and 512,
# every V, fp32 and bf16, every support, each build in its own process, A B A B; then
# the Numba tests of the intrinsics and of fused natively (B), under a time limit.
S=$OUT/run-1; mkdir -p $S; R=$PWD; cp .ab/s25run1.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $S/env.txt
for t in A B; do P=/tmp/site:$R; [ $t = A ] && P=/tmp/site:$R/.ab/A; (cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; import masks; print('$t', masks.__file__, 'code_sha256', code_fingerprint())") >> $S/env.txt; done
run() {  # name, tree
  P=/tmp/site:$R; [ $2 = A ] && P=/tmp/site:$R/.ab/A
  s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 75 python3 -m masks compare --backends numba:fused --num-reqs 256,512 --dtypes fp32,bf16 --budget-ms 15 --time-limit-s 60 --no-progress --out-dir $S/$1 > $S/$1.txt 2>&1); echo "$1 [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  rm -f $S/$1/*.png $S/$1/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-1
}
run A1 A; run B1 B; run A2 A; run B2 B
s=$SECONDS; (cd /tmp && PYTHONPATH=/tmp/site:$R timeout 45 python3 -m pytest -q -p no:cacheprovider --rootdir $R $R/tests/test_numba_backend.py -k "intrinsic or hardware_form or fused or conform" > $S/tests-numba.txt 2>&1); echo "tests rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/env.txt; tail -3 $S/tests-numba.txt
for v in A1 B1 A2 B2; do echo "== $v"; grep -E "^numba:fused +(256|512) " $S/$v.txt | awk "{printf \"%s %s %s %s %s; \", \$2,\$3,\$4,\$5,\$10}"; echo; done
