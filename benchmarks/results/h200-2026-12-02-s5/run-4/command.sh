# Run 4 (session 2026-12-02-s5): the review's defects as a caller meets them
# (.ab/first_calls.py, one case per process), on HEAD's package (.ab/ta = 22bdd91's masks/)
# and on the working tree's (the fixes, run 3's package); then the full default grid on the
# working tree's package.
S=$OUT/run-4; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s15run4.sh $S/command.sh; cp .ab/first_calls.py $S/
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd .ab/ta && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('head code_sha256', code_fingerprint())") >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())") >> $S/env.txt
for tree in head final; do
  if [ $tree = head ]; then T=/tmp/site:$R/.ab/ta; else T=$P; fi
  echo "== $tree" >> $S/first_calls.txt
  (cd /tmp && for c in "thread" "sync torch" "sync cupy" "sync triton" "sync numba" "sync auto" "capture"; do PYTHONPATH=$T timeout 60 python3 -W ignore $S/first_calls.py $c >> $S/first_calls.txt 2>&1; done)
done
cat $S/first_calls.txt
PYTHONPATH=$P timeout 230 python3 -m masks compare --out-dir $S/final --time-limit-s 200 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $?" >> $S/env.txt
PYTHONPATH=$P python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md; tar -czf $OUT/s.tgz -C $OUT run-4
cat $S/summary.md; tail -n 3 $S/final.err; cat $S/env.txt
