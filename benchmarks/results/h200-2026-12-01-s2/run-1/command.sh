python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
A="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   timeout 100 python3 -m masks compare --backends $3 $A --out-dir $S/$2 > $S/$2.txt 2>&1); }
for round in 1 2; do
  for t in tbase tB tA tA16 tB16; do run $t $t-$round triton:fused; done
done
(cd .ab/tbase && timeout 60 python3 -m masks compare --backends triton:split --num-reqs 1,4,16,64 --vocab 151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress --out-dir $S/split-tbase > $S/split-tbase.txt 2>&1)
(cd .ab/tA && timeout 60 python3 -m masks compare --backends triton:split --num-reqs 1,4,16,64 --vocab 151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress --out-dir $S/split-tA > $S/split-tA.txt 2>&1)
timeout 200 python3 -m pytest -q -x tests/test_triton_backend.py tests/test_conformance.py tests/test_fuzz.py -k triton > $S/pytest-tA.txt 2>&1
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
python3 - <<'PY'
import json,os,math
S=os.environ['OUT']+'/s'
def load(n):
    return {(r['num_reqs'],r['vocab_size'],r['dtype'],r['support']):r for r in json.load(open(f'{S}/{n}/compare.json'))['results'] if r['status']=='ok'}
for rnd in (1,2):
    A=load(f'tbase-{rnd}')
    for b in ('tB','tA','tA16','tB16'):
        B=load(f'{b}-{rnd}')
        rat=[B[k]['device_time_us']/A[k]['device_time_us'] for k in A]
        print(rnd, b, 'geomean', round(math.exp(sum(map(math.log,rat))/len(rat)),4), 'min/max', round(min(rat),3), round(max(rat),3), 'below80', sum(A[k]['pct_of_ceiling']<80 for k in A), sum(B[k]['pct_of_ceiling']<80 for k in A), 'min%', round(min(B[k]['pct_of_ceiling'] for k in B),1))
A=load('split-tbase'); B=load('split-tA')
for k in sorted(A): print('split', k, round(A[k]['device_time_us'],2), round(B[k]['device_time_us'],2))
PY
tail -3 $S/pytest-tA.txt
