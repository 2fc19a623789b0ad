# Session 2026-12-07 (thirty-fifth session), second device call: the final package. Run 3, the
# full default grid with the first run's settings; run 4, the test files this session changed,
# natively on CUDA. Each run's folder is packed into $OUT as soon as it ends.
R=$PWD; P=/tmp/site:$R
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
for n in 3 4; do mkdir -p $OUT/run-$n
  { nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv; hostname; git rev-parse HEAD
    (cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())"); } > $OUT/run-$n/env.txt 2>&1; done
S=$OUT/run-3; s=$SECONDS
PYTHONPATH=$P timeout 150 python3 -m masks compare --out-dir $S/final --time-limit-s 130 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $? $((SECONDS-s)) s" >> $S/env.txt
(cd benchmarks && PYTHONPATH=$P python3 summarize.py $S/final/compare.json > $S/summary.md 2>&1)
tar -czf $OUT/s3.tgz -C $OUT run-3
S=$OUT/run-4; s=$SECONDS
PYTHONPATH=$P timeout 120 python3 -m pytest -q -rs -p no:cacheprovider tests/test_cupy_backend.py tests/test_compare.py tests/test_reference.py tests/test_triton_backend.py > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s4.tgz -C $OUT run-4
cat $OUT/run-3/summary.md; tail -n 3 $OUT/run-3/final.err; cat $OUT/run-3/env.txt
grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; cat $S/env.txt
