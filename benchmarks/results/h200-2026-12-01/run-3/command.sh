python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
A="--backends cupy:fused --num-reqs 256,512 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
for pass in 1 2; do for v in base quad new; do
  (cd .ab/$v && [ $pass = 1 ] && python3 -c "from masks.compare import code_fingerprint; print('$v code_sha256', code_fingerprint())" >> $S/env.txt
   timeout 60 python3 -m masks compare $A --out-dir $S/$v-$pass > $S/$v-$pass.txt 2>&1)
done; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
python3 - <<'PY'
import json,os,math
S=os.environ['OUT']+'/s'
runs=[f'{v}-{p}' for p in (1,2) for v in ('base','quad','new')]
d={r:{(x['num_reqs'],x['vocab_size'],x['dtype'],x['support']):x['device_time_us'] for x in json.load(open(f'{S}/{r}/compare.json'))['results'] if x['status']=='ok'} for r in runs}
ks=sorted(d['base-1'])
print('R V dtype support', *runs)
for k in ks: print(*k, *[f"{d[r][k]:.1f}" for r in runs])
print('geomean', *[f"{math.exp(sum(math.log(d[r][k]) for k in ks)/len(ks)):.2f}" for r in runs])
PY
