# Run 2 (session 2026-12-03): Triton `fused` with pass 2 loading each warp's whole range of mask
# words once (`_rank_whole_ranges`, WHOLE_RANGE = 16 or 32 words per lane, where R <= 2 x SMs)
# against the committed pass 2 (count the ranges from L2, then rank in steps of 4 words per
# lane). A = HEAD's package (.ab/A/masks), B = the working tree's. Each build in its own process,
# triton:fused at R = 256, every V, fp32 and bf16, every support, order A B A B A B; then the
# Triton tests natively on the GPU (B).
S=$OUT/run-2; mkdir -p $S; R=$PWD; cp .ab/s24run2.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
for t in A B; do P=/tmp/site:$R; [ $t = A ] && P=/tmp/site:$R/.ab/A; (cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; import masks; print('$t', masks.__file__, 'code_sha256', code_fingerprint())") >> $S/env.txt; done
run() {  # name, tree
  P=/tmp/site:$R; [ $2 = A ] && P=/tmp/site:$R/.ab/A
  s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 90 python3 -m masks compare --backends triton:fused --num-reqs 256 --dtypes fp32,bf16 --budget-ms 20 --time-limit-s 60 --no-progress --out-dir $S/$1 > $S/$1.txt 2>&1); echo "$1 [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  rm -f $S/$1/*.png $S/$1/compare.csv
}
run A1 A; run B1 B; run A2 A; run B2 B; run A3 A; run B3 B
s=$SECONDS; PYTHONPATH=/tmp/site:$R MASKS_REQUIRE_BACKENDS=triton timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_triton_backend.py tests/test_conformance.py -k "triton" > $S/tests-triton.txt 2>&1; echo "tests rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/env.txt; tail -3 $S/tests-triton.txt
for v in A1 B1 A2 B2 A3 B3; do echo "== $v $(grep -m1 ceiling $S/$v.txt)"; grep -E "^triton:fused +256 " $S/$v.txt | awk '{printf "%s %s %s %s %s; ", $3,$4,$5,$6,$10}'; echo; done
