# Run 4 (session 2026-12-04-s2): after a reread folded the spin-then-call checks into one test
# helper (conftest.returns_while_the_stream_spins) and the trace test onto _decode_step: the
# host-step and stream tests natively.
S=$OUT/run-4; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s28run4.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 300 python3 -m pytest -v -rs -p no:cacheprovider tests/test_csr.py tests/test_gpu_reliability.py -k "csr or stream or synchronisation" > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
grep -E "FAILED|ERROR|passed|failed" $S/pytest.log | tail -n 10; cat $S/env.txt
