# Device run 5: cupy:fused variants (decompose4.py: pass-1 ranking with prefetch and a one-lane path), interleaved 5 rounds.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; cp .ab/run5.sh $S/command.sh; cp .ab/decompose4.py $S/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=/tmp/site:$R timeout 200 python3 .ab/decompose4.py $S/decompose4.json 2>&1 | tee $S/decompose4.txt
tar -czf $OUT/s.tgz -C $OUT s
