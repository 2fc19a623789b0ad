# Device run 9 (session 2026-12-01-s4): the clustered-support conformance cases (with the review's
# additions: 16-byte-aligned rows, runs of 256 and 257 ids after 100 in the first warp's range)
# for every backend and variant, natively on CUDA, on the final package.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/run9.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 200 python3 -m pytest -v -rs -p no:cacheprovider tests/test_conformance.py -k clustered > $S/pytest-clustered.log 2>&1
echo "pytest rc $?" >> $S/env.txt; tar -czf $OUT/s.tgz -C $OUT s
tail -n 3 $S/pytest-clustered.log; grep -c PASSED $S/pytest-clustered.log; cat $S/env.txt
