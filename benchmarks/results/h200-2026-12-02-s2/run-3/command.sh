# Run 3 (session 2026-12-02-s2): the final package -- the full default grid, the whole test
# suite natively on CUDA, then benchmarks/traffic_floor.py.
S=$OUT/run-3; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s12run3.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())") >> $S/env.txt
PYTHONPATH=$P timeout 200 python3 -m masks compare --out-dir $S/final --time-limit-s 170 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $?" >> $S/env.txt
PYTHONPATH=$P python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md; tar -czf $OUT/s.tgz -C $OUT run-3
PYTHONPATH=$P timeout 330 python3 -m pytest -q -rs -p no:cacheprovider tests --junitxml $S/junit.xml > $S/pytest.log 2>&1
echo "pytest rc $?" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-3
PYTHONPATH=$P timeout 50 python3 -W ignore::DeprecationWarning benchmarks/traffic_floor.py --out $S/traffic_floor.json > $S/traffic_floor.txt 2>&1
echo "floor rc $?" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-3
cat $S/summary.md; tail -n 3 $S/final.err; tail -n 2 $S/pytest.log; cat $S/env.txt
