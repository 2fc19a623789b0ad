# Run 5 (session 2026-12-03-s2): after the review commit, whose test of the warp intrinsics draws
# the sum's values from the scan's generator: the Numba intrinsic tests natively (hardware form
# against simulator-safe form), committed package.
S=$OUT/run-5; mkdir -p $S; R=$PWD; cp .ab/s25run5.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $S/env.txt
s=$SECONDS; (cd /tmp && PYTHONPATH=/tmp/site:$R timeout 120 python3 -m pytest -q -rs -p no:cacheprovider --rootdir $R $R/tests/test_numba_backend.py -k "intrinsic or hardware_form" > $S/tests-numba.txt 2>&1); echo "tests rc $? $((SECONDS-s)) s" >> $S/env.txt
cat $S/env.txt; tail -4 $S/tests-numba.txt
