# Run 6 (session 2026-12-02-s2): the Triton pass-2 change side by side again on a fresh machine
# (the final grids, runs 3 and 5, read R = 1024 bf16 dense rows slower than the last session's
# grid): `triton` bf16 at R = 256/512/1024, every V and support, three rounds interleaved by tree;
# .ab/ta = 329fecd (before), .ab/tr = HEAD 2bad5fb (the final package's kernels).
S=$OUT/run-6; mkdir -p $S; R=$PWD; cp .ab/s12run6.sh $S/command.sh
for t in ta tr; do (cd .ab/$t && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())" >> $S/env.txt); done
run() { (cd .ab/$1 && s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 60 python3 -m masks compare --backends triton --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes bf16 --budget-ms 20 --time-limit-s 50 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2 3; do run ta ta-$round; run tr tr-$round; done
for round in 1 2 3; do PYTHONPATH=/tmp/site:$R python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tr-$round/compare.json > $S/ab-$round.md; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-6
cat $S/times.txt $S/env.txt; for f in $S/ab-*.md; do tail -n 3 $f; done; grep "| 1024 |" $S/ab-3.md
