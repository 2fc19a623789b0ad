# Run 4 (session 2026-12-02-s2): the whole test suite natively on CUDA again, on the final package
# (run 3's pytest ran into its 330 s timeout at ~80%), with per-test durations and a longer limit.
S=$OUT/run-4; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s12run4.sh $S/command.sh
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())") >> $S/env.txt
PYTHONPATH=$P timeout 540 python3 -m pytest -v -rs -p no:cacheprovider tests --durations=25 --junitxml $S/junit.xml > $S/pytest.log 2>&1
echo "pytest rc $?" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-4
cat $S/env.txt; tail -n 45 $S/pytest.log
