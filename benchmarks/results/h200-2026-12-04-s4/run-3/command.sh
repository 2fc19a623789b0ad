# Run 3 (session 2026-12-04-s4): the final package: the full default grid (126 shapes x every
# backend and variant) as `python -m masks compare` runs it, benchmarks/host_step.py on one shape
# (its paths now checked against the torch reference), then the whole test suite natively on CUDA.
S=$OUT/run-3; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s30run3.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 160 python3 -m masks compare --out-dir $S/final --time-limit-s 140 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $? $((SECONDS-s)) s" >> $S/env.txt
(cd benchmarks && PYTHONPATH=$P python3 summarize.py $S/final/compare.json > $S/summary.md); tar -czf $OUT/s.tgz -C $OUT run-3
s=$SECONDS; (cd benchmarks && PYTHONPATH=$P timeout 60 python3 host_step.py --shapes 512x151936 --out $S/host_step.json > $S/host_step.txt 2>&1)
echo "host_step rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-3
s=$SECONDS; PYTHONPATH=$P timeout $((585-SECONDS)) python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-3
cat $S/summary.md; tail -n 3 $S/final.err; tail -n 3 $S/host_step.txt; grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; cat $S/env.txt
