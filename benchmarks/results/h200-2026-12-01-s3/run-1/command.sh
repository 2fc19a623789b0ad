# Device run 1 (session 2026-12-01-s3): Numba, four trees interleaved twice at R >= 256 (fused):
# nbase = HEAD (4a94cfd), swar (pass 1 tests a word's elements at once), quad (pass 2 loads four
# mask words by one 16-byte load), both; split at R = 1/4/16 for nbase and swar (quad does not
# touch split); then the GPU Numba tests on the quad and both trees.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; cp .ab/run1.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
A="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
B="--num-reqs 1,4,16 --vocab 151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; timeout 100 python3 -m masks compare --backends $3 $4 --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do
  for t in nbase swar quad both; do run $t $t-$round numba:fused "$A"; done
  for t in nbase swar; do run $t split-$t-$round numba:split "$B"; done
done
for t in quad both; do (cd .ab/$t && timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests -k numba > $S/pytest-$t.txt 2>&1); done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
python3 - <<'PY'
import json,os,math
S=os.environ['OUT']+'/s'
def load(n):
    try: d=json.load(open(f'{S}/{n}/compare.json'))
    except Exception as e: print(n, 'missing', e); return {}
    return {(r['num_reqs'],r['vocab_size'],r['dtype'],r['support']):r for r in d['results'] if r['status']=='ok' and not r['emulated']}
for pre, trees in (('', ('swar','quad','both')), ('split-', ('swar',))):
  for rnd in (1,2):
    A=load(f'{pre}nbase-{rnd}')
    for t in trees:
      B=load(f'{pre}{t}-{rnd}')
      for dt in ('float32','bfloat16'):
        ks=[k for k in A if k[2]==dt and k in B]
        if not ks: continue
        rat=[B[k]['device_time_us']/A[k]['device_time_us'] for k in ks]
        print(pre or 'fused ', rnd, t, dt, len(ks), 'geomean', round(math.exp(sum(map(math.log,rat))/len(rat)),4), 'min/max', round(min(rat),3), round(max(rat),3), 'below80', sum(A[k]['pct_of_ceiling']<80 for k in ks), sum(B[k]['pct_of_ceiling']<80 for k in ks))
PY
cat $S/times.txt; for t in quad both; do tail -2 $S/pytest-$t.txt; done
