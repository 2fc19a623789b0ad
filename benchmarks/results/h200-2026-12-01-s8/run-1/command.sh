# Run 1 (session 2026-12-01-s8): (1) benchmarks/traffic_floor.py -- at R = 256/512/1024 and the
# grid's V, fp32 and bf16: the one-element kernel, a same-bytes copy, the traffic floors of
# benchmarks/traffic_floor.cu and each backend's default variant on sparse/dense/full rows;
# (2) triton:fused, two trees from inside their folders, interleaved twice: .ab/ta = the working
# tree, .ab/tb = ta with 4-warp programs and 16 KB per iteration (four programs per SM).
S=$OUT/run-1; mkdir -p $S; R=$PWD; cp .ab/s8run1.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
(cd /tmp && PYTHONPATH=/tmp/site:$R python3 -c "from masks.compare import code_fingerprint; print('working tree code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=/tmp/site:$R timeout 200 python3 benchmarks/traffic_floor.py --out $S/traffic_floor.json > $S/traffic_floor.txt 2>&1; echo "floor rc $? $((SECONDS-s)) s" >> $S/times.txt
cat $S/traffic_floor.txt
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 110 python3 -m masks compare --backends triton:fused --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes bf16,fp32 --budget-ms 20 --time-limit-s 95 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tb tb-$round; done
for round in 1 2; do python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tb-$round/compare.json > $S/ab-$round-tb.md; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/times.txt $S/env.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; tail -n 3 $f; done
