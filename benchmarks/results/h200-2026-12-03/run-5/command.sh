# Run 5 (session 2026-12-03): the committed package (HEAD 9f20b4b; code as in 505a196): the whole
# test suite natively on CUDA, then the full default grid (126 shapes x every backend and
# variant) as `python -m masks compare` runs it.
S=$OUT/run-5; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s24run5.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 345 python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-5
s=$SECONDS; PYTHONPATH=$P timeout 225 python3 -m masks compare --out-dir $S/final --time-limit-s 195 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $? $((SECONDS-s)) s" >> $S/env.txt
PYTHONPATH=$P python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md; rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-5
grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; cat $S/summary.md; tail -n 3 $S/final.err; cat $S/env.txt
