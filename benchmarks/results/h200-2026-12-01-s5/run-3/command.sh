# Device run 3 (session 2026-12-01-s5): the final package -- the full default grid, then the
# whole test suite natively on CUDA.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s5run3.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
git log -1 --format="commit %H" >> $S/env.txt 2>/dev/null; PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 230 python3 -m masks compare --out-dir $S/final --time-limit-s 200 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md; tar -czf $OUT/s.tgz -C $OUT s
PYTHONPATH=$P timeout 330 python3 -m pytest -q -rs -p no:cacheprovider tests --junitxml $S/junit.xml > $S/pytest.log 2>&1
echo "pytest rc $?" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT s
cat $S/summary.md; tail -n 3 $S/final.err; tail -n 3 $S/pytest.log; cat $S/env.txt
