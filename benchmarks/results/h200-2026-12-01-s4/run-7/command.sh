# Device run 7 (session 2026-12-01-s4): HEAD 0ebbccc's package (.ab/cbase) against the final one
# (.ab/cnew, a copy of masks/), interleaved twice, each run from inside its tree: cupy:fused at
# R >= 256, and cupy:split / cupy at R = 1-64 (split's code changed only in the 16-bit test).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; cp .ab/run7.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
A="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
B="--num-reqs 1,4,16,64 --vocab 151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 100 python3 -m masks compare --backends $3 $4 --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do
  for t in cbase cnew; do run $t $t-$round cupy:fused "$A"; run $t split-$t-$round cupy:split,cupy "$B"; done
done
for p in "" split-; do for round in 1 2; do python3 benchmarks/ab_table.py $S/${p}cbase-$round/compare.json $S/${p}cnew-$round/compare.json > $S/ab-${p}$round.md; done; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
cat $S/times.txt; tail -n 30 $S/ab-split-1.md
