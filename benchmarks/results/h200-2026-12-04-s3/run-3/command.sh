# Run 3 (session 2026-12-04-s3): the final package: benchmarks/host_step.py (three of its six shapes), then
# the whole test suite natively on CUDA.
S=$OUT/run-3; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s29run3.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; (cd benchmarks && PYTHONPATH=$P timeout 110 python3 host_step.py --shapes 64x151936,512x151936,1024x262144 --out $S/host_step.json > $S/host_step.txt 2>&1)
echo "host_step rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-3
s=$SECONDS; PYTHONPATH=$P timeout $((585-SECONDS)) python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-3
cat $S/host_step.txt | tail -n 14; grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; cat $S/env.txt
