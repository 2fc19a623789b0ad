# Run 6 (session 2026-12-02-s5): the final package (run 3's plus `auto` passing over a backend
# that raises on a dtype, resolved per dtype): the whole test suite natively on CUDA, then the
# grid's rows R = 1/4/16/256 (the device-time and dispatch targets, and the cells that miss 80%).
S=$OUT/run-6; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s15run6.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 320 python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-6
s=$SECONDS; PYTHONPATH=$P timeout 130 python3 -m masks compare --num-reqs 1,4,16,256 --out-dir $S/rows --time-limit-s 100 --budget-ms 20 --no-progress > $S/rows.txt 2> $S/rows.err
echo "compare rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $S/rows/*.png $S/rows/compare.csv
PYTHONPATH=$P python3 benchmarks/summarize.py $S/rows/compare.json > $S/summary.md
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-6
grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; cat $S/summary.md; tail -n 3 $S/rows.err; cat $S/env.txt
