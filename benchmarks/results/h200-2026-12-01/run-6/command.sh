python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
A="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   timeout 80 python3 -m masks compare --backends $3 $A --out-dir $S/$2 > $S/$2.txt 2>&1); }
run final cupy-final cupy:fused
run t256 cupy-t256 cupy:fused
run final numba-final numba:fused
run nbs2 numba-nbs2 numba:fused
run nbw2 numba-nbw2 numba:fused
MASKS_NUMBA_LAUNCH=256,128,16 run final numba-t256 numba:fused
for v in cupy-t256; do python3 benchmarks/ab_table.py $S/cupy-final/compare.json $S/$v/compare.json > $S/ab-$v.md; done
for v in numba-nbs2 numba-nbw2 numba-t256; do python3 benchmarks/ab_table.py $S/numba-final/compare.json $S/$v/compare.json > $S/ab-$v.md; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
python3 - <<'PY'
import json,os,math
S=os.environ['OUT']+'/s'
for a,bs in (('cupy-final',['cupy-t256']),('numba-final',['numba-nbs2','numba-nbw2','numba-t256'])):
    A={(r['num_reqs'],r['vocab_size'],r['dtype'],r['support']):r for r in json.load(open(f'{S}/{a}/compare.json'))['results'] if r['status']=='ok'}
    for b in bs:
        B={(r['num_reqs'],r['vocab_size'],r['dtype'],r['support']):r for r in json.load(open(f'{S}/{b}/compare.json'))['results'] if r['status']=='ok'}
        rat=[B[k]['device_time_us']/A[k]['device_time_us'] for k in A]
        print(b, 'geomean ratio', round(math.exp(sum(map(math.log,rat))/len(rat)),4), 'min/max', round(min(rat),3), round(max(rat),3), 'below80', sum(A[k]['pct_of_ceiling']<80 for k in A), sum(B[k]['pct_of_ceiling']<80 for k in A))
PY
