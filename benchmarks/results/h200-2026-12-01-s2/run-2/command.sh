python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "import torch,triton,cupy,numba,numpy;print(torch.__version__,triton.__version__,cupy.__version__,numba.__version__,numpy.__version__)" >> $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 300 python3 -m pytest -q -rs -p no:cacheprovider tests --junitxml $S/junit.xml > $S/pytest.log 2>&1
tail -n 2 $S/pytest.log
for g in a; do
PYTHONPATH=$P timeout 230 python3 -m masks compare --out-dir $S/final-$g --time-limit-s 200 --budget-ms 20 --no-progress > $S/final-$g.txt 2> $S/final-$g.err
done
A="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   timeout 100 python3 -m masks compare --backends $3 $A --out-dir $S/$2 > $S/$2.txt 2>&1); }
for round in 1 2; do for t in tbase tC; do run $t $t-$round triton:fused; done; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
for g in a; do grep -A12 "summary per backend" $S/final-$g.txt; tail -n 3 $S/final-$g.err; python3 benchmarks/summarize.py $S/final-$g/compare.json; done
for round in 1 2; do python3 benchmarks/ab_table.py $S/tbase-$round/compare.json $S/tC-$round/compare.json > $S/ab-tC-$round.md; tail -n 4 $S/ab-tC-$round.md; done
