# Run 5 (session 2026-12-02-s3): the final package (the working tree: run 4's kernels, tp) --
# the full default grid, then the Triton backend's GPU tests (tests/test_triton_backend.py and
# the conformance suite's Triton cases; the other backends' code is unchanged since
# ../h200-2026-12-02-s2 run 4, where the whole suite passed).
S=$OUT/run-5; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s13run5.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())") >> $S/env.txt
PYTHONPATH=$P timeout 200 python3 -m masks compare --out-dir $S/final --time-limit-s 170 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $?" >> $S/env.txt
PYTHONPATH=$P python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md; tar -czf $OUT/s.tgz -C $OUT run-5
s=$SECONDS; PYTHONPATH=$P timeout 240 python3 -m pytest -q -rs -p no:cacheprovider tests/test_triton_backend.py tests/test_conformance.py -k triton > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-5
cat $S/summary.md; tail -n 3 $S/final.err; tail -n 2 $S/pytest.log; cat $S/env.txt
