python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "import torch,triton,cupy,numba,numpy;print(torch.__version__,triton.__version__,cupy.__version__,numba.__version__,numpy.__version__)" >> $S/env.txt
PYTHONPATH=$P timeout 260 python3 -m pytest -q -rs -p no:cacheprovider -k "cupy or numba" tests/test_cupy_backend.py tests/test_numba_backend.py tests/test_conformance.py tests/test_fuzz.py --junitxml $S/junit.xml > $S/pytest.log 2>&1
tail -n 3 $S/pytest.log
A="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
B="--num-reqs 1,4,16 --vocab 151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
for v in base new simd; do
  be="cupy:fused,numba:fused"; [ $v = simd ] && be="cupy:fused"
  (cd .ab/$v && python3 -c "from masks.compare import code_fingerprint; print('$v code_sha256', code_fingerprint())" >> $S/env.txt
   timeout 150 python3 -m masks compare --backends $be $A --out-dir $S/$v > $S/$v.txt 2>&1
   [ $v = simd ] || timeout 60 python3 -m masks compare --backends cupy:split,numba:split $B --out-dir $S/$v-split > $S/$v-split.txt 2>&1)
done
for v in new simd; do python3 benchmarks/ab_table.py $S/base/compare.json $S/$v/compare.json > $S/ab-base-$v.md; done
python3 benchmarks/ab_table.py $S/base-split/compare.json $S/new-split/compare.json > $S/ab-base-new-split.md
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
grep -c "|" $S/ab-base-new.md
