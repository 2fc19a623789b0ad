# Run 1 (session 2026-12-04-s6): the final package: the full default grid (126 shapes x every
# backend and variant) as `python -m masks compare` runs it, then host dispatch at R = 1 by
# backend beside the host's launch floor (benchmarks/dispatch_profile.py).
S=$OUT/run-1; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s32run1.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 170 python3 -m masks compare --out-dir $S/final --time-limit-s 150 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $? $((SECONDS-s)) s" >> $S/env.txt
(cd benchmarks && PYTHONPATH=$P python3 summarize.py $S/final/compare.json > $S/summary.md); tar -czf $OUT/s.tgz -C $OUT run-1
s=$SECONDS; (cd benchmarks && PYTHONPATH=$P timeout 180 python3 dispatch_profile.py --out $S/dispatch_profile.txt --json $S/dispatch.json > $S/dispatch.log 2>&1)
echo "dispatch_profile rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/summary.md; tail -n 3 $S/final.err; head -n 16 $S/dispatch_profile.txt; tail -n 3 $S/dispatch.log; cat $S/env.txt
