# Session 2026-12-07 (thirty-fifth session), one device call: run 1, the full default grid
# (python -m masks compare, 126 shapes x every backend and variant); run 2, the whole test
# suite natively on CUDA. Each run's folder is packed into $OUT as soon as it ends.
R=$PWD; P=/tmp/site:$R
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
for n in 1 2; do mkdir -p $OUT/run-$n; cp .ab/s35.sh $OUT/run-$n/command.sh
  { nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv; hostname
    (cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())"); } > $OUT/run-$n/env.txt 2>&1; done
S=$OUT/run-1; s=$SECONDS
PYTHONPATH=$P timeout 150 python3 -m masks compare --out-dir $S/final --time-limit-s 130 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $? $((SECONDS-s)) s" >> $S/env.txt
(cd benchmarks && PYTHONPATH=$P python3 summarize.py $S/final/compare.json > $S/summary.md 2>&1)
tar -czf $OUT/s1.tgz -C $OUT run-1
S=$OUT/run-2; s=$SECONDS
PYTHONPATH=$P timeout 400 python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s2.tgz -C $OUT run-2
cat $OUT/run-1/summary.md; tail -n 3 $OUT/run-1/final.err; cat $OUT/run-1/env.txt
grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; grep -c SKIPPED $S/pytest.log; cat $S/env.txt
