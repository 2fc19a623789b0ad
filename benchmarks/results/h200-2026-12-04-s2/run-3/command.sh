# Run 3 (session 2026-12-04-s2): after the last test edits (a thread test of PendingCSR.wait's
# shared side stream; test_csr.py's helper renamed): the host-step and stream tests natively.
S=$OUT/run-3; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s28run3.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 300 python3 -m pytest -v -rs -p no:cacheprovider tests/test_csr.py tests/test_gpu_reliability.py -k "csr or stream or synchronisation" > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
grep -E "PASSED|FAILED|ERROR|passed|failed" $S/pytest.log | tail -n 40; cat $S/env.txt
