# Device run 4 (session 2026-12-01-s5): the paired 16-bit `fused` kernel's rank and count steps,
# bf16 at R >= 256, interleaved twice, each run from inside its tree (.ab/t*, copies of masks/
# differing only in masks/backends/triton.py): tb = 3fd4b94 (4 words per lane per rank step, 8
# per count step); tq = 8 and 16; tr = 8 and 8; tc = 4 and 16. Then the GPU tests of the Triton
# backend on the working tree (masks/ = tq).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; cp .ab/s5run4.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
G="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes bf16 --budget-ms 20 --no-progress"
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 100 python3 -m masks compare --backends triton:fused $G --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do for t in tb tq tr tc; do run $t $t-$round; done; done
for round in 1 2; do for t in tq tr tc; do python3 benchmarks/ab_table.py $S/tb-$round/compare.json $S/$t-$round/compare.json > $S/ab-$t-$round.md; done; done
PYTHONPATH=/tmp/site:$R python3 -c "from masks.compare import code_fingerprint; print('tests code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=/tmp/site:$R timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/test_triton_backend.py tests/test_conformance.py tests/test_fuzz.py -k triton --junitxml $S/junit.xml > $S/pytest.log 2>&1
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
cat $S/times.txt; tail -n 2 $S/pytest.log; for t in tq tr tc; do tail -n 1 $S/ab-$t-1.md; tail -n 1 $S/ab-$t-2.md; done
