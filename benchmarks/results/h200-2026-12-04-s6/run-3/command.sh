# Run 3 (session 2026-12-04-s6): the final package (Numba simulator change and docstring fixes after run 1) whole test suite natively on CUDA.
S=$OUT/run-3; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s32run3.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 570 python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-3
grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; grep -c SKIPPED $S/pytest.log; cat $S/env.txt
