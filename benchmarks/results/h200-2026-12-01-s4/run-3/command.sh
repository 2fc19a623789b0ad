# Device run 3: cupy:fused variants at one wave of rows (decompose2.py), interleaved 5 rounds;
# then HEAD (.ab/cbase) against the working tree in masks compare, run from inside each tree.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; cp .ab/run3.sh $S/command.sh; cp .ab/decompose2.py $S/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=/tmp/site:$R timeout 200 python3 .ab/decompose2.py $S/decompose2.json 2>&1 | tee $S/decompose2.txt
tar -czf $OUT/s.tgz -C $OUT s
