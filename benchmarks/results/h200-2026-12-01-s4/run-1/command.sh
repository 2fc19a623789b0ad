# Device run 1 (session 2026-12-01-s4): where cupy:fused's time goes at one wave of rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/run1.sh $S/command.sh; cp .ab/decompose.py $S/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 300 python3 .ab/decompose.py $S/decompose.json 2>&1 | tee $S/decompose.txt
tar -czf $OUT/s.tgz -C $OUT s
