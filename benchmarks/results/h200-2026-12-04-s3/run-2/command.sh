# Run 2 (session 2026-12-04-s3): the full default grid (126 shapes x every backend and variant)
# as `python -m masks compare` runs it, then benchmarks/host_step.py, on the working tree.
S=$OUT/run-2; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s29run2.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 150 python3 -m masks compare --out-dir $S/final --time-limit-s 130 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $? $((SECONDS-s)) s" >> $S/env.txt
PYTHONPATH=$P python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md; tar -czf $OUT/s.tgz -C $OUT run-2
s=$SECONDS; (cd benchmarks && PYTHONPATH=$P timeout 200 python3 host_step.py --out $S/host_step.json > $S/host_step.txt 2>&1)
echo "host_step rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/summary.md; tail -n 3 $S/final.err; cat $S/host_step.txt | tail -n 20; cat $S/env.txt
