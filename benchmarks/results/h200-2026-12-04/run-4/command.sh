# Run 4 (session 2026-12-04): after the review's test fixes (a stream still busy when a call
# returns; compile bounds below the number of shapes, per variant; the emulations' clustered
# runs inside their rows; the default width; the emulation switches left as the run set them):
# the whole test suite natively on CUDA, with the reliability log.
S=$OUT/run-4; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s27run4.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; MASKS_RELIABILITY_LOG=$S/reliability.jsonl PYTHONPATH=$P timeout 520 python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
grep -E "busy|shapes_do_not|kernel_bounds" $S/reliability.jsonl > /dev/null; PYTHONPATH=$P python3 -c "
import json
for line in open('$S/reliability.jsonl'):
    r = json.loads(line)
    if 'shapes_do_not' in r['test']: print(r['test'].split('::')[-1], r['kernels_compiled'], r['calls_that_compiled'])
" > $S/compile_counts.txt
tar -czf $OUT/s.tgz -C $OUT run-4
grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; cat $S/compile_counts.txt; cat $S/env.txt
