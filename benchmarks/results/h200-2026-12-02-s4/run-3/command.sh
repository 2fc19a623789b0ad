# Run 3 (session 2026-12-02-s4): Triton `fused` pass 1 in two loops over the same blocks: while
# the next block is whole (in an active row) its loads take no mask, so their registers need no
# EXP first (32 moves and 8 compares per 8 vector loads), then the row's end as before.
# .ab/tu: uncapped (ptxas: 98 registers for paired bf16 at 32 KB, two programs per SM; loop of
# 8 loads 258 -> 207 instructions); .ab/tc = the working tree: capped at 80 registers (maxnreg)
# at 32 KB (three per SM, loop 226); HEAD c215ef9 = .ab/ta. `triton` bf16 and fp32 at
# R = 256/512/1024, every V and support, two rounds interleaved by tree.
S=$OUT/run-3; mkdir -p $S; R=$PWD; cp .ab/s14run3.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
for t in ta tu tc; do (cd .ab/$t && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())" >> $S/env.txt); done
run() { (cd .ab/$1 && s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 80 python3 -m masks compare --backends triton --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes bf16,fp32 --budget-ms 20 --time-limit-s 70 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tu tu-$round; run tc tc-$round; done
for round in 1 2; do for t in tu tc; do PYTHONPATH=/tmp/site:$R python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/$t-$round/compare.json > $S/ab-$round-$t.md; done; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-3
cat $S/times.txt $S/env.txt; for f in $S/ab-*.md; do echo $f; tail -n 2 $f; done
