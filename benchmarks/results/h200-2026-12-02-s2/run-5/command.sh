# Run 5 (session 2026-12-02-s2): the full default grid again on the final package (run 3's host
# probe read 8.4 us against 6.0 in the last session, and its dispatch maxima were above target).
S=$OUT/run-5; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s12run5.sh $S/command.sh
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())") >> $S/env.txt
PYTHONPATH=$P timeout 200 python3 -m masks compare --out-dir $S/final --time-limit-s 170 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $?" >> $S/env.txt
PYTHONPATH=$P python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md
rm -f $S/final/*.png $S/final/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-5
cat $S/summary.md; tail -n 3 $S/final.err; cat $S/env.txt
