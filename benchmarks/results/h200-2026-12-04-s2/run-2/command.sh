# Run 2 (session 2026-12-04-s2): after PendingCSR.wait moved to a side stream (HEAD b920313), first
# the host-step GPU tests on a copy of the tree with the previous transfer.py (the new overlap
# test must fail there: it can fail), then tests/test_csr.py natively, the whole suite, and the
# host step benchmark (csr / seed-style / old paths), then the csr path of the previous
# transfer.py at one shape for the synchronous cost of the side stream.
S=$OUT/run-2; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s28run2.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
rm -rf /tmp/before && mkdir /tmp/before && cp -r masks tests benchmarks pyproject.toml /tmp/before/ && cp .ab/transfer_before_side_stream.py /tmp/before/masks/transfer.py
(cd /tmp/before && PYTHONPATH=/tmp/site:/tmp/before timeout 120 python3 -m pytest -v -p no:cacheprovider tests/test_csr.py -k "cuda" > $S/pytest-csr-before.log 2>&1; echo "pytest csr before rc $?" >> $S/env.txt)
s=$SECONDS; PYTHONPATH=$P timeout 90 python3 -m pytest -v -rs -p no:cacheprovider tests/test_csr.py > $S/pytest-csr.log 2>&1
echo "pytest csr rc $? $((SECONDS-s)) s" >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 330 python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-2
s=$SECONDS; (cd benchmarks && PYTHONPATH=$P timeout $((560-SECONDS)) python3 host_step.py --out $S/host_step.json > $S/host_step.txt 2>&1); echo "host_step rc $? $((SECONDS-s)) s" >> $S/env.txt
s=$SECONDS; (cd /tmp/before/benchmarks && PYTHONPATH=/tmp/site:/tmp/before timeout $((585-SECONDS)) python3 host_step.py --shapes 512x151936,64x151936 --out $S/host_step_before.json > $S/host_step_before.txt 2>&1); echo "host_step before rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-2
grep -E "PASSED|FAILED|passed|failed" $S/pytest-csr-before.log | tail -8; grep -E "passed|failed" $S/pytest-csr.log | tail -2; grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 8; cat $S/host_step.txt $S/host_step_before.txt; cat $S/env.txt
