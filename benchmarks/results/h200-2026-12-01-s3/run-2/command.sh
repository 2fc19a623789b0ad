# Device run 2 (session 2026-12-01-s3): the full default grid on the final package (the working
# tree), then numba:fused at R >= 256 and numba:split at R = 1/4/16, HEAD's kernels (nbase =
# 4a94cfd) against the final package's, interleaved (fused twice).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/run2.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "import torch,triton,cupy,numba,numpy;print(torch.__version__,triton.__version__,cupy.__version__,numba.__version__,numpy.__version__)" >> $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 230 python3 -m masks compare --out-dir $S/final --time-limit-s 200 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
A="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
B="--num-reqs 1,4,16 --vocab 151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
run() { (cd $1 && PYTHONPATH=$P:$PWD python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 100 python3 -m masks compare --backends $3 $4 --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do
  run .ab/nbase nbase-$round numba:fused "$A"; run $R final-$round numba:fused "$A"
done
run .ab/nbase split-nbase-1 numba:split "$B"; run $R split-final-1 numba:split "$B"
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
grep -A12 "summary per backend" $S/final.txt; tail -n 3 $S/final.err; python3 benchmarks/summarize.py $S/final/compare.json
for t in nbase-1:final-1 nbase-2:final-2 split-nbase-1:split-final-1; do python3 benchmarks/ab_table.py $S/${t%%:*}/compare.json $S/${t##*:}/compare.json > $S/ab-${t##*:}.md; tail -n 4 $S/ab-${t##*:}.md; done
cat $S/times.txt
