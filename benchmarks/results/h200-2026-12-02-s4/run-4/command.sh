# Run 4 (session 2026-12-02-s4): the committed package (HEAD c215ef9; runs 1-3's changes were not
# kept) -- the full default grid, then the whole test suite natively on CUDA (`pytest tests`,
# which includes the CUDA-only test of the harness recording the GPU's UUID).
S=$OUT/run-4; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s14run4.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())") >> $S/env.txt
PYTHONPATH=$P timeout 200 python3 -m masks compare --out-dir $S/final --time-limit-s 170 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $?" >> $S/env.txt
PYTHONPATH=$P python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md; tar -czf $OUT/s.tgz -C $OUT run-4
s=$SECONDS; PYTHONPATH=$P timeout 330 python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-4
cat $S/summary.md; tail -n 3 $S/final.err; grep -E "passed|failed" $S/pytest.log | tail -n 2; cat $S/env.txt
