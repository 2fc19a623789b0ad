# Device run 2: cupy:fused ranking in pass 1 (working tree) -- the GPU CuPy tests, then an
# interleaved A/B of cupy:fused at R >= 256 against HEAD 0ebbccc's package (.ab/cbase).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/run2.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
for t in cbase; do PYTHONPATH=/tmp/site:$R/.ab/$t python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())" >> $S/env.txt; done
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('new code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 250 python3 -m pytest -q -rs -p no:cacheprovider tests -k "cupy" -x > $S/pytest-cupy.log 2>&1
echo "pytest rc $?" >> $S/env.txt; tail -n 3 $S/pytest-cupy.log
G="--backends cupy:fused --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
for i in 1 2; do
  PYTHONPATH=/tmp/site:$R/.ab/cbase timeout 80 python3 -m masks compare $G --out-dir $S/cbase-$i > $S/cbase-$i.txt 2>&1
  PYTHONPATH=$P timeout 80 python3 -m masks compare $G --out-dir $S/new-$i > $S/new-$i.txt 2>&1
  python3 benchmarks/ab_table.py $S/cbase-$i/compare.json $S/new-$i/compare.json > $S/ab-$i.md
done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
cat $S/env.txt; cat $S/ab-1.md | head -70
