# Run 4 (session 2026-12-01-s8): the whole test suite natively on CUDA, final package.
S=$OUT/run-4; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s8run4.sh $S/command.sh
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())") >> $S/env.txt
PYTHONPATH=$P timeout 540 python3 -m pytest -q -rs -p no:cacheprovider tests --junitxml $S/junit.xml > $S/pytest.log 2>&1
echo "pytest rc $?" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-4; tail -n 25 $S/pytest.log; cat $S/env.txt
