# Run 3 (session 2026-12-02-s3): the per-thread PTX loop writing each word's bits highest first
# (`bfind` alone, .ab/td = the working tree) against lowest first (`brev` + `bfind`, .ab/tr, run
# 1's tree) and HEAD c61de8b (.ab/ta): tests/test_triton_backend.py natively on the working tree (td), then
# `triton` bf16 at R = 256/512/1024, every V and support, two rounds interleaved by tree.
S=$OUT/run-3; mkdir -p $S; R=$PWD; cp .ab/s13run3.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
for t in ta tr td; do (cd .ab/$t && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())" >> $S/env.txt); done
s=$SECONDS; PYTHONPATH=/tmp/site:$R timeout 150 python3 -m pytest -q -rs -p no:cacheprovider tests/test_triton_backend.py > $S/pytest-td.log 2>&1; echo "pytest rc $? $((SECONDS-s)) s" >> $S/times.txt
tail -n 2 $S/pytest-td.log
run() { (cd .ab/$1 && s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 60 python3 -m masks compare --backends triton --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes bf16 --budget-ms 20 --time-limit-s 50 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tr tr-$round; run td td-$round; done
for round in 1 2; do for t in tr td; do PYTHONPATH=/tmp/site:$R python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/$t-$round/compare.json > $S/ab-$round-$t.md; done; PYTHONPATH=/tmp/site:$R python3 benchmarks/ab_table.py $S/tr-$round/compare.json $S/td-$round/compare.json > $S/ab-$round-tr-td.md; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-3
cat $S/times.txt $S/env.txt; for f in $S/ab-*.md; do echo $f; tail -n 1 $f; done
