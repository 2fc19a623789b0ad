# Run 4 (session 2026-12-03): Triton `fused` with 16 warps per program (B: _FUSED_NUM_WARPS = 16,
# 54 registers, two programs per SM at 32 KB per iteration; C: B with _FUSED_RANGE_SUBSTEPS = 8)
# against the committed 8 warps (A = HEAD). Run 3's profile put the two-pass bf16 rows' rank
# steps, a chain of dependent instructions, at 10-17% of the warp samples at R = 256: twice the
# warps each ranking half a range. triton:fused at R = 256 and 512, every V, bf16, every
# support, each build in its own process, order A B C three times.
S=$OUT/run-4; mkdir -p $S; R=$PWD; cp .ab/s24run4.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
for t in A B C; do (cd /tmp && PYTHONPATH=/tmp/site:$R/.ab/$t python3 -c "from masks.compare import code_fingerprint; import masks; print('$t', masks.__file__, 'code_sha256', code_fingerprint())") >> $S/env.txt; done
run() {  # name, tree
  s=$SECONDS; (cd /tmp && PYTHONPATH=/tmp/site:$R/.ab/$2 timeout 90 python3 -m masks compare --backends triton:fused --num-reqs 256,512 --dtypes bf16 --budget-ms 20 --time-limit-s 60 --no-progress --out-dir $S/$1 > $S/$1.txt 2>&1); echo "$1 [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  rm -f $S/$1/*.png $S/$1/compare.csv
}
run A1 A; run B1 B; run C1 C; run A2 A; run B2 B; run C2 C; run A3 A; run B3 B; run C3 C
tar -czf $OUT/s.tgz -C $OUT run-4
cat $S/env.txt
for v in A1 B1 C1 A2 B2 C2 A3 B3 C3; do echo "== $v $(grep -m1 ceiling $S/$v.txt)"; grep -E "^triton:fused " $S/$v.txt | awk '{printf "%s %s %s %s %s; ", $2,$3,$5,$6,$10}'; echo; done
