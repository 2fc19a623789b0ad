# Run 3 (session 2026-12-02-s5): the review's defects, before and after. First the new and
# changed GPU tests (a thread whose first CUDA work is a call; a first call under sync debug
# mode; first calls during a graph capture) run against HEAD's package (.ab/ta = 22bdd91's
# masks/), where they are expected to fail; then the whole test suite natively on CUDA on the
# working tree's package (the fixes).
S=$OUT/run-3; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s15run3.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
for t in ta; do (cd .ab/$t && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())" >> $S/env.txt); done
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('new code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; (cd .ab/ta && cp -r $R/tests $R/pyproject.toml . && PYTHONPATH=/tmp/site:$PWD:$PWD/tests timeout 150 python3 -m pytest -q -rs -p no:cacheprovider tests/test_gpu_reliability.py -k "first_cuda_work or no_host_synchronisation or first_call_during_graph_capture" > $S/pytest-head.log 2>&1; echo "head pytest rc $? $((SECONDS-s)) s" >> $S/env.txt; rm -rf tests pyproject.toml)
s=$SECONDS; PYTHONPATH=$P timeout 360 python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-3
grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest-head.log | tail -n 30; grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; cat $S/env.txt
