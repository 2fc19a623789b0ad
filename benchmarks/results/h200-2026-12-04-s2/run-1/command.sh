# Run 1 (session 2026-12-04-s2): the new host-path tests (tests/test_csr.py) natively first,
# then the committed package's full default grid (126 shapes x every backend and variant) as
# `python -m masks compare` runs it, then the whole test suite natively on CUDA.
S=$OUT/run-1; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s28run1.sh $S/command.sh
git log --oneline -1 > $S/head.txt 2>/dev/null
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 90 python3 -m pytest -v -rs -p no:cacheprovider tests/test_csr.py > $S/pytest-csr.log 2>&1
echo "pytest csr rc $? $((SECONDS-s)) s" >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 150 python3 -m masks compare --out-dir $S/final --time-limit-s 130 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $? $((SECONDS-s)) s" >> $S/env.txt
PYTHONPATH=$P python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md; tar -czf $OUT/s.tgz -C $OUT run-1
s=$SECONDS; PYTHONPATH=$P timeout $((585-SECONDS)) python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-1
tail -n 15 $S/pytest-csr.log; grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; cat $S/summary.md; tail -n 3 $S/final.err; cat $S/env.txt
