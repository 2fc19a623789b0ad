# Device run 4 (session 2026-12-01-s3): the full default grid again, on the committed package
# (169cd44), to see how much a second grid on another machine start moves the figures.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/run4.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 230 python3 -m masks compare --out-dir $S/final --time-limit-s 200 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
rm -f $S/*/*.png; python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md; tar -czf $OUT/s.tgz -C $OUT s
cat $S/summary.md; tail -n 3 $S/final.err
