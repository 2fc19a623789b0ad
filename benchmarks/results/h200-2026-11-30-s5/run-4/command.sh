python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/env.txt
for t in . .ab/base .ab/mid .ab/head; do (cd $t && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())"); done >> $S/env.txt
PYTHONPATH=$P timeout 200 python3 -m pytest -q -rs -p no:cacheprovider -k "numba or triton" tests/test_conformance.py tests/test_numba_backend.py tests/test_triton_backend.py tests/test_gpu_reliability.py tests/test_fuzz.py --junitxml $S/junit.xml > $S/pytest.log 2>&1
tail -n 1 $S/pytest.log
A="--num-reqs 1,16,256,1024 --vocab 128256,151936 --budget-ms 20 --no-progress"
N="--backends numba --dtypes fp32,bf16,fp64 $A"
(cd .ab/base && timeout 80 python3 -m masks compare $N --out-dir $S/nb-base > $S/nb-base.txt 2>&1)
(cd .ab/mid && timeout 80 python3 -m masks compare $N --out-dir $S/nb-mid > $S/nb-mid.txt 2>&1)
PYTHONPATH=$P timeout 80 python3 -m masks compare $N --out-dir $S/nb-new > $S/nb-new.txt 2>&1
T="--backends triton --dtypes fp32,bf16 $A"
(cd .ab/head && timeout 60 python3 -m masks compare $T --out-dir $S/tr-head > $S/tr-head.txt 2>&1)
PYTHONPATH=$P timeout 60 python3 -m masks compare $T --out-dir $S/tr-new > $S/tr-new.txt 2>&1
python3 benchmarks/ab_table.py $S/nb-base/compare.json $S/nb-mid/compare.json > $S/ab-numba-base-mid.md
python3 benchmarks/ab_table.py $S/nb-base/compare.json $S/nb-new/compare.json > $S/ab-numba-base-new.md
python3 benchmarks/ab_table.py $S/tr-head/compare.json $S/tr-new/compare.json > $S/ab-triton.md
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s; rm -rf $S/nb-* $S/tr-*
for f in $S/ab-*.md; do echo $f; grep -E "\| (16|256|1024) \| 151936" $f | cut -d'|' -f2-9; done
