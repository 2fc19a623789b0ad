# Run 1 (session 2026-12-04-s5): the final package: the full default grid (126 shapes x every
# backend and variant) as `python -m masks compare` runs it (auto's order is derived from it),
# host dispatch at R = 1 by backend (benchmarks/dispatch_profile.py) and the host step on one
# shape (benchmarks/host_step.py, with its device memory peak), A/B against the session's start.
S=$OUT/run-1; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s31run1.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 170 python3 -m masks compare --out-dir $S/final --time-limit-s 150 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $? $((SECONDS-s)) s" >> $S/env.txt
(cd benchmarks && PYTHONPATH=$P python3 summarize.py $S/final/compare.json > $S/summary.md); tar -czf $OUT/s.tgz -C $OUT run-1
s=$SECONDS; (cd benchmarks && PYTHONPATH=$P timeout 150 python3 dispatch_profile.py --out $S/dispatch_profile.txt --json $S/dispatch.json > $S/dispatch.log 2>&1)
echo "dispatch_profile rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-1
# The host step of the final package (B) and of the session's starting commit (A: .ab/A =
# `git archive HEAD masks` of 825b481, before the chunked decode of rows wider than W), A B A.
for t in A B A; do
  if [ $t = A ]; then PT=/tmp/site:$R/.ab/A; else PT=$P; fi
  s=$SECONDS; (cd benchmarks && PYTHONPATH=$PT timeout 90 python3 host_step.py --shapes 512x151936 --out $S/host_step-$t-$SECONDS.json > $S/host_step-$t-$SECONDS.txt 2>&1)
  echo "host_step $t rc $? $((SECONDS-s)) s" >> $S/env.txt
done
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/summary.md; tail -n 3 $S/final.err; head -n 14 $S/dispatch_profile.txt; tail -n 3 $S/dispatch.log; tail -n 2 $S/host_step-*.txt; cat $S/env.txt
