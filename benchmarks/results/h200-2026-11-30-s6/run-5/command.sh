python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S
A="--backends triton:fused --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
for v in head w16; do
(cd .ab/$v && python3 -c "from masks.compare import code_fingerprint; print('$v code_sha256', code_fingerprint())" >> $S/env.txt; timeout 100 python3 -m masks compare $A --out-dir $S/$v > $S/$v.txt 2>&1)
done
python3 benchmarks/ab_table.py $S/head/compare.json $S/w16/compare.json > $S/ab-head-w16.md
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT s
grep -E "\| (256|512|1024) \|" $S/ab-head-w16.md | cut -d'|' -f3-9
