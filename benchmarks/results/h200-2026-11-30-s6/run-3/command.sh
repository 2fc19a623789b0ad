python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD
A="--backends triton:fused --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
for v in base warp warp64 slot slot64; do
(cd .ab/$v && python3 -c "from masks.compare import code_fingerprint; print('$v code_sha256', code_fingerprint())" >> $S/env.txt; timeout 100 python3 -m masks compare $A --out-dir $S/$v > $S/$v.txt 2>&1)
done
for v in warp warp64 slot slot64; do python3 benchmarks/ab_table.py $S/base/compare.json $S/$v/compare.json > $S/ab-base-$v.md; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
python3 - <<'PY'
import json,os
S=os.environ['OUT']+'/s'
vs=['base','warp','warp64','slot','slot64']
d={v:{(r['num_reqs'],r['vocab_size'],r['dtype'],r['support']):r['device_time_us'] for r in json.load(open(f'{S}/{v}/compare.json'))['results'] if r.get('device_time_us')} for v in vs}
print('R V dtype support', *vs)
for k in sorted(d['base']):
    print(*k, *[f"{d[v].get(k,0):.1f}" for v in vs])
PY
